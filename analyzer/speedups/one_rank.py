"""The one-rank world (:mod:`analyzer.speedups.symmetry`) put to work: when every rank runs
the same graph on the same relations, the rules are solved for rank 0 and its rows copied to the
other ranks, unless a rule that tells ranks apart would derive other rows elsewhere."""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.solve.check_facts import CopiedGraphs
from analyzer.speedups.relevance import kept_on_facts
from analyzer.speedups.symmetry import (
    expand_rows,
    has_unprobed_rules,
    probe_relations,
    probes_agree,
    representative_facts,
    unsupported_rules,
)

__all__ = ["solve_one_rank"]


def _one_rank_world(program, tuples: dict[str, list[tuple]], copies: CopiedGraphs, world_size: int):
    """The facts of the one-rank world (:mod:`analyzer.speedups.symmetry`): the other facts and rank 0's
    graph facts as a :class:`~analyzer.engines.clingo_engine.GraphCopies` of ``"r0"`` alone;
    None when the ranks' graphs or facts differ, or a rule the full facts keep may tell ranks
    apart."""
    if list(copies.targets) != ["r0"]:
        return None
    given, copied = copies.engine_facts(tuples, program.decls)
    world = representative_facts(given, program.decls, world_size, copies.targets)
    if world is None or (
        has_unprobed_rules(program) and unsupported_rules(program, kept_on_facts(program, given, copied))
    ):
        return None
    from analyzer.engines.clingo_engine import GraphCopies

    return world, GraphCopies(("r0",), copied[0].rows)


def solve_one_rank(program, run_program, runner, tuples, copies: CopiedGraphs, world_size: int) -> dict | None:
    """Every output relation of the full world, solved in the one-rank world
    (:mod:`analyzer.speedups.symmetry`); None when that world cannot stand in for the full one."""
    world = _one_rank_world(program, tuples, copies, world_size)
    if world is None:
        return None
    given, source = world
    if getattr(runner, "graph_copies", False):
        derived = runner.run(run_program, given, copies=[source])
    else:
        derived = runner.run(run_program, _merged(given, source.rows))
    if not probes_agree(derived, program, world_size):
        return None  # a rule that tells ranks apart derives other rows on another rank
    for name in probe_relations(program):
        derived.pop(name, None)
    return expand_rows(derived, program.decls, world_size)


def _merged(given: dict[str, list[tuple]], graph_rows: Mapping[str, list[tuple]]) -> dict[str, list[tuple]]:
    out = dict(given)
    for name, rows in graph_rows.items():
        out[name] = [*out.get(name, ()), *rows]
    return out
