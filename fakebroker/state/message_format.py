"""The record format (magic) a topic's log stores, as the emulated Kafka release decides it,
and the topic configs of legacy formats: ``message.format.version``, which chose it before
3.0, and ``message.downconversion.enable``.

* No release emulated (the fake's union of 3.9 and 4.4), or 3.0 and later: magic 2. From 3.0
  an inter-broker protocol of 3.0 or later (every KRaft cluster) ignores the config (KIP-724);
  3.x still takes and describes it (measured on 3.9.1: default ``3.0-IV1``, a value set is
  listed as set and changes nothing), 4.x knows no such config (INVALID_CONFIG "Unknown topic
  config name: message.format.version", measured on 4.4.0).
* 0.10.0 to 2.8: the topic's version, else the release's own: magic 1 in 0.10.x, magic 2
  from 0.11. 0.8.x and 0.9.0 store magic 0, 0.10.x magic 1, later ones magic 2
  (``ApiVersion.recordVersion``). (A version newer than the cluster's inter-broker protocol,
  which Kafka 2.8's ``ConfigHandler.excludedConfigs`` ignores, cannot be set here: the
  emulated cluster's protocol is its release, and newer versions are unknown to it.)
* A version is one of the release's inter-broker protocol versions (``PROTOCOL_VERSIONS``,
  from Kafka 3.9's ``MetadataVersion``; a release knows those up to its own), in full
  (``2.8-IV1``) or short (``2.8``, ``0.10.2``; a longer one is cut to 2 parts, 3 from "0.":
  ``3.9.1`` is ``3.9``). The default is the release's newest (``ApiVersion.latestVersion``),
  ``3.0-IV1`` from 3.0. An unknown one is INVALID_CONFIG with Kafka's message, whose
  quoting changed in 3.3 (``MetadataVersion.fromVersionString``).
* ``message.downconversion.enable`` (KIP-283, 2.0 to 3.9; default true): false refuses a
  consumer's fetch that needs down-converted records (``fakebroker.api.fetch``).
"""

from __future__ import annotations

from fakebroker.protocol.releases import before

CONFIG = "message.format.version"
BROKER_CONFIG = "log.message.format.version"  # its broker synonym
FROM_3_0 = "3.0-IV1"  # the value every release from 3.0 describes by default
DOWN_CONVERSION_CONFIG = "message.downconversion.enable"
DOWN_CONVERSION_BROKER_CONFIG = "log.message.downconversion.enable"

# Each release line's inter-broker protocol versions, oldest first (Kafka 3.9's
# MetadataVersion; "" for the releases before 0.10, which had none).
PROTOCOL_VERSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0.8.0", ("",)), ("0.8.1", ("",)), ("0.8.2", ("",)), ("0.9.0", ("",)),
    ("0.10.0", ("IV0", "IV1")), ("0.10.1", ("IV0", "IV1", "IV2")), ("0.10.2", ("IV0",)),
    ("0.11.0", ("IV0", "IV1", "IV2")), ("1.0", ("IV0",)), ("1.1", ("IV0",)),
    ("2.0", ("IV0", "IV1")), ("2.1", ("IV0", "IV1", "IV2")), ("2.2", ("IV0", "IV1")),
    ("2.3", ("IV0", "IV1")), ("2.4", ("IV0", "IV1")), ("2.5", ("IV0",)), ("2.6", ("IV0",)),
    ("2.7", ("IV0", "IV1", "IV2")), ("2.8", ("IV0", "IV1")), ("3.0", ("IV0", "IV1")),
    ("3.1", ("IV0",)), ("3.2", ("IV0",)), ("3.3", ("IV0", "IV1", "IV2", "IV3")),
    ("3.4", ("IV0",)), ("3.5", ("IV0", "IV1", "IV2")), ("3.6", ("IV0", "IV1", "IV2")),
    ("3.7", ("IV0", "IV1", "IV2", "IV3", "IV4")), ("3.8", ("IV0",)), ("3.9", ("IV0",)),
)


def has_config(line: str | None) -> bool:
    """Whether a broker of release ``line`` knows ``message.format.version`` (before 4.0)."""
    return line is not None and before(line, "4.0")


def has_down_conversion_config(line: str | None) -> bool:
    """Whether a broker of release ``line`` knows ``message.downconversion.enable`` (2.0 to
    3.9)."""
    return has_config(line) and not before(line or "", "2.0")


def default(line: str) -> str:
    """What a topic of release ``line`` (before 4.0) describes when the config is not set."""
    if not before(line, "3.0"):
        return FROM_3_0
    return _full(line, dict(PROTOCOL_VERSIONS)[line][-1])


def complaint(line: str, value: str) -> str | None:
    """Kafka's reason (the text after "Invalid value ... for configuration ...: ") why
    ``value`` is not a version release ``line`` knows, or None."""
    version = _short(value)
    if version is not None and not before(line, version):
        return None
    quoted = value if not before(line, "3.3") else f"`{value}`"
    return f"Version {quoted} is not a valid version"


def log_magic(line: str | None, configs: dict[str, str]) -> int:
    """The magic a topic with ``configs`` stores its records in, at release ``line``."""
    if line is None or not before(line, "3.0"):
        return 2
    version = _short(configs.get(CONFIG, "")) or line  # set values are valid ones
    if before(version, "0.10.0"):
        return 0
    return 1 if before(version, "0.11.0") else 2


def _short(value: str) -> str | None:
    """The release line of version ``value`` (``"0.10.2"`` for ``"0.10.2-IV0"``), None when
    it names none."""
    parts = value.split(".")
    key = ".".join(parts[:3 if value.startswith("0.") else 2])
    for short, ivs in PROTOCOL_VERSIONS:
        if key == short or any(key == _full(short, iv) for iv in ivs if iv):
            return short
    return None


def _full(short: str, iv: str) -> str:
    return f"{short}-{iv}" if iv else short
