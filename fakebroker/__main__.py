"""``python -m fakebroker serve ...`` — the same as the ``fakebroker`` command."""

import sys

from fakebroker.cli import main

sys.exit(main())
