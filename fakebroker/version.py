"""The release of fakebroker: the one place its version is written (the build reads it)."""

__version__ = "0.2.0"
