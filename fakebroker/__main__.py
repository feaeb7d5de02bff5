"""``python -m fakebroker serve ...`` — the same as the ``fakebroker`` command."""

from fakebroker.cli import command

command()
