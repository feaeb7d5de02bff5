"""The client matrix: each real client through four rounds (produce, assign-consume, a 3-member
group, an admin round: tests/matrix/rounds.py) against the fake emulating a release
(``--kafka-version``) and against that release's Apache Kafka broker, cell for cell.

    python -m tests.matrix                      # every client, releases 3.9 and 4.4
    python -m tests.matrix --client 'Java kafka-clients 0.11.0.3' --release 4.4
    python -m tests.matrix --markdown docs/reference/client-matrix.md

A release's two columns must agree in every cell: the same outcome (``pass``, or the error
class the client names) on the fake answering as that release as on the real broker. The
program prints the table and exits 1 when a cell differs (or a client is missing under
``CI=true``). tests/test_matrix.py runs a few cells in the suite.
"""

from tests.matrix.clients import CLIENTS, Client
from tests.matrix.rounds import ROUNDS, Outcome, run_cell
from tests.matrix.run import RELEASES, Matrix, run_matrix

__all__ = ["CLIENTS", "RELEASES", "ROUNDS", "Client", "Matrix", "Outcome", "run_cell",
           "run_matrix"]
