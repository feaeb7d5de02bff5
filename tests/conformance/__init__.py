"""Answer-by-answer conformance with Apache Kafka: the same requests to a real Kafka 4.4 and
to fakebroker, both answers compared field by field after a written-down normaliser.

* ``corpus.py``: the requests (written from the wire tests' bodies, plus ``captured.jsonl``:
  what real clients sent, recorded by ``capture.py``), with placeholders for ids each broker
  picks.
* ``replay.py``: sends each request to both brokers in order and decodes both answers.
* ``normalise.py``: one function per thing Kafka leaves free (ids, ports, clocks, orders).
* ``compare.py``: field paths that differ, ``intended.toml`` (differences kept on purpose,
  with reasons) and the Markdown table.
* ``run.py``: one run; ``python -m tests.conformance`` writes CONFORMANCE.md;
  ``test_conformance.py`` fails on a difference that is not intended.
* ``test_divergences.py``: the divergences the run found and fakebroker fixed, each pinned
  down without a real Kafka.
"""
