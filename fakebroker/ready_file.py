"""The ready file: the ``--ready-file FILE`` setting of ``fakebroker serve`` and ``fakebroker
kafka serve``, and how either writes it: JSON, whole or not at all (a temporary file beside
it renamed over it), its failures one ``OSError`` or ``OptionError`` naming the flag."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fakebroker.options import OptionError, Setting

READY_FILE = Setting("ready_file", Path, "write connection details here as JSON",
                     metavar="FILE")
READY_FILE_FLAG = READY_FILE.flag


def write_details(path: Path, details: Mapping[str, Any], private: bool = False) -> None:
    """Write ``details`` as JSON to ``path`` through a temporary file beside it, renamed over
    it (a reader never sees half); ``private``: readable by its owner alone (mode 0600). On
    failure, an ``OSError`` naming the ready file's flag, and no temporary file left
    behind."""
    import json  # only a run with a ready file needs it

    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # beside it: one rename
    mode = 0o600 if private else 0o666
    try:
        temporary.unlink(missing_ok=True)  # created afresh, so with the mode asked for below
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with open(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps(details, indent=2) + "\n")
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise OSError(exc.errno, f"{READY_FILE_FLAG}: cannot write {path}: {exc.strerror}"
                      ) from None


def check_ready_file(path: Path) -> None:
    """``OptionError`` (naming the flag) for a ready file that surely cannot be written: a
    directory, or in a directory that does not exist."""
    if path.is_dir():
        raise OptionError(f"{READY_FILE_FLAG}: {path} is a directory")
    if not path.parent.is_dir():
        raise OptionError(f"{READY_FILE_FLAG}: cannot write {path}: no directory "
                          f"{path.parent}")
