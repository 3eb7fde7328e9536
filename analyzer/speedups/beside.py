"""Work beside the check on the second core: when a forked child may run, and whole messages
through its pipes (used by :mod:`analyzer.speedups.memo` and :mod:`analyzer.speedups.proofs`)."""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["can_fork", "read_all", "read_exactly", "write_all"]


def can_fork() -> bool:
    """Linux with ``os.fork``, and no other thread: a fork copies only the calling thread, so a
    lock another thread holds would stay held in the child."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the pipe ``fd`` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exactly(fd: int, n: int) -> bytes:
    """``n`` bytes from the pipe ``fd``.

    Raises:
        EOFError: the other end closed the pipe first.
    """
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other process closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_all(fd: int) -> bytes:
    """Everything from the pipe ``fd`` until the other end closes it."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)
