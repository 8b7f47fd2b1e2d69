"""Trained classifiers kept on disk, so a new process reads a decision in milliseconds instead of training it.

Every process that understands words (daphne, each django-q2 worker, a management command, a test run) used to
encode a decision's whole exemplar bank and fit its model on first use: a second or two per decision on a quiet
machine, tens of seconds on a loaded one, paid by a person's first message after each start. The fitted parts are
pure functions of their inputs, so they are stored under a digest of everything they are made from — the bank's
texts and labels, the encoder's model id, the code that fits them and the library versions — and a changed bank,
model or code simply misses and fits again. A file that cannot be read (cut short, another library's pickle) is
fitted again and rewritten; a directory that cannot be written leaves the process with its model in memory.

The files are ours (written by this module, under the project's `var/` or LOMOTE_UNDERSTANDING_CACHE), never a
person's upload, so unpickling them is safe.
"""

import hashlib
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

FORMAT = 1  # bumped when what is stored changes shape
_LIBRARIES = ("scikit-learn", "scipy", "numpy")


def cache_dir() -> Path:
    configured = os.environ.get("LOMOTE_UNDERSTANDING_CACHE")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "var" / "cache" / "understanding"


def _versions() -> list[str]:
    found = []
    for name in _LIBRARIES:
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=?")
    return found


def digest(parts: Iterable[str], code: Iterable[Path]) -> str:
    """One key for the inputs of a fit: the given parts, the source of the modules that fit, library versions."""
    hasher = hashlib.sha256(f"format={FORMAT}".encode())
    for part in [*parts, *_versions()]:
        hasher.update(b"\x1e" + part.encode())
    for path in code:
        hasher.update(b"\x1d" + path.read_bytes())
    return hasher.hexdigest()


def fitted(name: str, key: str, fit: Callable[[], Any]) -> Any:
    """What `fit()` returns for the inputs `key` digests: read from disk when a process already fitted it, else
    fitted and kept. `name` is a plain word (a decision's) that names the file beside its key."""
    path = cache_dir() / f"{name}-{key[:32]}.pickle"
    try:
        with path.open("rb") as stored:
            return pickle.load(stored)  # noqa: S301 — our own file, written below (see the docstring)
    except FileNotFoundError:
        pass
    except Exception as exc:  # cut short by a crash, written by other library versions: fit again
        logger.warning("fitted %s at %s unreadable (%s): fitting it again", name, path, exc)
    value = fit()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as out:
            try:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                os.unlink(out.name)
                raise
        os.replace(out.name, path)  # atomic: a reader sees the whole file or none
    except OSError as exc:
        logger.warning("fitted %s not kept on disk (%s): this process keeps it in memory", name, exc)
    return value
