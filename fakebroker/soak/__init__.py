"""The chaos soak, ``python -m fakebroker.soak --seconds N --seed S``: real clients against a
three-broker fake under a seeded schedule of faults and failures, and an invariant checker
over what they were told (``checker``), the schedule (``schedule``) and the run itself
(``workload``)."""
