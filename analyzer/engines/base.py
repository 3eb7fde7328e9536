"""The engine interface: evaluate a checked program over fact tuples to its fixpoint.

An engine gets a :class:`~analyzer.datalog.syntax.Program` and the EDB as a mapping from
relation name to tuples (``str`` for symbol columns, ``int`` for number columns). Relations
not in the mapping start empty; a relation may have both given tuples and rules. The
result holds every ``.output`` relation (``program.outputs``) as a sorted list of tuples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping

from analyzer.datalog.checks import INT_MAX, INT_MIN
from analyzer.datalog.errors import DatalogError
from analyzer.datalog.syntax import Decl, Program

__all__ = [
    "Engine",
    "EngineError",
    "EngineUnavailable",
    "EngineWarning",
    "UnknownEngine",
    "check_rows",
    "finish_outputs",
    "validate_facts",
]


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (not installed, or the program uses a construct it lacks).

    The message is one line saying why and what to use instead.
    """


class UnknownEngine(EngineUnavailable, ValueError):
    """No engine has the requested name."""


class EngineError(RuntimeError):
    """The engine ran but failed (non-zero exit status, timeout, missing output).

    The message is one line.
    """


class EngineWarning(UserWarning):
    """Something an engine reported about the program without failing (one line), e.g. Soufflé's
    "Variable x only occurs once"; the CLI prints each as ``shardlog: warning: ...``."""


class Engine(ABC):
    """A Datalog engine.

    Attributes:
        name: The engine's name as given to :func:`analyzer.engines.get_engine`.
    """

    name: str = ""

    @classmethod
    def prepare(cls, program: Program) -> None:
        """Work this engine can do on a loaded program once, kept on the program object (and
        in the driver's program cache with it); none by default.

        Args:
            program: A checked program (not changed otherwise).
        """
        return None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this engine cannot run here, or ``None`` if it can.

        Returns:
            A one-line reason, or ``None``.
        """
        return None

    @abstractmethod
    def run(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
        """Evaluate to fixpoint.

        Args:
            program: A checked program (see :func:`analyzer.datalog.load_program`).
            facts: Relation name -> tuples (``str`` for symbol columns, ``int`` for number
                columns). These relations are the EDB; the others start empty.

        Returns:
            Every relation of ``program.outputs`` as a sorted list of tuples of python
            ``str``/``int``.

        Raises:
            DatalogError: A fact does not fit its relation's declaration.
            EngineUnavailable: The engine cannot run here or cannot evaluate this program.
        """

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def check_rows(decl: Decl, rows: Iterable[tuple]) -> set[tuple]:
    """Check tuples against a declaration and return them as a set.

    Args:
        decl: The relation's declaration.
        rows: The tuples.

    Returns:
        The distinct tuples.

    Raises:
        DatalogError: On a wrong arity, a wrong type (``bool`` is not a number) or a number
            outside 32 bits.
    """
    out: set[tuple] = set()
    arity = decl.arity
    types = [int if t == "number" else str for t in decl.base_types]
    for row in rows:
        row = tuple(row)
        if len(row) != arity:
            raise DatalogError(
                f"facts for {decl.name}: {row!r} has {len(row)} values, the relation has {arity} columns"
            )
        for value, want, (col, _) in zip(row, types, decl.columns):
            if type(value) is not want:
                if want is int and isinstance(value, int) and not isinstance(value, bool):
                    continue
                raise DatalogError(
                    f"facts for {decl.name}: column {col} wants a {'number (int)' if want is int else 'symbol (str)'}, "
                    f"got {value!r}"
                )
            if want is int and not INT_MIN <= value <= INT_MAX:
                raise DatalogError(f"facts for {decl.name}: number {value} in column {col} does not fit in 32 bits")
        out.add(row)
    return out


def validate_facts(program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, set[tuple]]:
    """Check every given relation against ``program.decls``.

    Args:
        program: The program.
        facts: Relation name -> tuples.

    Returns:
        Relation name -> distinct tuples (``int`` subclasses converted to ``int``).

    Raises:
        DatalogError: On an undeclared relation or a tuple that does not fit.
    """
    out: dict[str, set[tuple]] = {}
    for name, rows in facts.items():
        decl = program.decls.get(name)
        if decl is None:
            raise DatalogError(f"facts given for undeclared relation {name}")
        rows = rows if isinstance(rows, list) else list(rows)
        if _plain(decl, rows):  # the common case, checked column by column
            out[name] = set(rows)
            continue
        checked = check_rows(decl, rows)
        if any(t == "number" for t in decl.base_types):
            checked = {tuple(int(v) if isinstance(v, int) else v for v in row) for row in checked}
        out[name] = checked
    return out


def _plain(decl: Decl, rows: list) -> bool:
    """Every row a tuple of ``decl``'s arity, with exact ``str``/``int`` columns, numbers in 32
    bits: what :func:`check_rows` would accept unchanged (it goes row by row)."""
    if not rows:
        return True
    if set(map(type, rows)) != {tuple} or set(map(len, rows)) != {decl.arity}:
        return False
    for col, kind in zip(zip(*rows), decl.base_types):
        if kind == "number":
            if set(map(type, col)) != {int} or min(col) < INT_MIN or max(col) > INT_MAX:
                return False
        elif set(map(type, col)) != {str}:
            return False
    return True


def finish_outputs(program: Program, rows: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
    """Build the result mapping: every output relation, each sorted.

    Args:
        program: The program.
        rows: Derived tuples by relation (missing relations are empty).

    Returns:
        Output relation -> sorted distinct tuples.
    """
    return {name: sorted(set(rows.get(name, ()))) for name in dict.fromkeys(program.outputs)}
