"""The one error type of the Datalog front end: a located, one-line ``DatalogError``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NOWHERE", "DatalogError", "Loc"]


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
