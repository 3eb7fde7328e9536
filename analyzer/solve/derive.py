"""Solving a check: facts of every graph, input relations and oracle facts handed to a Datalog
engine running ``schemas/*.dl`` + ``rules/**/*.dl``, to a fixpoint.

Data flow (``../shared/design/architecture.md``): Python oracles may add facts from what was
derived, and the program runs again until no oracle adds anything (``max_rounds`` is a safety
cap that reports itself when hit). When the check is not verified, fused ops on the frontier are
expanded through their ONNX function bodies and the rules run again, while that proves more
(:mod:`analyzer.solve.expand`). The speed paths (:mod:`analyzer.speedups`) are called at one
place each: :func:`~analyzer.speedups.memo.solve_collapsed` before the whole graph is solved,
:func:`~analyzer.speedups.one_rank.solve_one_rank` inside each engine run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from analyzer.engines import DEFAULT_ENGINE, get_engine
from analyzer.errors import InputError
from analyzer.facts import FactTables
from analyzer.facts.extract import const_chunk_hashes
from analyzer.model import CheckInput, Derivation
from analyzer.solve.check_facts import graph_facts, input_facts
from analyzer.solve.coverage import COVERAGE_RELATION, coverage_of
from analyzer.solve.expand import expand_fused_ops
from analyzer.solve.oracles import (
    const_ints_text,
    microbatch_facts,
    replica_reshape_maps,
    replica_shard_shapes,
    reshape_axis_maps,
    section_spans,
    shard_shapes,
)
from analyzer.solve.program import instrumented, load_program_cached
from analyzer.solve.rulebook import rule_files, schema_files
from analyzer.speedups.memo import solve_collapsed
from analyzer.speedups.one_rank import solve_one_rank
from analyzer.speedups.symmetry import probe_relations

__all__ = ["DerivedOracle", "derive"]

DerivedOracle = Callable[[FactTables, dict[str, list[tuple]]], FactTables]


def derive(
    inp: CheckInput,
    *,
    engine: str = DEFAULT_ENGINE,
    extra_rules: Sequence[str | Path] = (),
    derived_oracles: Sequence[DerivedOracle] = (),
    max_rounds: int = 8,
    coverage: bool = False,
    memoize: bool = True,
    one_rank: bool = True,
) -> Derivation:
    """Run the rule library over the facts of ``inp`` to a fixpoint.

    Args:
        inp: loaded models and input relations.
        engine: ``"seminaive"`` (default), ``"clingo"``, ``"souffle"`` or ``"pydatalog"``.
        extra_rules: user rule folders added to the library (``--rules DIR``).
        derived_oracles: Python oracles reading derived relations and returning new facts.
        max_rounds: safety cap on engine runs.
        coverage: also record which rules fired (:mod:`analyzer.solve.coverage`).
        memoize: collapse runs of identical decoder layers (:mod:`analyzer.speedups.memo`); the
            whole graph is checked when the collapsed run's boundary is not a fixpoint.
        one_rank: solve rank 0 alone when the ranks are alike (:mod:`analyzer.speedups.symmetry`).

    Returns:
        The :class:`Derivation`.

    Raises:
        InputError: a user rule file does not parse.
        analyzer.engines.EngineUnavailable: the engine cannot run here.
    """
    for folder in extra_rules:
        if not Path(folder).is_dir():
            raise InputError(f"{folder}: no such rules folder")
    if inp.proofs is not None and not memoize:
        inp.proofs.start()
    try:
        program = load_program_cached([*schema_files(), *rule_files([Path(p) for p in extra_rules])])
    except ValueError as exc:  # DatalogError
        raise InputError(f"rules: {exc}") from None
    runner = get_engine(engine)

    def solve(seq, ranks) -> Derivation:
        return _run(inp, seq, ranks, program, runner, derived_oracles, max_rounds, coverage, one_rank)

    def solve_all() -> Derivation:
        note = "off"
        if memoize:
            deriv, note = solve_collapsed(inp, solve)
            if deriv is not None:
                return deriv
        t0 = time.perf_counter()
        seq = inp.canonical_seq or inp.seq
        ranks = inp.canonical_ranks or inp.ranks
        t_canonical = time.perf_counter() - t0
        deriv = solve(seq, ranks)
        deriv.timings["canonical"] = t_canonical
        deriv.memo = note
        return deriv

    return expand_fused_ops(inp, solve_all(), solve_all)


def _same(inp: CheckInput) -> list[int] | None:
    """``inp.same_graph`` when it is known."""
    return inp.same_graph if len(inp.same_graph) == 1 + inp.world_size else None


def _run(inp, seq, ranks, program, runner, derived_oracles, max_rounds, coverage, one_rank=True) -> Derivation:
    t0 = time.perf_counter()
    facts, copies = graph_facts([seq, *ranks], _same(inp))
    g = seq.graph
    read = {v for n in g.node for v in n.input} | {v for n in g.node for v in n.output} | {o.name for o in g.output}
    facts.extend(input_facts(inp, read))
    facts.extend(const_chunk_hashes(seq, inp.world_size))
    t_facts = time.perf_counter() - t0

    t1 = time.perf_counter()
    facts.extend(shard_shapes(facts, inp.world_size))
    facts.extend(reshape_axis_maps(facts, inp.world_size))
    facts.extend(const_ints_text(facts))
    facts.extend(section_spans(facts, inp.world_size))
    facts.extend(replica_shard_shapes(facts, inp.world_size))
    facts.extend(replica_reshape_maps(facts, inp.world_size))
    facts.extend(microbatch_facts(facts, inp.world_size))
    t_oracles = time.perf_counter() - t1
    run_program = instrumented(program) if coverage else program

    t_engine = 0.0
    one_rank_runs = 0
    rounds = 0
    capped = False
    while True:
        rounds += 1
        tuples = facts.tuples(program.decls)
        t2 = time.perf_counter()
        derived = None
        if one_rank and not coverage:
            derived = solve_one_rank(program, run_program, runner, tuples, copies, inp.world_size)
        if derived is not None:
            one_rank_runs += 1
        elif copies.targets and getattr(runner, "graph_copies", False):
            given, copied = copies.engine_facts(tuples, program.decls)
            derived = runner.run(run_program, given, copies=copied)
        else:
            derived = runner.run(run_program, tuples)
        t_engine += time.perf_counter() - t2
        t3 = time.perf_counter()
        new = FactTables()
        for oracle in derived_oracles:
            new.extend(oracle(facts, derived))
        t_oracles += time.perf_counter() - t3
        fresh = _only_new(new, facts, program.decls) if new.relations() else new
        if not fresh.relations():
            break
        if rounds >= max_rounds:
            capped = True
            break
        facts.extend(fresh)
    fired = coverage_of(program, derived) if coverage else []
    derived.pop(COVERAGE_RELATION, None)
    for name in probe_relations(program):
        derived.pop(name, None)
    return Derivation(
        coverage=fired,
        facts=tuples,
        derived=derived,
        decls=program.decls,
        rounds=rounds,
        capped=capped,
        timings={"facts": t_facts, "oracles": t_oracles, "engine": t_engine},
        one_rank=one_rank_runs == rounds,
    )


def _only_new(new: FactTables, old: FactTables, decls: dict) -> FactTables:
    out = FactTables()
    old_t = old.tuples(decls)
    for rel, rows in new.tuples(decls).items():
        seen = set(old_t.get(rel, []))
        for row, raw in zip(rows, new.rows(rel)):
            if row not in seen:
                seen.add(row)
                out.add(rel, **raw)
    return out

