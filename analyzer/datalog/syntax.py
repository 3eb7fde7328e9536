"""The abstract syntax of the supported Soufflé subset (frozen dataclasses).

Every node carries a :class:`~analyzer.datalog.errors.Loc` that takes no part in equality, so
two programs that differ only in layout compare equal.

After parsing, rules are *normalised*: one head per rule, no ``;`` in bodies, and every
aggregate appears only as ``Var = <aggregate>`` in a body (aggregates written elsewhere,
e.g. as a head argument or inside arithmetic, are bound to a fresh variable first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from analyzer.datalog.errors import NOWHERE, Loc

__all__ = [
    "AGGREGATE_OPS",
    "ARITH_OPS",
    "COMPARE_OPS",
    "FUNCTORS",
    "Aggregate",
    "Atom",
    "BaseType",
    "BinOp",
    "BodyLiteral",
    "Call",
    "Const",
    "Constraint",
    "Decl",
    "Fact",
    "Negation",
    "Program",
    "Rule",
    "Term",
    "TypeDecl",
    "Var",
    "Wildcard",
    "body_vars",
    "term_vars",
]

BaseType = Literal["symbol", "number"]

#: Binary arithmetic operators (all on ``number``).
ARITH_OPS = ("+", "-", "*", "/", "%")
#: Comparison operators allowed as body constraints.
COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")
#: Aggregate operators.
AGGREGATE_OPS = ("count", "sum", "min", "max")
#: Supported functors: name -> (argument base types, result base type); ``cat`` is variadic.
FUNCTORS: dict[str, tuple[tuple[BaseType, ...], BaseType]] = {
    "cat": (("symbol", "symbol"), "symbol"),
    "to_string": (("number",), "symbol"),
    "to_number": (("symbol",), "number"),
    "strlen": (("symbol",), "number"),
}

_LOC = field(default=NOWHERE, compare=False, repr=False)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Var:
    """A named variable (any identifier except ``_``)."""

    name: str
    loc: Loc = _LOC


@dataclass(frozen=True)
class Wildcard:
    """The anonymous variable ``_``: a fresh variable at each occurrence."""

    loc: Loc = _LOC


@dataclass(frozen=True)
class Const:
    """A constant: ``str`` for a symbol, ``int`` for a number."""

    value: str | int
    loc: Loc = _LOC


@dataclass(frozen=True)
class BinOp:
    """Integer arithmetic ``left op right`` with ``op`` in :data:`ARITH_OPS`."""

    op: str
    left: Term
    right: Term
    loc: Loc = _LOC


@dataclass(frozen=True)
class Call:
    """A functor application such as ``cat(a, b)`` (see :data:`FUNCTORS`)."""

    name: str
    args: tuple[Term, ...]
    loc: Loc = _LOC


@dataclass(frozen=True)
class Aggregate:
    """``op target : { body }``; ``target`` is ``None`` for ``count``."""

    op: str
    target: Term | None
    body: tuple[BodyLiteral, ...]
    loc: Loc = _LOC


Term = Var | Wildcard | Const | BinOp | Call | Aggregate


@dataclass(frozen=True)
class Atom:
    """``Relation(arg, ...)``."""

    relation: str
    args: tuple[Term, ...]
    loc: Loc = _LOC


@dataclass(frozen=True)
class Negation:
    """``!Relation(arg, ...)``."""

    atom: Atom
    loc: Loc = _LOC


@dataclass(frozen=True)
class Constraint:
    """``left op right`` with ``op`` in :data:`COMPARE_OPS`."""

    op: str
    left: Term
    right: Term
    loc: Loc = _LOC


BodyLiteral = Atom | Negation | Constraint


@dataclass(frozen=True)
class Rule:
    """``head :- body.`` with a single head and a conjunctive body."""

    head: Atom
    body: tuple[BodyLiteral, ...]
    loc: Loc = _LOC


@dataclass(frozen=True)
class Fact:
    """A ground fact written in a program, ``R("a", 1).``."""

    relation: str
    values: tuple[str | int, ...]
    loc: Loc = _LOC


@dataclass(frozen=True)
class TypeDecl:
    """``.type name <: parent`` with the resolved base type."""

    name: str
    parent: str
    base: BaseType
    loc: Loc = _LOC


@dataclass(frozen=True)
class Decl:
    """A relation declaration ``.decl Name(col: type, ...)``.

    Attributes:
        name: Relation name.
        columns: ``(column name, declared type name)`` pairs in order.
        base_types: The base type (``"symbol"`` or ``"number"``) of each column.
        doc: The ``/** ... */`` comment directly above the declaration, cleaned, or ``None``.
        source: The file the declaration is in (``None`` for a string source).
        loc: Position of the declaration.
    """

    name: str
    columns: tuple[tuple[str, str], ...]
    base_types: tuple[BaseType, ...]
    doc: str | None = None
    source: str | None = None
    loc: Loc = _LOC

    @property
    def arity(self) -> int:
        """Number of columns."""
        return len(self.columns)

    @property
    def column_names(self) -> tuple[str, ...]:
        """Column names in order."""
        return tuple(name for name, _ in self.columns)


@dataclass
class Program:
    """A whole program: declarations, I/O directives, rules and facts.

    Attributes:
        types: User types by name.
        decls: Relation declarations by name, in declaration order.
        inputs: ``.input`` relations, in order of appearance.
        outputs: ``.output`` relations, in order of appearance.
        rules: Normalised rules (single head, conjunctive body).
        facts: Facts written in the program text.
        files: The files read, in reading order.
    """

    types: dict[str, TypeDecl] = field(default_factory=dict)
    decls: dict[str, Decl] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def kept(self, name: str, make: Callable[[Program], _T], valid: Callable[[_T], bool] | None = None) -> _T:
        """``make(self)``, made once and kept on the program as attribute ``name``.

        What an engine derives from a program (a translation, compiled rules, the rule shapes
        the pruning reads) is kept this way, so it is made once per program object and
        pickled with the program by the driver's program cache. A program is not changed
        after it is loaded; its sizes are compared to be safe.

        Args:
            name: The attribute (not a dataclass field: it takes no part in equality).
            make: Builds the value from the program.
            valid: Whether a kept value may be used (e.g. made by this Python); default: any.

        Returns:
            The kept or new value.
        """
        sizes = (len(self.rules), len(self.facts), len(self.outputs), len(self.decls))
        kept = self.__dict__.get(name)
        if kept is not None and kept[0] == sizes and (valid is None or valid(kept[1])):
            return kept[1]
        made = make(self)
        self.__dict__[name] = (sizes, made)
        return made


def term_vars(term: Term, *, into_aggregates: bool = True) -> Iterator[Var]:
    """Yield the variables of ``term`` (with repeats), in reading order.

    Args:
        term: The term.
        into_aggregates: Also yield variables inside aggregate targets and bodies.

    Returns:
        An iterator of :class:`Var` occurrences.
    """
    if isinstance(term, Var):
        yield term
    elif isinstance(term, BinOp):
        yield from term_vars(term.left, into_aggregates=into_aggregates)
        yield from term_vars(term.right, into_aggregates=into_aggregates)
    elif isinstance(term, Call):
        for arg in term.args:
            yield from term_vars(arg, into_aggregates=into_aggregates)
    elif isinstance(term, Aggregate) and into_aggregates:
        if term.target is not None:
            yield from term_vars(term.target)
        yield from body_vars(term.body)


def body_vars(body: tuple[BodyLiteral, ...] | list[BodyLiteral], *, into_aggregates: bool = True) -> Iterator[Var]:
    """Yield the variables of a conjunction of literals (with repeats), in reading order.

    Args:
        body: The literals.
        into_aggregates: Also yield variables inside aggregates.

    Returns:
        An iterator of :class:`Var` occurrences.
    """
    for lit in body:
        if isinstance(lit, Atom):
            for arg in lit.args:
                yield from term_vars(arg, into_aggregates=into_aggregates)
        elif isinstance(lit, Negation):
            for arg in lit.atom.args:
                yield from term_vars(arg, into_aggregates=into_aggregates)
        else:
            yield from term_vars(lit.left, into_aggregates=into_aggregates)
            yield from term_vars(lit.right, into_aggregates=into_aggregates)
