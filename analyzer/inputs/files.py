"""Reading the files and folders a user names: regular files only, within a size limit, and
every way they can be bad turned into one :class:`~analyzer.errors.InputError` line.

Every reader of user input (ONNX models, torch.fx dumps, YAML specs, rule files, fact files,
golden-case listings, the tables ``query`` reads) goes through :func:`read_bytes` or
:func:`read_text`, and every folder walk through :func:`list_files`, so that

- a FIFO, a device (``/dev/zero``, ``/dev/urandom``), a socket, or a file of ``/proc`` or
  ``/sys`` is refused before it is opened (reading one blocks forever, never ends, or is not
  what its size says);
- a folder, a dangling link, a symlink loop, a name over the system's limit, an unreadable
  file or folder is named as such;
- a file over its kind's size limit (:data:`LIMITS`) is refused before it is read whole.

The limits are documented in README ("Hostile input").
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from analyzer.errors import InputError, escape

__all__ = ["LIMITS", "check_folder", "check_regular", "describe_os_error", "list_files", "read_bytes", "read_text"]

_MiB = 1 << 20
#: Largest file read, by kind (bytes). ONNX: protobuf's 2 GiB limit of one message.
LIMITS: dict[str, int] = {
    "model": (2 << 30) - 1,
    "dump": 256 * _MiB,
    "spec": 1 * _MiB,  # a relation per weight of a 405B model is ~60 KB; parsing 1 MiB takes ~1 s
    "rules": 16 * _MiB,
    "facts": 512 * _MiB,
    "table": 512 * _MiB,
    "listing": 1 * _MiB,
}

_PSEUDO_ROOTS = ("/proc", "/sys")  # file systems whose files are not what their size says

_WHY = {
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "is a folder, not {a_what}",
    errno.EIO: "input/output error",
}


def _name(path: str | os.PathLike) -> str:
    return escape(os.fsdecode(path), 200)


def _a(what: str) -> str:
    """``what`` with its article: "an ONNX model", "a spec file"."""
    return f"an {what}" if what[:1].lower() in "aeio" or what.startswith("ONNX") else f"a {what}"


def describe_os_error(exc: OSError, what: str = "file") -> str:
    """The reason of an ``OSError`` in a few words (``no such file``, ``permission denied``)."""
    if exc.errno == errno.ENOENT:
        return f"no such {what}" if what.endswith(("folder", "file")) else "no such file"
    template = _WHY.get(exc.errno or -1)
    if template is not None:
        return template.format(what=what, a_what=_a(what))
    return escape(exc.strerror or type(exc).__name__, 100).lower()


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _pseudo(path: str | os.PathLike) -> bool:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return any(real == root or real.startswith(root + "/") for root in _PSEUDO_ROOTS)


def check_regular(path: str | os.PathLike, what: str = "file") -> os.stat_result:
    """The ``stat`` of ``path`` when it is a regular file a check may read.

    Raises:
        InputError: ``path: <why>``: it does not exist, is a folder, a FIFO, a device, a
            socket, a file of ``/proc`` or ``/sys``, a dangling link or a symlink loop, its
            name is too long, or it cannot be read.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):
            raise InputError(f"{_name(path)}: a dangling symbolic link (its target does not exist)") from None
        raise InputError(f"{_name(path)}: {describe_os_error(exc, what)}") from None
    except ValueError:  # a NUL byte in the name
        raise InputError(f"{_name(path)}: not a valid file name (contains a NUL character)") from None
    kind = _kind(st.st_mode)
    if kind is not None:
        raise InputError(f"{_name(path)}: is {kind}, not {_a(what)}")
    if _pseudo(path):
        raise InputError(f"{_name(path)}: is a file of /proc or /sys, not {_a(what)}")
    return st


def check_folder(path: str | os.PathLike, what: str = "folder") -> None:
    """Check that ``path`` is a folder whose entries can be listed.

    Raises:
        InputError: it does not exist, is not a folder, or cannot be listed.
    """
    try:
        st = os.stat(path)
    except ValueError:
        raise InputError(f"{_name(path)}: not a valid folder name (contains a NUL character)") from None
    except OSError as exc:
        raise InputError(f"{_name(path)}: {describe_os_error(exc, what)}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"{_name(path)}: is {_kind(st.st_mode) or 'a file'}, not {_a(what)}")
    if _pseudo(path):
        raise InputError(f"{_name(path)}: is a folder of /proc or /sys, not {_a(what)}")
    try:
        with os.scandir(path):
            pass
    except OSError as exc:
        raise InputError(f"{_name(path)}: {describe_os_error(exc, what)}") from None


def read_bytes(path: str | os.PathLike, what: str = "file", limit: str = "model") -> bytes:
    """The bytes of a user-named regular file.

    Args:
        path: the file.
        what: what the file should be, for messages (``"ONNX model"``, ``"spec file"``).
        limit: the kind of file, a key of :data:`LIMITS`.

    Raises:
        InputError: as :func:`check_regular`, a file over the limit, or a read error.
    """
    check_regular(path, what)
    cap = LIMITS[limit]
    try:
        # O_NONBLOCK: should the file have become a FIFO since the check, opening it does not wait
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"{_name(path)}: {describe_os_error(exc, what)}") from None
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind is not None:
            raise InputError(f"{_name(path)}: is {kind}, not {_a(what)}")
        if st.st_size > cap:
            raise InputError(f"{_name(path)}: {st.st_size} bytes, over the limit of {cap} bytes for {_a(what)}")
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            data = fh.read(cap + 1)
    except OSError as exc:
        raise InputError(f"{_name(path)}: cannot read ({describe_os_error(exc, what)})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > cap:
        raise InputError(f"{_name(path)}: over the limit of {cap} bytes for {_a(what)}")
    return data


def read_text(path: str | os.PathLike, what: str = "file", limit: str = "rules") -> str:
    """The UTF-8 text of a user-named regular file (as :func:`read_bytes`; a byte-order mark
    is kept, as :meth:`pathlib.Path.read_text` keeps it).

    Raises:
        InputError: as :func:`read_bytes`, or ``path: not a <what> (not UTF-8 text, byte N)``.
    """
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{_name(path)}: not {_a(what)} (not UTF-8 text: byte {exc.start})") from None


def list_files(folder: str | os.PathLike, suffix: str, what: str = "folder") -> Iterator[Path]:
    """The files named ``*<suffix>`` under ``folder`` (recursively, sorted; links to folders not
    followed), each checked by :func:`check_regular`.

    Raises:
        InputError: ``folder`` or a folder under it cannot be listed, or an entry named
            ``*<suffix>`` is not a regular file (a folder, a FIFO, a device, a dangling link).
    """
    check_folder(folder, what)

    def fail(exc: OSError) -> None:
        raise InputError(f"{_name(exc.filename or folder)}: {describe_os_error(exc, 'folder')}")

    found: list[Path] = []
    for top, dirs, files in os.walk(folder, onerror=fail):
        dirs.sort()
        for d in dirs:
            if d.endswith(suffix):
                raise InputError(f"{_name(os.path.join(top, d))}: is a folder, not a {suffix} file")
        found.extend(Path(top) / f for f in files if f.endswith(suffix))
    for path in sorted(found):
        check_regular(path, f"{suffix} file")
        yield path
