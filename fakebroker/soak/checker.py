"""The soak's invariant checker: a recorded history in, each invariant's violations out.

It knows nothing of sockets or clients: the soak records what its clients were told (delivery
reports, transaction outcomes, records read, offsets committed) and what the broker stores
at the end, and ``check`` compares them. Each record's value names it:
``PRODUCER/SEQUENCE/TXN`` (``TXN`` is ``-`` for an idempotent producer's record), and no
producer ever sends one sequence number twice, so a value stored twice is a duplicate.

The invariants, each counted (every count must be 0):

* ``acked_lost``: a record whose delivery report said it was written (and, for a
  transactional record, whose producer's ``commit_transaction`` returned) is not in the log
  at the partition and offset it was acknowledged at (anywhere in that partition when the
  report gave no offset), or is there but not committed.
* ``duplicates``: a record stored more than once, aborted transactions' records aside (each
  extra copy counts one).
* ``commits_backwards``: an offset commit, acknowledged by the coordinator, lower than the
  previous acknowledged commit of the same member for the same partition within one
  ownership of it (from the assignment that gave the partition to the member to its
  revocation or loss: one generation's assignment, or several generations' while the member
  keeps the partition, as cooperative and KIP-848 assignments keep it).
* ``read_committed_violations``: a record a read_committed consumer received whose
  transaction did not commit: its producer aborted it, or the log at the end holds it (at
  the offset it was read at; else its transaction's other records) as aborted or still
  open.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

INVARIANTS = ("acked_lost", "duplicates", "commits_backwards", "read_committed_violations")


def value_of(producer: str, sequence: int, txn: str | None) -> str:
    """The value a soak record carries: ``PRODUCER/SEQUENCE/TXN``."""
    return f"{producer}/{sequence}/{txn or '-'}"


def txn_of(value: str) -> str | None:
    """The transaction a record's value names, or None (an idempotent producer's)."""
    txn = value.rsplit("/", 1)[-1]
    return None if txn == "-" else txn


@dataclass(frozen=True, slots=True)
class Ack:
    """A delivery report that said a record was written at ``partition``/``offset``;
    ``offset`` None: written, at an offset the client was not told (librdkafka reports a
    retried batch so when a later batch's answer implies it was written)."""

    value: str
    partition: int
    offset: int | None


@dataclass(frozen=True, slots=True)
class Stored:
    """A record of the log at the end; ``transaction``: "committed", "aborted", "open" or
    None (not transactional)."""

    partition: int
    offset: int
    value: str
    transaction: str | None = None


@dataclass(frozen=True, slots=True)
class Read:
    """A record a read_committed consumer received."""

    reader: str
    partition: int
    offset: int
    value: str


@dataclass(frozen=True, slots=True)
class Commit:
    """An offset commit the coordinator acknowledged: ``ownership`` numbers the member's
    holding of the partition (a new number at each assignment of it)."""

    group: str
    member: str
    ownership: int
    partition: int
    offset: int


@dataclass
class History:
    """Everything the soak's clients were told, and the log at the end."""

    acks: list[Ack] = field(default_factory=list)
    # transaction id -> "committed" or "aborted", as its producer learned it; a transaction
    # whose outcome the producer could not learn (fenced mid-commit) is absent
    outcomes: dict[str, str] = field(default_factory=dict)
    stored: list[Stored] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)  # in the order acknowledged


@dataclass
class Verdict:
    """Each invariant's count of violations and up to ``EXAMPLES`` examples of each."""

    counts: dict[str, int]
    examples: dict[str, list[str]]

    @property
    def ok(self) -> bool:
        return not any(self.counts.values())


EXAMPLES = 5


def check(history: History) -> Verdict:
    """Count every invariant's violations in ``history``."""
    found: dict[str, list[str]] = {name: [] for name in INVARIANTS}
    at: dict[tuple[int, int | None], Stored] = {(s.partition, s.offset): s
                                                for s in history.stored}
    anywhere = {(s.partition, s.value): s for s in history.stored}

    for ack in history.acks:
        txn = txn_of(ack.value)
        if txn is not None and history.outcomes.get(txn) != "committed":
            continue  # not acknowledged as durable: its transaction did not commit
        stored = at.get((ack.partition, ack.offset)) if ack.offset is not None \
            else anywhere.get((ack.partition, ack.value))
        if stored is None or stored.value != ack.value:
            found["acked_lost"].append(f"{ack.value} acked at {ack.partition}/{ack.offset}, "
                                       f"stored there: {stored.value if stored else 'nothing'}")
        elif txn is not None and stored.transaction != "committed":
            found["acked_lost"].append(f"{ack.value} at {ack.partition}/{ack.offset} is "
                                       f"{stored.transaction} in the log, committed for its "
                                       "producer")

    copies = Counter(s.value for s in history.stored if s.transaction != "aborted")
    for value, n in copies.items():
        found["duplicates"] += [f"{value} stored {n} times"] * (n - 1)

    last: dict[tuple[str, str, int, int], int] = {}
    for c in history.commits:
        key = (c.group, c.member, c.ownership, c.partition)
        if key in last and c.offset < last[key]:
            found["commits_backwards"].append(f"{c.group} {c.member} partition {c.partition}: "
                                              f"{last[key]} then {c.offset}")
        last[key] = c.offset

    final: dict[str, str] = defaultdict(lambda: "open")
    for s in history.stored:
        txn = txn_of(s.value)
        if txn is not None and s.transaction is not None:
            final[txn] = s.transaction
    for r in history.reads:
        txn = txn_of(r.value)
        if txn is None:
            continue
        stored = at.get((r.partition, r.offset))
        in_log = stored.transaction if stored and stored.value == r.value else final[txn]
        outcome = history.outcomes.get(txn, "unknown")
        if outcome == "aborted" or in_log != "committed":
            found["read_committed_violations"].append(
                f"{r.reader} read {r.value} at {r.partition}/{r.offset}: its transaction is "
                f"{outcome} for its producer, {in_log} in the log")

    return Verdict({name: len(v) for name, v in found.items()},
                   {name: v[:EXAMPLES] for name, v in found.items()})
