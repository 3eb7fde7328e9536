"""Python implementations of Soufflé's functors and 32-bit integer arithmetic.

Engines without native support call these, so every engine computes the same values:

* ``cat``/``to_string``/``to_number``/``strlen`` as in Soufflé (``strlen`` counts UTF-8
  bytes, like Soufflé's ``std::string::size``); ``to_number`` of a string that is not a
  decimal integer is an error (:class:`FunctorError`);
* ``/`` truncates toward zero and ``%`` takes the sign of the dividend (C, Soufflé and
  clingo agree); a zero divisor makes the rule instance not fire (clingo's behaviour;
  Soufflé's is undefined);
* results wrap to signed 32 bits like clingo's and Soufflé's default ``number``.
"""

from __future__ import annotations

import re

from analyzer.datalog.errors import DatalogError

__all__ = [
    "FunctorError",
    "cat",
    "div32",
    "mod32",
    "strlen",
    "to_number",
    "to_string",
    "wrap32",
]

_NUMBER = re.compile(r"[+-]?[0-9]+")


class FunctorError(DatalogError):
    """A functor was applied to a value it cannot handle (e.g. ``to_number("x")``)."""


def wrap32(value: int) -> int:
    """Wrap an integer to signed 32 bits.

    Args:
        value: Any integer.

    Returns:
        ``value`` modulo 2**32, in ``[-2**31, 2**31)``.
    """
    return ((value + 2**31) % 2**32) - 2**31


def div32(a: int, b: int) -> int | None:
    """Integer division truncating toward zero.

    Args:
        a: Dividend.
        b: Divisor.

    Returns:
        The quotient, or ``None`` when ``b`` is zero.
    """
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return wrap32(q if (a >= 0) == (b >= 0) else -q)


def mod32(a: int, b: int) -> int | None:
    """Remainder with the sign of the dividend (C's ``%``).

    Args:
        a: Dividend.
        b: Divisor.

    Returns:
        The remainder, or ``None`` when ``b`` is zero.
    """
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return wrap32(r if a >= 0 else -r)


def cat(*parts: str) -> str:
    """Concatenate symbols.

    Args:
        *parts: Two or more symbols.

    Returns:
        The concatenation.
    """
    return "".join(parts)


def to_string(value: int) -> str:
    """Decimal text of a number.

    Args:
        value: The number.

    Returns:
        The text.
    """
    return str(value)


def to_number(text: str) -> int:
    """Parse a decimal integer.

    Args:
        text: The symbol.

    Returns:
        The number.

    Raises:
        FunctorError: If ``text`` is not a decimal integer that fits in 32 bits.
    """
    stripped = text.strip()
    if not _NUMBER.fullmatch(stripped):
        raise FunctorError(f"to_number({text!r}): not a decimal integer")
    value = int(stripped)
    if not -(2**31) <= value < 2**31:
        raise FunctorError(f"to_number({text!r}): does not fit in 32 bits")
    return value


def strlen(text: str) -> int:
    """Length in UTF-8 bytes (as Soufflé).

    Args:
        text: The symbol.

    Returns:
        The length.
    """
    return len(text.encode("utf-8"))
