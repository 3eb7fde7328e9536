"""Rule coverage: which rules of the library fired on a run.

Every rule ``H(...) :- body.`` gets a twin ``RuleFired(i) :- body.`` before the program is
handed to the engine, so coverage works on every engine without instrumenting it. A rule
*fired* when its body had at least one match in the final model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from analyzer.datalog import Atom, Const, Decl, Program, Rule
from analyzer.datalog.normalize import wildcard_singletons
from analyzer.speedups.symmetry import PROBE_PREFIX

__all__ = ["COVERAGE_RELATION", "RuleCoverage", "instrument", "coverage_of"]

COVERAGE_RELATION = "RuleFired"


@dataclass(frozen=True)
class RuleCoverage:
    """One rule of the program and whether it fired.

    Attributes:
        file: rule file path (as loaded).
        line: 1-based line of the rule.
        head: the relation the rule derives.
        fired: whether its body matched at least once.
    """

    file: str
    line: int
    head: str
    fired: bool


def instrument(program: Program) -> Program:
    """A copy of ``program`` that also derives ``RuleFired(i)`` for every rule i whose body matches."""
    if COVERAGE_RELATION in program.decls:
        raise ValueError(f"the program already declares {COVERAGE_RELATION}")
    decls = dict(program.decls)
    decls[COVERAGE_RELATION] = Decl(COVERAGE_RELATION, (("rule", "number"),), ("number",), "rules that fired")
    twins = [
        wildcard_singletons(Rule(Atom(COVERAGE_RELATION, (Const(i),)), rule.body, rule.loc))
        for i, rule in enumerate(program.rules)
        if not _generated(rule)
    ]
    return dataclasses.replace(
        program,
        decls=decls,
        outputs=[*program.outputs, COVERAGE_RELATION],
        rules=[*program.rules, *twins],
    )


def coverage_of(program: Program, derived: dict[str, list[tuple]]) -> list[RuleCoverage]:
    """Coverage of the (uninstrumented) ``program``'s rules from an instrumented run's output."""
    fired = {row[0] for row in derived.get(COVERAGE_RELATION, [])}
    return [
        RuleCoverage(rule.loc.file or "<string>", rule.loc.line or 0, rule.head.relation, i in fired)
        for i, rule in enumerate(program.rules)
        if not _generated(rule)
    ]


def _generated(rule: Rule) -> bool:
    """A rule the driver adds (the one-rank world's probes, :mod:`analyzer.speedups.symmetry`), not the library's."""
    return rule.head.relation.startswith(PROBE_PREFIX)
