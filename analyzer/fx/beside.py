"""Rank dumps imported on the second core while the caller imports the others.

Importing a torch.fx dump is pure Python (about 10 ms for one Megatron-LM GPT layer), so
the dumps of a check are split: a forked child imports the last rank dumps and sends back
the serialized models while the caller imports the sequential dump and the first ranks.
The child only ever *adds* speed: a dump it could not import (a bad file, any failure of the
child) is imported by the caller again, in file order, so the error a user sees is the same
one-line :class:`~analyzer.errors.InputError` as without the child.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

import onnx

from analyzer.beside import can_fork, read_all, write_all

__all__ = ["FxImportsBeside"]


class FxImportsBeside:
    """The models a forked child imported, by position in the ``paths`` it was given.

    Use :meth:`start`, then :meth:`model` for each path in order, then :meth:`close` (also
    on errors: it stops the child)."""

    def __init__(self, pid: int, fd: int, count: int) -> None:
        self._pid = pid
        self._fd = fd
        self._count = count
        self._models: list[bytes | None] | None = None

    @classmethod
    def start(cls, paths: Sequence[str | Path], options: Mapping) -> FxImportsBeside | None:
        """Fork a child that imports ``paths`` (``analyzer.fx.import_fx(path, **options)``).

        Returns:
            The handle, or None when no child can run (not Linux, another thread is alive,
            fork failed) or there is nothing to import: the caller imports everything itself.
        """
        if not paths or not can_fork():
            return None
        reads, writes = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(reads)
            os.close(writes)
            return None
        if pid == 0:  # the child
            code = 0
            try:
                os.close(reads)
                from analyzer.fx import import_fx

                done: list[bytes | None] = []
                for path in paths:
                    try:
                        done.append(import_fx(path, **options).SerializeToString())
                    except Exception:
                        break  # the caller imports this one again and raises its error
                write_all(writes, pickle.dumps(done, pickle.HIGHEST_PROTOCOL))
                os.close(writes)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(writes)
        return cls(pid, reads, len(paths))

    def model(self, index: int) -> onnx.ModelProto | None:
        """The model of ``paths[index]``, or None when the child did not import it (the caller
        imports it itself)."""
        if self._models is None:
            self._models = self._collect()
        if index >= len(self._models) or self._models[index] is None:
            return None
        return onnx.ModelProto.FromString(self._models[index])

    def close(self) -> None:
        """Stop the child if it still runs and reap it (idempotent)."""
        if self._pid is None:
            return
        if self._models is None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except OSError:
                pass
            os.close(self._fd)
        try:
            os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass
        self._pid = None

    def _collect(self) -> list[bytes | None]:
        try:
            data = read_all(self._fd)
            models = pickle.loads(data) if data else []
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            models = []
        finally:
            os.close(self._fd)
        return models if isinstance(models, list) else []
