"""Rules that cannot change a program's outputs on a given EDB, found before grounding.

An engine may leave such rules out; the outputs are the same (this is not an approximation):

* **dead**: a rule with a positive body atom (outside aggregates) over a relation that is
  empty in every model: an input relation with no facts and no rules, a relation whose every
  rule is dead, or an input-only relation with no fact holding the atom's constants (e.g.
  ``Node(g, n, "Gather", ...)`` when no graph has a Gather node). A dead rule never fires,
  so the least model of every stratum is unchanged without it;
* **unread**: a rule whose head is not an output and is read (positively, negated or in an
  aggregate) by no kept rule: nothing shown depends on it.

Both sets are closed by fixpoints; the analysis over-approximates which relations can be
non-empty, which is the safe direction. Measured on the collapsed 405B TP-8 check
(549 rules, 279 kept): clingo's parse + grounding 0.27 -> 0.22 s; on GraphGuard's Qwen2 TP-2
graphs 0.07 -> 0.05 s (most of which is clingo's fixed cost per rule).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    BinOp,
    BodyLiteral,
    Call,
    Const,
    Constraint,
    Negation,
    Program,
    Term,
)

__all__ = ["RuleShape", "body_relations", "kept_on_facts", "kept_rules", "program_shapes", "rule_shapes"]


@dataclass(frozen=True)
class RuleShape:
    """What the analysis needs of one rule.

    Attributes:
        head: the head relation.
        positive: per positive body atom outside aggregates, its relation and the
            (column, constant) pairs of its constant arguments.
        reads: every relation the body reads (also negated and inside aggregates).
    """

    head: str
    positive: tuple[tuple[str, tuple[tuple[int, str | int], ...]], ...]
    reads: frozenset[str]


def rule_shapes(program: Program) -> tuple[RuleShape, ...]:
    """The :class:`RuleShape` of each rule of ``program``, in order."""
    out = []
    for rule in program.rules:
        positive = tuple(
            (lit.relation, tuple((i, a.value) for i, a in enumerate(lit.args) if isinstance(a, Const)))
            for lit in rule.body
            if isinstance(lit, Atom)
        )
        reads: set[str] = set()
        body_relations(rule.body, reads)
        out.append(RuleShape(rule.head.relation, positive, frozenset(reads)))
    return tuple(out)


def program_shapes(program: Program) -> tuple[RuleShape, ...]:
    """:func:`rule_shapes` of ``program``, kept on it (:meth:`~analyzer.datalog.syntax.Program.kept`)."""
    return program.kept("_rule_shapes", rule_shapes)


def kept_on_facts(program: Program, rows: Mapping[str, list[tuple]], copies: Sequence = ()) -> list[int]:
    """:func:`kept_rules` of ``program`` on the EDB ``rows`` plus the program's own facts and
    ``copies`` (graphs whose facts are one graph's relabelled: objects with ``graphs``, the
    graph names, and ``rows``, the first graph's facts by relation; see
    :class:`~analyzer.engines.clingo_engine.GraphCopies`)."""
    own = _program_fact_values(program)
    given = {relation for relation, _ in own} | {name for name, r in rows.items() if r}
    for copy in copies:
        given |= {name for name, r in copy.rows.items() if r}
    cache: dict[tuple[str, int], frozenset] = {}

    def column_values(relation: str, col: int) -> frozenset:
        key = (relation, col)
        if key not in cache:
            values = set(own.get(key, ()))
            given = rows.get(relation, ())
            try:
                values.update([row[col] for row in given])
            except IndexError:  # a short row: the engine's own check names it later
                values.update(row[col] for row in given if len(row) > col)
            decl = program.decls.get(relation)
            for copy in copies:
                copied = copy.rows.get(relation)
                if not copied:
                    continue
                if decl is not None and col < decl.arity and decl.column_names[col] == "g":
                    values.update(copy.graphs)
                else:
                    values.update(row[col] for row in copied if len(row) > col)
            cache[key] = frozenset(values)
        return cache[key]

    return kept_rules(program_shapes(program), program.outputs, given, column_values)


def _program_fact_values(program: Program) -> dict[tuple[str, int], frozenset]:
    """(relation, column) -> the values of the facts written in the program, kept on it."""
    return program.kept("_program_fact_values", _fact_values)


def _fact_values(program: Program) -> dict[tuple[str, int], frozenset]:
    values: dict[tuple[str, int], set] = {}
    for f in program.facts:
        for i, v in enumerate(f.values):
            values.setdefault((f.relation, i), set()).add(v)
        values.setdefault((f.relation, -1), set())  # a relation with a fact, also of arity 0
    return {k: frozenset(v) for k, v in values.items()}


def body_relations(body: Iterable[BodyLiteral], into: set[str]) -> None:
    """Add to ``into`` every relation a rule body reads: its atoms, negated atoms, and the atoms
    inside aggregates (also in constraints and function arguments)."""
    for lit in body:
        if isinstance(lit, Atom):
            into.add(lit.relation)
            _term_reads(lit.args, into)
        elif isinstance(lit, Negation):
            into.add(lit.atom.relation)
        elif isinstance(lit, Constraint):
            _term_reads((lit.left, lit.right), into)


def _term_reads(terms: Iterable[Term], into: set[str]) -> None:
    for term in terms:
        if isinstance(term, Aggregate):
            body_relations(term.body, into)
            if term.target is not None:
                _term_reads((term.target,), into)
        elif isinstance(term, BinOp):
            _term_reads((term.left, term.right), into)
        elif isinstance(term, Call):
            _term_reads(term.args, into)


def kept_rules(
    shapes: Sequence[RuleShape],
    outputs: Collection[str],
    given: Collection[str],
    column_values: Callable[[str, int], Collection],
) -> list[int]:
    """Indices of the rules that are neither dead nor unread (module docstring).

    Args:
        shapes: :func:`rule_shapes` of the program.
        outputs: the output relations.
        given: relations with at least one fact (EDB tuples or program facts).
        column_values: ``(relation, column)`` -> the values of that column over all facts of
            an input relation (called only for relations no rule derives).

    Returns:
        Rule indices in program order.
    """
    derived = {s.head for s in shapes}
    nonempty = set(given)
    matches: dict[tuple[str, tuple], bool] = {}

    def possible(relation: str, consts: tuple[tuple[int, str | int], ...]) -> bool:
        if relation not in nonempty:
            return False
        if relation in derived or not consts:
            return True
        key = (relation, consts)
        if key not in matches:
            matches[key] = all(value in column_values(relation, col) for col, value in consts)
        return matches[key]

    live = [False] * len(shapes)
    changed = True
    while changed:
        changed = False
        for i, shape in enumerate(shapes):
            if not live[i] and all(possible(rel, consts) for rel, consts in shape.positive):
                live[i] = True
                nonempty.add(shape.head)
                changed = True
    needed = set(outputs)
    kept = [False] * len(shapes)
    changed = True
    while changed:
        changed = False
        for i, shape in enumerate(shapes):
            if live[i] and not kept[i] and shape.head in needed:
                kept[i] = True
                needed |= shape.reads
                changed = True
    return [i for i, k in enumerate(kept) if k]
