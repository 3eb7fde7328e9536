"""Errors the CLI turns into one clear line and exit code 2, and how user-given text is shown
in messages and on the terminal.

Names, paths and source lines come from files the user gave (or an attacker crafted): they
may hold control characters (an ESC sequence retitles a terminal or writes its clipboard, a
newline prints a fake verdict line), bytes that are not UTF-8 (file names) or a million
characters. :func:`escape` is the one function every message and terminal line uses for
them; :func:`shown` is :func:`repr` with bounded work, for values read from a YAML spec
(``repr`` of a "billion laughs" structure would walk 10**9 nodes).
"""

from __future__ import annotations

import reprlib
import unicodedata

__all__ = ["INTERNAL_ERROR_EXIT", "InputError", "escape", "shown"]

#: Exit code of ``shardlog`` on an internal error (a bug of ours, not bad input): EX_SOFTWARE
#: of BSD's sysexits.h, distinct from 0 verified, 1 discrepancy, 2 input error, and 3-4.
INTERNAL_ERROR_EXIT = 70


class InputError(Exception):
    """Bad user input: a missing or malformed file, a wrong rank count, a bad spec.

    The message is one line, shown to the user as is (after :func:`escape`).
    """


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _needs_escape(ch: str) -> bool:
    # Cc: C0/C1 controls (ESC, CSI, NUL, newlines); Cf: bidi overrides and zero-width marks that
    # make a line read other than it is; Cs: surrogates; Zl/Zp: Unicode line and paragraph breaks
    return ch != " " and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def escape(text: object, limit: int | None = 300) -> str:
    """``text`` as one line that prints as it reads: control and format characters (C0, C1,
    DEL, bidi overrides, surrogates from non-UTF-8 file names, line separators) written as
    ``\\n``, ``\\x1b``, ``\\x9b``, ``\\u202e``; backslashes are kept as they are. Longer than
    ``limit`` characters: cut, with ``...(N chars)`` saying how long it was.

    Args:
        text: a name, path or line (anything else is ``str()``-ed; ``bytes`` are decoded
            with non-UTF-8 bytes kept as ``\\xNN``).
        limit: the most characters kept of ``text`` (None: no limit).

    Returns:
        The escaped text (pure ASCII-safe for the terminal: only printable characters).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    elif not isinstance(text, str):
        text = str(text)
    n = len(text)
    if limit is not None and n > limit:
        text = text[:limit]
    if any(_needs_escape(ch) for ch in text):
        text = "".join(_escaped_char(ch) if _needs_escape(ch) else ch for ch in text)
    if limit is not None and n > limit:
        text += f"...({n} chars)"
    return text


class _Repr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 200:  # str() of an int over 4,300 digits raises; this one is long anyway
            return f"<an integer of {int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)


_REPR = _Repr()
_REPR.maxlevel = 3
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def shown(value: object, limit: int = 120) -> str:
    """``repr(value)`` for a message: bounded work and length whatever ``value`` is (nested
    containers shown to depth 3 and 6 items each, strings and integers cut), escaped.

    Args:
        value: a value read from user input (a YAML scalar, list or mapping).
        limit: the most characters of the result.
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a user object's __repr__ (none in YAML, but be safe)
        text = f"<{type(value).__name__}>"
    return escape(text, limit)
