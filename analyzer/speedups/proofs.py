"""The string and shape checks of whole ONNX files, run beside the check on the second core.

Proving that every string of a file is UTF-8 and every name free of NUL, and every dimension
in 32-bit range (:func:`analyzer.facts.extract.wire_problem`), re-reads the file's bytes two or
three times with protobuf's C parser: about 0.07 s for the two distinct graphs of the 405B TP-8
check, in which nothing else depends on the answer. :class:`WireProofs` collects those files
while they load; :meth:`~WireProofs.start` forks a child that runs the proofs and reports the
first problem through a pipe (a few bytes), while the check goes on; :meth:`~WireProofs.settle`
waits for it and raises the problem, if any, as the one-line error the check would have raised
when loading the file. The caller settles before it returns a result and before it re-raises
any error of its own, so a malformed file gives exactly the error it gave before, whatever the
check tripped on meanwhile. A caller that forks a child of its own can give it the proofs to
run after its own work (:meth:`~WireProofs.child_job`, :meth:`~WireProofs.adopt`): the layer
memoization's child for the rank graph does (:mod:`analyzer.speedups.memo`), so the check runs in two
processes, not three, on two cores. Without ``os.fork`` (not Linux), for little work, or when
the child fails in any way, the proofs run in the caller.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import onnx

from analyzer.errors import InputError
from analyzer.facts.extract import wire_problem
from analyzer.speedups.beside import can_fork, read_all, write_all

__all__ = ["WireProofs"]

#: files smaller than this in all are proved in the caller: forking costs ~3 ms
FORK_MIN_BYTES = 4 << 20


class WireProofs:
    """Whole files whose string and shape checks are still to run (module docstring)."""

    def __init__(self, fork_min_bytes: int | None = None) -> None:
        self._items: list[tuple[Path, onnx.ModelProto, bytes]] = []
        self._fork_min_bytes = fork_min_bytes
        self._child: tuple[int, int] | None = None  # (pid, read end of the pipe)
        self._handed: tuple[int, int] | None = None  # the pipe of a child_job not adopted yet
        self._proving = 0  # how many of the files the child proves

    def add(self, path: Path, model: onnx.ModelProto, wire: bytes) -> None:
        """One more file (proved after those added before)."""
        self._items.append((path, model, wire))

    def start(self) -> None:
        """Fork the child that proves the files added so far, when that pays."""
        if self._child is not None or self._handed is not None or not self._items or not can_fork():
            return
        least = FORK_MIN_BYTES if self._fork_min_bytes is None else self._fork_min_bytes
        if sum(len(w) for _, _, w in self._items) < least:
            return
        job = self.child_job()
        try:
            pid = os.fork()
        except OSError:
            self.abandon()
            return
        if pid == 0:  # the child: prove, answer, leave without any cleanup
            code = 0
            try:
                job()
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        self.adopt(pid)

    def child_job(self) -> Callable[[], None] | None:
        """For a caller that forks a child of its own: the function that child runs to prove the
        files added so far and answer (None when there is nothing to prove or a child runs
        already). The caller then calls :meth:`adopt` with the child's pid, or :meth:`abandon`."""
        if self._child is not None or self._handed is not None or not self._items:
            return None
        read, write = os.pipe()
        self._handed = (read, write)
        items = list(self._items)
        self._proving = len(items)

        def job() -> None:
            os.close(read)
            write_all(write, _answer(items))
            os.close(write)

        return job

    def adopt(self, pid: int) -> None:
        """The caller's child ``pid`` runs :meth:`child_job`: :meth:`settle` waits for it."""
        read, write = self._handed
        self._handed = None
        os.close(write)
        self._child = (pid, read)

    def abandon(self) -> None:
        """No child took :meth:`child_job`: the proofs run as if it had not been asked."""
        if self._handed is not None:
            for fd in self._handed:
                os.close(fd)
            self._handed = None

    def settle(self) -> None:
        """Wait for the proofs and raise the first problem found (in the order added).

        Raises:
            InputError: ``"<file>: malformed ONNX model: <problem>"``.
        """
        self.abandon()
        items, self._items = self._items, []
        answer = self._join()
        proved = 0
        if answer is not None:
            index, _, message = answer.partition(b"\n")
            if index.isdigit() and int(index) < len(items):
                raise InputError(f"{items[int(index)][0]}: malformed ONNX model: {message.decode()}")
            if index == b"ok":
                proved = self._proving
        for path, model, wire in items[proved:]:  # no child, no answer, or added since: prove here
            problem = wire_problem(model, wire)
            if problem:
                raise InputError(f"{path}: malformed ONNX model: {problem}")

    def _join(self) -> bytes | None:
        if self._child is None:
            return None
        pid, read = self._child
        self._child = None
        try:
            answer = read_all(read)
        finally:
            os.close(read)
            _, status = os.waitpid(pid, 0)
        return answer if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None

    def __del__(self) -> None:  # a caller that never settled: reap the child
        if getattr(self, "_child", None) is not None:
            try:
                self._join()
            except OSError:
                pass


def _answer(items) -> bytes:
    for i, (_, model, wire) in enumerate(items):
        problem = wire_problem(model, wire)
        if problem:
            return f"{i}\n{problem}".encode()
    return b"ok"
