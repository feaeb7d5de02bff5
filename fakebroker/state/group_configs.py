"""Kafka 4.4's group configs (the GROUP config resource: IncrementalAlterConfigs,
DescribeConfigs), each with its default, type and the broker config backing it, in the order
Kafka 4.4 describes them (measured).

Values set on a group are kept by the share group coordinator
(``ShareGroupCoordinator.configs``, by group id; a group need not exist to have them) and
checked by ``check``: the ``share.*`` and ``streams.*`` ones within the broker's limits as
Kafka checks them (``validate_group_config`` of ``fakebroker.state.share_groups`` and
``fakebroker.state.streams_groups``), those of ``WITHIN_BROKER_LIMITS`` within the broker
configs bounding them, the others by type only. Consumer, share and streams groups read them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fakebroker.options import BROKER_CONFIGS
from fakebroker.protocol.errors import ClusterError
from fakebroker.state.configs import BOOLEAN, INT, LIST, LONG, STRING, ConfigDef

if TYPE_CHECKING:
    from fakebroker.state.share_groups import ShareSettings
    from fakebroker.state.streams_groups import StreamsSettings

# DescribeConfigs' ConfigSource of a value set on the group.
DYNAMIC_GROUP_CONFIG = 8

GROUP_CONFIGS: tuple[ConfigDef, ...] = (
    ConfigDef("consumer.session.timeout.ms", "45000", INT,
              synonym="group.consumer.session.timeout.ms"),
    ConfigDef("streams.assignor.name", "sticky", STRING, synonym="group.streams.assignors"),
    ConfigDef("consumer.assignment.interval.ms", "1000", INT,
              synonym="group.consumer.assignment.interval.ms"),
    ConfigDef("errors.deadletterqueue.copy.record.enable", "false", BOOLEAN,
              synonym="errors.deadletterqueue.copy.record.enable"),
    ConfigDef("share.auto.offset.reset", "latest", STRING, synonym="share.auto.offset.reset"),
    ConfigDef("streams.rack.aware.assignment.tags", "", LIST,
              synonym="group.streams.rack.aware.assignment.tags"),
    ConfigDef("share.renew.acknowledge.enable", "true", BOOLEAN,
              synonym="share.renew.acknowledge.enable"),
    ConfigDef("streams.initial.rebalance.delay.ms", "3000", INT,
              synonym="group.streams.initial.rebalance.delay.ms"),
    ConfigDef("share.session.timeout.ms", "45000", INT,
              synonym="group.share.session.timeout.ms"),
    ConfigDef("streams.assignment.interval.ms", "1000", INT,
              synonym="group.streams.assignment.interval.ms"),
    ConfigDef("share.heartbeat.interval.ms", "5000", INT,
              synonym="group.share.heartbeat.interval.ms"),
    ConfigDef("streams.heartbeat.interval.ms", "5000", INT,
              synonym="group.streams.heartbeat.interval.ms"),
    ConfigDef("share.delivery.count.limit", "5", INT,
              synonym="group.share.delivery.count.limit"),
    ConfigDef("errors.deadletterqueue.topic.name", "", STRING,
              synonym="errors.deadletterqueue.topic.name"),
    ConfigDef("consumer.heartbeat.interval.ms", "5000", INT,
              synonym="group.consumer.heartbeat.interval.ms"),
    ConfigDef("share.record.lock.duration.ms", "30000", INT,
              synonym="group.share.record.lock.duration.ms"),
    ConfigDef("share.assignment.interval.ms", "1000", INT,
              synonym="group.share.assignment.interval.ms"),
    ConfigDef("share.isolation.level", "read_uncommitted", STRING,
              synonym="share.isolation.level"),
    ConfigDef("streams.session.timeout.ms", "45000", INT,
              synonym="group.streams.session.timeout.ms"),
    ConfigDef("share.partition.max.record.locks", "2000", INT,
              synonym="group.share.partition.max.record.locks"),
    ConfigDef("streams.num.standby.replicas", "0", INT,
              synonym="group.streams.num.standby.replicas"),
)
# Kafka 4.4's internal group configs (ConfigDef.defineInternal): taken, and described only
# once set on the group (first, in the order set; measured).
INTERNAL_GROUP_CONFIGS: tuple[ConfigDef, ...] = (
    ConfigDef("consumer.assignor.offload.enable", "true", BOOLEAN,
              synonym="group.consumer.assignor.offload.enable"),
    ConfigDef("share.assignor.offload.enable", "true", BOOLEAN,
              synonym="group.share.assignor.offload.enable"),
    ConfigDef("streams.assignor.offload.enable", "true", BOOLEAN,
              synonym="group.streams.assignor.offload.enable"),
    ConfigDef("streams.task.offset.interval.ms", "60000", INT,
              synonym="group.streams.task.offset.interval.ms"),
    ConfigDef("streams.num.warmup.replicas", "2", INT,
              synonym="group.streams.num.warmup.replicas"),
    ConfigDef("streams.acceptable.recovery.lag", "10000", LONG,
              synonym="group.streams.acceptable.recovery.lag"),
)
BY_NAME = {d.name: d for d in GROUP_CONFIGS + INTERNAL_GROUP_CONFIGS}
# Group configs Kafka 4.4's GroupConfig.validateValues keeps within two broker configs, for
# ``kind.rest``: ``group.kind.min.rest`` to ``group.kind.max.rest`` (javap, measured: "... must
# be in the range 5000 to 15000 inclusive."), with the least value their ConfigDef takes; the
# share and streams groups' other bounded configs are checked by their modules.
WITHIN_BROKER_LIMITS = {"consumer.heartbeat.interval.ms": 1, "consumer.session.timeout.ms": 1,
                        "consumer.assignment.interval.ms": 0,
                        "share.assignment.interval.ms": 0, "streams.assignment.interval.ms": 0}
# Internal group configs bounded on one side by a broker config: (least value, the broker
# config, whether it is the minimum), as validateIntMin and validateIntMax (measured).
ONE_SIDED = {"streams.task.offset.interval.ms": (1, "group.streams.min.task.offset.interval.ms",
                                                 True),
             "streams.num.warmup.replicas": (0, "group.streams.max.warmup.replicas", False)}


def check(name: str, value: str, settings: ShareSettings,
          streams_settings: StreamsSettings,
          broker_config: Callable[[str], str | None] = lambda name: None) -> None:
    """INVALID_CONFIG (``ClusterError``) with Kafka's text for a value the group config
    ``name`` cannot take (within the broker's limits: ``settings``, ``streams_settings`` and
    the broker configs ``broker_config`` gives, None for Kafka's default), or for a name that
    is no group config."""
    from fakebroker.state import share_groups, streams_groups

    d = BY_NAME.get(name)
    if d is None:
        raise ClusterError("INVALID_CONFIG", f"Unknown group config name: {name}")
    if d.type == INT:
        share_groups.check_int(name, value, -2**31)
    if d.type == BOOLEAN and value.lower() not in ("true", "false"):
        raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                           f"{name}: Expected value to be either true or false")

    if name in WITHIN_BROKER_LIMITS:
        kind, rest = name.split(".", 1)
        share_groups.check_bounded(name, value, WITHIN_BROKER_LIMITS[name],
                                   broker_int(f"group.{kind}.min.{rest}", broker_config),
                                   broker_int(f"group.{kind}.max.{rest}", broker_config))
    elif name in ONE_SIDED:
        least, broker_name, is_minimum = ONE_SIDED[name]
        number = share_groups.check_int(name, value, least)
        bound = broker_int(broker_name, broker_config)
        if is_minimum and number < bound:
            raise ClusterError("INVALID_CONFIG",
                               f"{name} must be greater than or equal to {bound}")
        if not is_minimum and number > bound:
            raise ClusterError("INVALID_CONFIG", f"{name} must be less than or equal to {bound}")
    elif d.type == LONG:  # streams.acceptable.recovery.lag: at least 0
        share_groups.check_int(name, value, 0, bits=64)
    share_groups.validate_group_config(name, value, settings)
    streams_groups.validate_group_config(name, value, streams_settings)


def check_session_exceeds_heartbeat(configs: dict[str, str],
                                    broker_config: Callable[[str], str | None]) -> None:
    """After each config's own checks: INVALID_CONFIG (``ClusterError``) when a group's
    consumer, share or streams session timeout (set on it, else the broker's) is not above
    its heartbeat interval (likewise), one of the two being set on it, as Kafka 4.4's
    GroupConfig.validateSessionExceedsHeartbeat (javap, measured)."""
    for kind in ("consumer", "share", "streams"):
        session, heartbeat = f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms"
        if session not in configs and heartbeat not in configs:
            continue
        values = [int(configs[n]) if n in configs else broker_int(f"group.{n}", broker_config)
                  for n in (session, heartbeat)]
        if values[0] <= values[1]:
            raise ClusterError("INVALID_CONFIG", f"{session} must be greater than {heartbeat}")


def broker_int(name: str, broker_config: Callable[[str], str | None]) -> int:
    """The broker's integer config ``name``: as set (``broker_config``), else Kafka's default."""
    return int(broker_config(name) or BROKER_CONFIGS[name].default or 0)
