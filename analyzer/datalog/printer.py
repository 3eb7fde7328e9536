"""Print a :class:`~analyzer.datalog.syntax.Program` back as Soufflé source.

The output is one self-contained file (includes already resolved, rules normalised) that
Soufflé 2.5 runs with the meaning the other engines give it (docs/datalog_subset.md). Each rule
is printed as :func:`souffle_rule` makes it:

* a ``_`` of a positive atom inside an aggregate becomes a fresh ``_w<n>``: Soufflé aggregates
  a body of several atoms over the distinct bindings of its named variables (``sum a : {
  Owner(d, t), Cost(d, _, a) }`` adds two equal costs of one developer once), here every
  aggregate is over the body's rows (a ``_``-name is not reported as occurring once);
* a rule dividing by a term that may be zero gets the guard ``term != 0`` (Soufflé stops with
  a floating-point exception on a zero divisor; here the rule instance does not fire).

The text parses back to the program of those rules (printing that again gives the same text).
The Soufflé engine runs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from analyzer.datalog.errors import NOWHERE, Loc
from analyzer.datalog.normalize import name_aggregate_wildcards
from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    BinOp,
    BodyLiteral,
    Call,
    Const,
    Constraint,
    Decl,
    Negation,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
)

__all__ = [
    "format_rule",
    "format_term",
    "guard_divisions",
    "quote",
    "souffle_rule",
    "to_souffle",
    "to_souffle_with_origins",
]

_ESCAPE = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\v": "\\v",
}


def quote(text: str) -> str:
    """Quote a symbol as a Soufflé string literal.

    Args:
        text: The symbol.

    Returns:
        ``"..."`` with backslash escapes.
    """
    return '"' + "".join(_ESCAPE.get(ch, ch) for ch in text) + '"'


def format_term(term: Term) -> str:
    """Soufflé text of a term (arithmetic fully parenthesised).

    Args:
        term: The term.

    Returns:
        The text.
    """
    if isinstance(term, Var):
        return term.name
    if isinstance(term, Wildcard):
        return "_"
    if isinstance(term, Const):
        return quote(term.value) if isinstance(term.value, str) else str(term.value)
    if isinstance(term, BinOp):
        return f"({format_term(term.left)} {term.op} {format_term(term.right)})"
    if isinstance(term, Call):
        return f"{term.name}({', '.join(format_term(a) for a in term.args)})"
    if isinstance(term, Aggregate):
        target = "" if term.target is None else f" {format_term(term.target)}"
        return f"{term.op}{target} : {{ {_format_body(term.body)} }}"
    raise TypeError(term)


def _format_atom(atom: Atom) -> str:
    return f"{atom.relation}({', '.join(format_term(a) for a in atom.args)})"


def _format_literal(lit: BodyLiteral) -> str:
    if isinstance(lit, Atom):
        return _format_atom(lit)
    if isinstance(lit, Negation):
        return "!" + _format_atom(lit.atom)
    assert isinstance(lit, Constraint)
    return f"{format_term(lit.left)} {lit.op} {format_term(lit.right)}"


def _format_body(body: Iterable[BodyLiteral]) -> str:
    return ", ".join(_format_literal(lit) for lit in body)


def format_rule(rule: Rule) -> str:
    """Soufflé text of a rule (one line, ending with ``.``).

    Args:
        rule: The rule.

    Returns:
        The text.
    """
    return f"{_format_atom(rule.head)} :- {_format_body(rule.body)}."


def _divisors(term: Term) -> Iterator[Term]:
    """Right operands of ``/`` and ``%`` in ``term`` (not inside aggregates: their bodies get
    their own guards)."""
    if isinstance(term, BinOp):
        yield from _divisors(term.left)
        yield from _divisors(term.right)
        if term.op in ("/", "%"):
            yield term.right
    elif isinstance(term, Call):
        for arg in term.args:
            yield from _divisors(arg)


def _guard_body(body: tuple[BodyLiteral, ...], head_args: tuple[Term, ...] = ()) -> tuple[BodyLiteral, ...]:
    terms: list[Term] = list(head_args)
    new_body: list[BodyLiteral] = []
    for lit in body:
        if isinstance(lit, Atom):
            terms.extend(lit.args)
        elif isinstance(lit, Negation):
            terms.extend(lit.atom.args)
        else:
            sides = []
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    side = Aggregate(side.op, side.target, _guard_body(side.body, ()), side.loc)
                    if side.target is not None:
                        terms.append(side.target)
                else:
                    terms.append(side)
                sides.append(side)
            lit = Constraint(lit.op, sides[0], sides[1], lit.loc)
        new_body.append(lit)
    for divisor in (d for t in terms for d in _divisors(t)):
        if isinstance(divisor, Const) and divisor.value != 0:
            continue
        guard = Constraint("!=", divisor, Const(0), divisor.loc)
        if guard not in new_body:
            new_body.append(guard)
    return tuple(new_body)


def guard_divisions(rule: Rule) -> Rule:
    """``rule`` with ``d != 0`` added for every divisor ``d`` (of ``/`` or ``%``) that is not a
    non-zero constant, unless the body has that constraint already; inside an aggregate the guard
    goes into the aggregate's body. Soufflé 2.5 aborts on a zero divisor (SIGFPE); with the guard
    the rule instance does not fire, as on the other engines (``analyzer/datalog/functors.py``).

    Args:
        rule: A normalised rule.

    Returns:
        The guarded rule (``rule`` itself when nothing divides).
    """
    body = _guard_body(rule.body, rule.head.args)
    return rule if body == rule.body else Rule(rule.head, body, rule.loc)


def souffle_rule(rule: Rule) -> Rule:
    """``rule`` as printed for Soufflé, with the same meaning there as here (module docstring):
    the wildcards of positive atoms inside aggregates named, divisions guarded.

    Args:
        rule: A normalised rule.

    Returns:
        The rule to print.
    """
    return guard_divisions(name_aggregate_wildcards(rule))


def _format_decl(decl: Decl) -> str:
    cols = ", ".join(f"{name}: {type_name}" for name, type_name in decl.columns)
    text = f".decl {decl.name}({cols})"
    if decl.doc:
        body = "\n".join(f" * {line}".rstrip() for line in decl.doc.replace("*/", "* /").splitlines())
        text = f"/**\n{body}\n */\n{text}"
    return text


def to_souffle(program: Program, *, extra_inputs: Iterable[str] = (), outputs: Iterable[str] | None = None) -> str:
    """Print ``program`` as one Soufflé source file.

    Args:
        program: The program.
        extra_inputs: Relations to declare ``.input`` in addition to ``program.inputs``.
        outputs: Relations to declare ``.output`` (default ``program.outputs``).

    Returns:
        The source text.
    """
    return to_souffle_with_origins(program, extra_inputs=extra_inputs, outputs=outputs)[0]


def to_souffle_with_origins(
    program: Program, *, extra_inputs: Iterable[str] = (), outputs: Iterable[str] | None = None
) -> tuple[str, list[Loc]]:
    """Print ``program`` as one Soufflé source file, with where each printed line came from.

    Args:
        program: The program.
        extra_inputs: Relations to declare ``.input`` in addition to ``program.inputs``.
        outputs: Relations to declare ``.output`` (default ``program.outputs``).

    Returns:
        The source text and, for its line i (0-based), the location of the declaration, fact or
        rule it prints (``NOWHERE`` for ``.input``/``.output`` lines), so that a message of
        Soufflé's about line i + 1 can name the user's file and line.
    """
    chunks: list[tuple[str, Loc]] = []
    for t in program.types.values():
        chunks.append((f".type {t.name} <: {t.parent}", t.loc))
    for decl in program.decls.values():
        chunks.append((_format_decl(decl), decl.loc))
    inputs = list(dict.fromkeys([*program.inputs, *extra_inputs]))
    for name in inputs:
        chunks.append((f".input {name}", NOWHERE))
    for name in dict.fromkeys(program.outputs if outputs is None else outputs):
        chunks.append((f".output {name}", NOWHERE))
    for fact in program.facts:
        values = ", ".join(quote(v) if isinstance(v, str) else str(v) for v in fact.values)
        chunks.append((f"{fact.relation}({values}).", fact.loc))
    for rule in program.rules:
        chunks.append((format_rule(souffle_rule(rule)), rule.loc))
    origins = [loc for text, loc in chunks for _ in text.split("\n")]
    return "\n".join(text for text, _ in chunks) + "\n", origins
