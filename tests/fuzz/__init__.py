"""Fuzzing the fake broker, with Apache Kafka as the judge.

Mutations of valid requests (the conformance corpus: tests/conformance/corpus.py) and of
their bytes (tests/fuzz/mutations.py) go through the broker in two modes:

* in-process (tests/fuzz/inprocess.py): through one broker's pipeline without sockets,
  coverage-guided, fast enough for runs of millions of inputs; a crash (an exception, a
  traceback logged, an answer that does not decode) is checked over TCP on a running broker
  (tests/fuzz/socket_check.py): only its own connection may be harmed;
* differential (tests/fuzz/differential.py): the same seeded mutations over TCP to the fake
  and to Apache Kafka 4.4.0, their outcomes compared (connection closed, or the answer's
  error codes); the differences kept on purpose are in tests/fuzz/differences.toml.

``python -m tests.fuzz`` runs either (tests/fuzz/__main__.py); tests/test_fuzz.py runs a short
seeded slice of each and the crashes found as regression tests.
"""
