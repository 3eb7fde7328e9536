"""The one error type of the Datalog front end: a located, one-line ``DatalogError``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["NOWHERE", "DatalogError", "Loc", "loc_in"]


@dataclass(frozen=True)
class Loc:
    """A source position: file, 1-based line and 1-based column.

    ``file`` is ``None`` for text that did not come from a file.
    """

    file: str | None = None
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<string>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)


NOWHERE = Loc()


class DatalogError(ValueError):
    """A problem in a Datalog program or its facts, reported as ``file:line:col: message``.

    Attributes:
        message: The one-line message without the location.
        loc: Where the problem is (may be empty).
    """

    def __init__(self, message: str, loc: Loc | None = None) -> None:
        self.message = " ".join(message.split())
        self.loc = loc or NOWHERE
        text = self.message if self.loc == NOWHERE else f"{self.loc}: {self.message}"
        super().__init__(text)

    @property
    def file(self) -> str | None:
        """The file the problem is in, if known."""
        return self.loc.file

    @property
    def line(self) -> int | None:
        """The 1-based line of the problem, if known."""
        return self.loc.line

    @property
    def col(self) -> int | None:
        """The 1-based column of the problem, if known."""
        return self.loc.col


def loc_in(path: Path | str | None, line: int | None = None, col: int | None = None) -> Loc:
    """Build a :class:`Loc` for ``path``.

    Args:
        path: The file (or ``None`` for a string source).
        line: 1-based line.
        col: 1-based column.

    Returns:
        The location.
    """
    return Loc(None if path is None else str(path), line, col)
