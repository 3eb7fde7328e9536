"""Writing reports and tables without harming the inputs.

- :func:`refuse_overwriting`: an output path that is one of the input files (the same file by
  identity, device and inode: a hard link, a symlink or another spelling of the path count)
  is refused before anything is written.
- :func:`write_atomic`: a file is written to a temporary file beside it and renamed over the
  target, so a failure (a full disk, an interrupt) leaves the old file or none, never half a
  report. ``-`` is standard output; an existing character device or FIFO the user named
  (``/dev/null``, ``/dev/stdout``) is written in place.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterable

from analyzer.errors import InputError, escape
from analyzer.inputs.files import describe_os_error

__all__ = ["STDOUT", "refuse_overwriting", "write_atomic"]

#: The output path that means standard output.
STDOUT = "-"


def _name(path: str | os.PathLike) -> str:
    return escape(os.fsdecode(path), 200)


def _identity(path: str | os.PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def refuse_overwriting(inputs: Iterable[str | os.PathLike | None], outputs: Iterable[str | os.PathLike | None]) -> None:
    """Refuse outputs that are input files.

    Args:
        inputs: every file the command reads (None entries are skipped).
        outputs: every file it will write (None and ``-`` are skipped).

    Raises:
        InputError: ``OUT: is the input file IN; refusing to overwrite it``.
    """
    given: dict[tuple[int, int], str | os.PathLike] = {}
    for p in inputs:
        if p is not None and os.fspath(p) != STDOUT:
            ident = _identity(p)
            if ident is not None:
                given.setdefault(ident, p)
    for out in outputs:
        if out is None or os.fspath(out) == STDOUT:
            continue
        ident = _identity(out)
        if ident is not None and ident in given:
            same = given[ident]
            also = "" if os.path.abspath(same) == os.path.abspath(out) else f" ({_name(same)}, the same file)"
            raise InputError(f"{_name(out)}: is one of the input files{also}; refusing to overwrite it")


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (text is UTF-8 encoded; characters that cannot be, such as the surrogates
    of a non-UTF-8 file name, as ``\\udcff`` escapes) to ``path`` as described in the module
    docstring.

    Raises:
        InputError: ``path`` is a folder or a socket, its folder does not exist or cannot be
            written, or the write fails.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "backslashreplace")
    if os.fspath(path) == STDOUT:
        out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
        if out is None:  # a text-only stream (tests capture output so)
            sys.stdout.write(data.decode("utf-8"))
        else:
            out.write(data)
        sys.stdout.flush()
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as exc:
        raise InputError(f"{_name(path)}: cannot write ({_why(exc)})") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError(f"{_name(path)}: is a folder; give a file name to write")
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        _write_in_place(path, data)
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{_name(path)}: is not a regular file; refusing to write there")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)[:100]}.", suffix=".tmp")
    except (OSError, ValueError) as exc:
        raise InputError(f"{_name(path)}: cannot write ({_why(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"{_name(path)}: cannot write ({_why(exc)})") from None
        raise


def _write_in_place(path: str | os.PathLike, data: bytes) -> None:
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise InputError(f"{_name(path)}: cannot write ({_why(exc)})") from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return describe_os_error(exc, "folder")
    return escape(str(exc) or type(exc).__name__, 100)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
