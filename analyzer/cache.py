"""The on-disk cache of things parsed from the package's own files (the rule program, the fx op
table): pickles in ``$SHARDLOG_CACHE``, else the platform's user cache folder
(``platformdirs.user_cache_dir("shardlog")``: ``~/.cache/shardlog`` on Linux,
``~/Library/Caches/shardlog`` on macOS, ``%LOCALAPPDATA%\\shardlog\\Cache`` on Windows), named by
a digest of what they were built from. Any problem reading or writing one falls back to
building it again; a user's input files are never cached (of a spec, only the digest of one that
passed the spec schema: :mod:`analyzer.inputs.spec_schema`).

The folder is kept under :data:`MAX_BYTES` (``$SHARDLOG_CACHE_MAX_MB`` overrides it): after a
new entry is stored, the least recently used entries go until the rest fit. ``shardlog cache
clear`` removes every entry (:func:`clear`), ``shardlog cache info`` shows where it is and its
size (:func:`entries`). Only files named like entries (``<name>-<32 hex digits>.pickle``) are
ever removed, whatever else the folder holds."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

__all__ = ["MAX_BYTES", "cache_dir", "cached", "clear", "digest", "entries", "store"]

T = TypeVar("T")

#: Default bound of the cache folder's entries (bytes); a rule program is 2-4 MB.
MAX_BYTES = 256 * 2**20
_ENTRY = re.compile(r"^[A-Za-z0-9_.-]+-[0-9a-f]{32}\.pickle$")
_TMP = re.compile(r"^[A-Za-z0-9_.-]+-[0-9a-f]{32}\.\d+\.tmp$")


def cache_dir() -> Path:
    """``$SHARDLOG_CACHE``, else the platform's user cache folder for shardlog (it may not exist yet)."""
    if os.environ.get("SHARDLOG_CACHE"):
        return Path(os.environ["SHARDLOG_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("shardlog", appauthor=False))


def _max_bytes() -> int:
    try:
        return int(float(os.environ["SHARDLOG_CACHE_MAX_MB"]) * 2**20)
    except (KeyError, ValueError):
        return MAX_BYTES


def entries(folder: Path | None = None) -> list[Path]:
    """The cache entries in ``folder`` (default :func:`cache_dir`), least recently used first."""
    folder = folder or cache_dir()
    try:
        found = [p for p in folder.iterdir() if _ENTRY.match(p.name) and p.is_file()]
    except OSError:
        return []

    def used(p: Path) -> float:  # stored or last read (cached() touches what it reads)
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(found, key=used)


def clear(folder: Path | None = None) -> tuple[int, int]:
    """Remove every cache entry (and temporary files a stopped store left); returns (files
    removed, bytes freed)."""
    folder = folder or cache_dir()
    try:
        stale = [p for p in folder.iterdir() if _TMP.match(p.name)]
    except OSError:
        stale = []
    count = freed = 0
    for p in [*entries(folder), *stale]:
        try:
            size = p.stat().st_size
            p.unlink()
        except OSError:
            continue
        count += 1
        freed += size
    return count, freed


def _trim(folder: Path, keep: Path) -> None:
    """Remove least recently used entries (never ``keep``) until the folder fits its bound."""
    found = entries(folder)
    sizes = {}
    for p in found:
        try:
            sizes[p] = p.stat().st_size
        except OSError:
            sizes[p] = 0
    total, bound = sum(sizes.values()), _max_bytes()
    for p in found:
        if total <= bound:
            break
        if p == keep:
            continue
        try:
            p.unlink()
            total -= sizes[p]
        except OSError:
            continue


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
        _trim(path.parent, path)
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
            value = pickle.load(fh)
        try:
            os.utime(path)  # recently used: the last to go when the folder is trimmed
        except OSError:
            pass
        return value
    except Exception:  # missing, from another version, or unreadable: build again
        pass
    value = build()
    store(path, value if to_store is None else to_store(value))
    return value
