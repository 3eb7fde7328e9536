"""Which user rules a refuted relation came from.

When ``--numeric`` refutes a relation the rules derived (a
:class:`~analyzer.model.Contradiction`) and the check ran with user rule files (``--rules
DIR``), the report names the user rules behind it by ``file:line``. The provenance is
recomputed for that one relation by running the program again with some user rules switched
off (delta debugging, Zeller and Hildebrandt, *Simplifying and Isolating Failure-Inducing
Input*, TSE 2002, in its simplest one-at-a-time form):

1. with every user rule off: when the relation is still derived, the library alone derives
   it and no user rule is named;
2. with every user rule on: when the relation is not derived again (it came from a
   derivation this rerun does not repeat), no user rule is named;
3. otherwise, starting from all user rules, each rule is switched off in turn and stays off
   when the relation is still derived without it. The rules left on are a minimal set that
   derives the relation with the library (switching off any one of them loses it): those
   are named.

A rule is switched off by a guard: the program is copied once with the body of every user
rule extended by ``ShardlogUserRuleOn(i)`` (``i``: the rule's index), and each run gives the
guard rows of the rules that are on. The guarded program is compiled once; a run is a plain
:func:`~analyzer.solve.derive.derive_program` (whole graph, no one-rank world, no collapsed
layers: the plainest derivation). That is ``#user rules + 2`` runs, done only when a relation
is refuted and user rules were loaded, for at most :data:`MAX_BLAMED` refuted relations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from pathlib import Path

from analyzer.datalog.syntax import Atom, Const, Decl, Program
from analyzer.model import CheckInput, Contradiction, Derivation

__all__ = [
    "GUARD",
    "MAX_BLAMED",
    "blame_contradictions",
    "blame_user_rules",
    "derives",
    "guarded_program",
    "user_rule_indices",
]

#: The guard relation of the user rules (one number column: the rule's index in the program).
GUARD = "ShardlogUserRuleOn"
#: Refuted relations traced back, at most (each costs ``#user rules + 2`` runs of the rules).
MAX_BLAMED = 4


def user_rule_indices(program: Program, bundled: Collection[str | Path]) -> list[int]:
    """Indices in ``program.rules`` of the rules of user files (any file not in ``bundled``)."""
    library = {str(p) for p in bundled}
    return [i for i, rule in enumerate(program.rules) if rule.loc.file is not None and rule.loc.file not in library]


def guarded_program(program: Program, indices: Sequence[int]) -> Program:
    """A copy of ``program`` whose rules ``indices`` also need ``ShardlogUserRuleOn(i)`` (see the
    module docstring); the rule order and the rank probes are kept."""
    from analyzer.speedups.symmetry import _ATTR, with_rank_probes

    with_rank_probes(program)  # its analysis is copied: rule indices are unchanged
    on = set(indices)
    rules = [
        dataclasses.replace(rule, body=(*rule.body, Atom(GUARD, (Const(i),), rule.loc))) if i in on else rule
        for i, rule in enumerate(program.rules)
    ]
    decls = {**program.decls, GUARD: Decl(GUARD, (("rule", "number"),), ("number",), "user rules switched on")}
    guarded = dataclasses.replace(program, decls=decls, rules=rules, inputs=[*program.inputs, GUARD],
                                  outputs=list(program.outputs), facts=list(program.facts))
    guarded.__dict__[_ATTR] = program.__dict__[_ATTR]  # the rank probes' analysis (not a field)
    return guarded


def derives(deriv: Derivation, refuted: Contradiction) -> bool:
    """Whether ``deriv`` derives the refuted relation: ``Holds`` of its value with its layout
    and, for a relation of one piece per rank, those pieces."""
    from analyzer.verdict.build import layout_of

    holds = [row for row in deriv.derived.get("Holds", []) if row[0] == refuted.value]
    rows = [row for row in holds if str(layout_of(*row[1:])) == refuted.relation]
    if not rows:
        micro = refuted.relation.startswith("Partial(sum, micro=")
        return micro and any(layout_of(*row[1:]).micro is not None for row in holds)
    if any(" + " in name for name in refuted.rank_values) or not refuted.rank_values:
        return True
    cols = list(deriv.decls["Piece"].column_names)
    pieces = set()
    for row in deriv.derived.get("Piece", []):
        p = dict(zip(cols, row))
        if p["s"] == refuted.value:
            pieces.add((p["kind"], p["axis"], p["param"], p["r"], p["d"]))
    return any(
        all((*row[1:], r, name) in pieces for r, name in enumerate(refuted.rank_values)) for row in rows
    )


def blame_user_rules(
    inp: CheckInput, program: Program, bundled: Collection[str | Path], refuted: Sequence[Contradiction],
    *, engine: str,
) -> dict[int, list[str]]:
    """The user rules behind each refuted relation (module docstring).

    Args:
        inp: the check's inputs (with the relations its last derivation had).
        program: the check's program (library and user rules).
        bundled: the library's files.
        refuted: the refuted relations.
        engine: the engine to run.

    Returns:
        ``{position in refuted: ["file:line", ...]}`` for the relations traced to user rules.
    """
    from analyzer.solve.derive import derive_program

    users = user_rule_indices(program, bundled)
    if not users or not refuted:
        return {}
    inp = dataclasses.replace(inp, proofs=None)  # the files' checks ran with the check itself
    guarded = program.kept("_blame_guarded", lambda p: guarded_program(p, users))
    runs: dict[frozenset, Derivation] = {}

    def run(on: frozenset) -> Derivation:
        if on not in runs:
            runs[on] = derive_program(inp, guarded, engine=engine, memoize=False, one_rank=False,
                                      extra_facts={GUARD: [(i,) for i in sorted(on)]})
        return runs[on]

    found: dict[int, list[str]] = {}
    for pos, c in enumerate(refuted[:MAX_BLAMED]):
        if derives(run(frozenset()), c) or not derives(run(frozenset(users)), c):
            continue
        kept = set(users)
        for i in users:
            if derives(run(frozenset(kept - {i})), c):
                kept.discard(i)
        found[pos] = [f"{program.rules[i].loc.file}:{program.rules[i].loc.line}" for i in sorted(kept)]
    return found


def blame_contradictions(
    inp: CheckInput, folders: Sequence[str | Path], refuted: Sequence[Contradiction], *, engine: str
) -> None:
    """Set ``rules`` of each refuted relation to the ``file:line`` of the user rules of
    ``folders`` it is traced to (:func:`blame_user_rules`; left empty when it is not)."""
    from analyzer.solve.derive import bundled_files, load_rules

    for pos, names in blame_user_rules(inp, load_rules(folders), bundled_files(), refuted, engine=engine).items():
        refuted[pos].rules = names
