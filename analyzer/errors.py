"""Errors the CLI turns into one clear line and exit code 2."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """Bad user input: a missing or malformed file, a wrong rank count, a bad spec.

    The message is one line, shown to the user as is.
    """
