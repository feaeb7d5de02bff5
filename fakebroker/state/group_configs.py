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
from fakebroker.state.configs import BOOLEAN, INT, LIST, STRING, ConfigDef

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
BY_NAME = {d.name: d for d in GROUP_CONFIGS}
# Group configs Kafka 4.4's GroupConfig.validateValues keeps within two broker configs, for
# ``kind.rest``: ``group.kind.min.rest`` to ``group.kind.max.rest`` (javap, measured: "... must
# be in the range 5000 to 15000 inclusive."); the share and streams groups' other bounded
# configs are checked by their modules.
WITHIN_BROKER_LIMITS = ("consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
                        "consumer.assignment.interval.ms", "share.assignment.interval.ms",
                        "streams.assignment.interval.ms")


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
        try:
            if not -2**31 <= int(value) < 2**31:
                raise ValueError(value)
        except ValueError:
            raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                               f"{name}: Not a number of type INT") from None
    if d.type == BOOLEAN and value.lower() not in ("true", "false"):
        raise ClusterError("INVALID_CONFIG", f"Invalid value {value} for configuration "
                           f"{name}: Expected value to be either true or false")
    if name in WITHIN_BROKER_LIMITS:
        kind, rest = name.split(".", 1)
        low, high = (int(broker_config(f"group.{kind}.{end}.{rest}")
                         or BROKER_CONFIGS[f"group.{kind}.{end}.{rest}"].default)
                     for end in ("min", "max"))
        share_groups.check_bounded(name, value, 0, low, high)
    share_groups.validate_group_config(name, value, settings)
    streams_groups.validate_group_config(name, value, streams_settings)
