"""The on-disk cache of things parsed from the package's own files (the rule program, the fx op
table): pickles in ``$SHARDLOG_CACHE`` or ``~/.cache/shardlog``, named by a digest of what they
were built from. Any problem reading or writing one falls back to building it again; a user's
input files are never cached."""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

__all__ = ["cache_dir", "cached", "digest", "store"]

T = TypeVar("T")


def cache_dir() -> Path:
    """``$SHARDLOG_CACHE``, else ``~/.cache/shardlog`` (it may not exist yet)."""
    return Path(os.environ.get("SHARDLOG_CACHE", Path.home() / ".cache" / "shardlog"))


def digest(parts: Iterable[bytes]) -> str:
    """A 32-hex-digit BLAKE2b digest of ``parts`` in order."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part)
    return h.hexdigest()


def store(path: Path, value: object) -> None:
    """Pickle ``value`` to ``path`` atomically (a temporary file renamed over it); an OSError
    (read-only home, full disk) leaves no cache and is not raised."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            pickle.dump(value, fh, pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except OSError:
        pass


def cached(name: str, key: str, build: Callable[[], T], to_store: Callable[[T], object] | None = None) -> T:
    """``build()``, kept in the cache as ``<name>-<key>.pickle``.

    Args:
        name: the file name's prefix (``"fx-ops"``).
        key: a :func:`digest` of everything ``build`` reads (a change to any of it is a new entry).
        build: makes the value (picklable).
        to_store: what to pickle for a built value (default: the value itself), when what is
            read back may be lighter than what was built (the rule program: its rules stored apart).

    Returns:
        The cached value, or a new one (then stored).
    """
    path = cache_dir() / f"{name}-{key}.pickle"
    try:
        with path.open("rb") as fh:
            return pickle.load(fh)
    except Exception:  # missing, from another version, or unreadable: build again
        pass
    value = build()
    store(path, value if to_store is None else to_store(value))
    return value
