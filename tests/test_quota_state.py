"""The quota store and its rates as plain objects, on a clock the test moves
(``fakebroker.state.quotas``): Kafka's order of precedence between quota entities, and
Kafka's ``Rate`` and throttle time (``ClientQuotaManager``, KIP-219) to the millisecond."""

from __future__ import annotations

from fakebroker.state.quotas import ClientQuotas, Rate, TokenBucket

PRODUCE = "producer_byte_rate"


def quotas_with(*entities: tuple[tuple[tuple[str, str | None], ...], float]) -> ClientQuotas:
    quotas = ClientQuotas()
    results = quotas.alter([(entity, [(PRODUCE, value)]) for entity, value in entities])
    assert all(refusal is None for _, refusal in results)
    return quotas


def test_the_most_specific_entity_set_holds_a_client_in_kafkas_order() -> None:
    user_client = (("client-id", "app"), ("user", "alice"))
    user_default_client = (("client-id", None), ("user", "alice"))
    user = (("user", "alice"),)
    default_user_client = (("client-id", "app"), ("user", None))
    defaults = (("client-id", None), ("user", None))
    default_user = (("user", None),)
    client = (("client-id", "app"),)
    default_client = (("client-id", None),)
    order = [user_client, user_default_client, user, default_user_client, defaults,
             default_user, client, default_client]
    for held in range(len(order)):
        quotas = quotas_with(*((entity, float(i + 1)) for i, entity in
                               enumerate(order) if i >= held))
        assert quotas.quota(PRODUCE, "alice", "app") == (order[held], float(held + 1))
    assert quotas_with((client, 1.0)).quota(PRODUCE, "bob", "other") is None


def test_a_rate_assumes_ten_full_windows_until_it_has_them() -> None:
    rate = Rate()
    rate.record(10_000, now_ms=0)
    assert rate.window_ms(0) == 10_000
    assert rate.measure(0) == 1000.0
    rate.record(10_000, now_ms=10_500)  # the first sample is still in the window
    assert rate.window_ms(10_500) == 10_500
    assert rate.measure(10_500) == 20_000 / 10.5
    assert rate.measure(21_000) == 10_000 / 10.5  # the first one is gone: 11 s without events


def test_the_throttle_time_brings_the_rate_back_to_the_quota() -> None:
    quotas = quotas_with(((("client-id", "app"),), 10_000.0))
    enforcer = quotas.enforcer
    assert [enforcer.record(PRODUCE, "ANONYMOUS", "app", 10_000, 0) for _ in range(10)] \
        == [0] * 10  # 100 KB over the 10 s assumed: at the quota
    # 110 KB over 10 s: 11,000 B/s, 10% over: a tenth of the window.
    assert enforcer.record(PRODUCE, "ANONYMOUS", "app", 10_000, 0) == 1000
    # 100 ms later the window is 10.1 s: (110 KB / 10.1 s - quota) / quota x 10.1 s
    assert enforcer.record(PRODUCE, "ANONYMOUS", "app", 0, 100) == 900
    assert enforcer.record(PRODUCE, "ANONYMOUS", "other", 10_000, 100) == 0  # its own rate


def test_the_request_quotas_throttle_time_is_at_most_one_window() -> None:
    quotas = ClientQuotas()
    quotas.alter([((("user", "alice"),), [("request_percentage", 1.0)])])
    assert quotas.enforcer.record("request_percentage", "alice", "app", 100.0, 0) == 1000


def test_a_mutation_bucket_starts_full_and_refills_at_the_quota_up_to_11_seconds_of_it() -> None:
    bucket = TokenBucket()
    assert bucket.measure(2.0, now_ms=0) == 22.0  # 11 s x 2 a second
    bucket.record(2.0, 30, now_ms=0)
    assert bucket.tokens == -8.0
    assert bucket.measure(2.0, now_ms=1500) == -5.0
    assert bucket.measure(2.0, now_ms=60_000) == 22.0


def test_a_strict_mutation_quota_refuses_only_once_the_bucket_is_below_zero() -> None:
    quotas = ClientQuotas()
    quotas.alter([((("client-id", "app"),), [("controller_mutation_rate", 2.0)])])
    strict = quotas.enforcer.mutation_quota("ANONYMOUS", "app", strict=True)
    assert strict is not None
    assert [strict.admit(10, now_ms=0) for _ in range(3)] == [True, True, True]  # 22 -> -8
    assert (strict.admit(1, now_ms=0), strict.throttle_ms) == (False, 4000)
    assert (strict.admit(1, now_ms=1000), strict.throttle_ms) == (False, 3000)
    again = quotas.enforcer.mutation_quota("ANONYMOUS", "app", strict=True)
    assert again is not None and (again.admit(1, now_ms=4000), again.throttle_ms) == (True, 0)
    assert quotas.enforcer.mutation_quota("ANONYMOUS", "other", strict=True) is None


def test_a_permissive_mutation_quota_admits_all_and_throttles_by_the_overdraft() -> None:
    quotas = ClientQuotas()
    quotas.alter([((("user", None),), [("controller_mutation_rate", 4.0)])])
    permissive = quotas.enforcer.mutation_quota("alice", "app", strict=False)
    assert permissive is not None
    assert permissive.admit(40, now_ms=0) and permissive.throttle_ms == 0  # 44 -> 4
    assert permissive.admit(10, now_ms=0) and permissive.throttle_ms == 1500  # -6 at 4/s
    bob = quotas.enforcer.mutation_quota("bob", "app", strict=False)  # a bucket of his own
    assert bob is not None and bob.admit(44, now_ms=0) and bob.throttle_ms == 0


def test_a_connection_over_its_ips_rate_is_throttled_at_most_a_window_and_not_counted() -> None:
    quotas = ClientQuotas()
    quotas.alter([((("ip", "127.0.0.2"),), [("connection_creation_rate", 1.0)]),
                  ((("ip", None),), [("connection_creation_rate", 100.0)])])
    enforcer = quotas.enforcer
    assert [enforcer.connection(1, "127.0.0.2", now_ms=0) for _ in range(10)] == [0] * 10
    assert enforcer.connection(1, "127.0.0.2", now_ms=100) == 900  # 11 over 10.1 s, at 1/s
    assert enforcer.connection(1, "127.0.0.2", now_ms=1000) == 1000  # 11 over 10 s: 10% over
    assert enforcer.connection(2, "127.0.0.2", now_ms=1000) == 0  # another broker's count
    assert enforcer.connection(1, "127.0.0.3", now_ms=0) == 0  # the default: 100 a second
    assert quotas.connection_rate("10.0.0.1") == 100.0
