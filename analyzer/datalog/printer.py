"""Print a :class:`~analyzer.datalog.syntax.Program` back as Soufflé source.

The output is one self-contained file (includes already resolved, rules normalised) that
parses back to an equal program; the Soufflé engine runs it.
"""

from __future__ import annotations

from collections.abc import Iterable

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

__all__ = ["format_rule", "format_term", "quote", "to_souffle"]

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
    lines: list[str] = []
    for t in program.types.values():
        lines.append(f".type {t.name} <: {t.parent}")
    for decl in program.decls.values():
        lines.append(_format_decl(decl))
    inputs = list(dict.fromkeys([*program.inputs, *extra_inputs]))
    for name in inputs:
        lines.append(f".input {name}")
    for name in dict.fromkeys(program.outputs if outputs is None else outputs):
        lines.append(f".output {name}")
    for fact in program.facts:
        values = ", ".join(quote(v) if isinstance(v, str) else str(v) for v in fact.values)
        lines.append(f"{fact.relation}({values}).")
    for rule in program.rules:
        lines.append(format_rule(rule))
    return "\n".join(lines) + "\n"
