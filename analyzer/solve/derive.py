"""Solving a check: facts of every graph, input relations and the shape oracles' facts handed to a
Datalog engine running ``schemas/*.dl`` + ``rules/**/*.dl``, which derives to a fixpoint.

The oracles (:mod:`analyzer.solve.oracles`) read only facts, so one engine run reaches the
fixpoint of the rules. When the check is not verified, fused ops on the frontier are expanded
through their ONNX function bodies and the rules run again, while that proves more
(:mod:`analyzer.solve.expand`: the loop of rules and rewriting, until nothing new is proven).
The speed paths (:mod:`analyzer.speedups`) are called at one place each:
:func:`~analyzer.speedups.memo.solve_collapsed` before the whole graph is solved,
:func:`~analyzer.speedups.one_rank.solve_one_rank` in place of the engine run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from analyzer import progress
from analyzer.engines import DEFAULT_ENGINE, get_engine
from analyzer.errors import InputError
from analyzer.facts import FactTables
from analyzer.facts.extract import const_chunk_hashes
from analyzer.inputs.files import check_folder
from analyzer.model import CheckInput, Derivation
from analyzer.solve.check_facts import CopiedGraphs, graph_facts, input_facts
from analyzer.solve.coverage import COVERAGE_RELATION, coverage_of
from analyzer.solve.expand import expand_fused_ops
from analyzer.solve.oracles import (
    const_ints_text,
    microbatch_facts,
    pad_reshape_axes,
    replica_reshape_maps,
    replica_shard_shapes,
    reshape_axis_maps,
    section_spans,
    shard_shapes,
)
from analyzer.solve.program import instrumented, load_program_cached
from analyzer.solve.rulebook import rule_files, schema_files
from analyzer.solve.trust import check_user_files, check_user_rules
from analyzer.speedups.memo import solve_collapsed
from analyzer.speedups.one_rank import solve_one_rank
from analyzer.speedups.symmetry import probe_relations

__all__ = ["bundled_files", "check_facts", "derive", "derive_program", "load_rules"]


def derive(
    inp: CheckInput,
    *,
    engine: str = DEFAULT_ENGINE,
    extra_rules: Sequence[str | Path] = (),
    coverage: bool = False,
    memoize: bool = True,
    one_rank: bool = True,
) -> Derivation:
    """Run the rule library over the facts of ``inp`` to a fixpoint.

    Args:
        inp: loaded models and input relations.
        engine: ``"seminaive"`` (default), ``"clingo"``, ``"souffle"`` or ``"pydatalog"``.
        extra_rules: user rule folders added to the library (``--rules DIR``).
        coverage: also record which rules fired (:mod:`analyzer.solve.coverage`).
        memoize: collapse runs of identical decoder layers (:mod:`analyzer.speedups.memo`); the
            whole graph is checked when the collapsed run's boundary is not a fixpoint.
        one_rank: solve rank 0 alone when the ranks are alike (:mod:`analyzer.speedups.symmetry`).

    Returns:
        The :class:`Derivation`.

    Raises:
        InputError: a user rule file does not parse, cannot be read, or derives a relation of
            the verdict or the core library (:mod:`analyzer.solve.trust`).
        analyzer.engines.EngineUnavailable: the engine cannot run here.
    """
    program = load_rules(extra_rules)
    return derive_program(inp, program, engine=engine, coverage=coverage, memoize=memoize, one_rank=one_rank)


def load_rules(extra_rules: Sequence[str | Path] = ()):
    """The rule program of a check: the library and the ``*.dl`` files of the user folders
    ``extra_rules``, checked against the trust boundary (:mod:`analyzer.solve.trust`).

    Raises:
        InputError: as :func:`derive`.
    """
    for folder in extra_rules:
        check_folder(folder, "rules folder")
    try:
        if extra_rules:  # the user files first, alone: refused or malformed ones fail fast
            user_files = rule_files([Path(p) for p in extra_rules])[len(rule_files()) :]
            check_user_files(user_files, load_program_cached([*schema_files(), *rule_files()]))
        program = load_program_cached([*schema_files(), *rule_files([Path(p) for p in extra_rules])])
    except ValueError as exc:  # DatalogError
        raise InputError(f"rules: {exc}") from None
    if extra_rules:
        check_user_rules(program, bundled_files())
    return program


def bundled_files() -> list[Path]:
    """The library's own rule and schema files (every other file of a program is a user's)."""
    return [*schema_files(), *rule_files()]


def derive_program(
    inp: CheckInput,
    program,
    *,
    engine: str = DEFAULT_ENGINE,
    coverage: bool = False,
    memoize: bool = True,
    one_rank: bool = True,
    extra_facts: dict[str, list[tuple]] | None = None,
) -> Derivation:
    """:func:`derive` with a loaded program (:func:`load_rules`); ``extra_facts`` are added to
    the check's facts (relations the program declares, e.g. the guards of
    :mod:`analyzer.solve.blame`)."""
    if inp.proofs is not None and not memoize:
        inp.proofs.start()
    runner = get_engine(engine)

    def solve(seq, ranks) -> Derivation:
        return _run(inp, seq, ranks, program, runner, coverage, one_rank, extra_facts)

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


def check_facts(inp: CheckInput, seq=None, ranks=None, timings: dict | None = None) -> tuple[FactTables, CopiedGraphs]:
    """The facts the rules start from for ``inp`` (or for ``seq`` and ``ranks`` in its place,
    a collapsed pair of graphs): every graph's tables, the world and the input relations
    (:mod:`analyzer.solve.check_facts`), then the oracles' shape and hash facts
    (:mod:`analyzer.solve.oracles`). ``timings`` gets ``facts`` and ``oracles`` seconds."""
    seq = seq if seq is not None else inp.canonical_seq or inp.seq
    ranks = ranks if ranks is not None else inp.canonical_ranks or inp.ranks
    progress.stage("facts")
    t0 = time.perf_counter()
    facts, copies = graph_facts([seq, *ranks], _same(inp))
    g = seq.graph
    read = {v for n in g.node for v in n.input} | {v for n in g.node for v in n.output} | {o.name for o in g.output}
    facts.extend(input_facts(inp, read))
    facts.extend(const_chunk_hashes(seq, inp.world_size))
    t1 = time.perf_counter()
    facts.extend(shard_shapes(facts, inp.world_size))
    facts.extend(reshape_axis_maps(facts, inp.world_size))
    facts.extend(const_ints_text(facts))
    facts.extend(section_spans(facts, inp.world_size))
    facts.extend(replica_shard_shapes(facts, inp.world_size))
    facts.extend(replica_reshape_maps(facts, inp.world_size))
    facts.extend(microbatch_facts(facts, inp.world_size))
    facts.extend(pad_reshape_axes(facts, inp.world_size))
    if timings is not None:
        timings.update(facts=t1 - t0, oracles=time.perf_counter() - t1)
    return facts, copies


def _run(inp, seq, ranks, program, runner, coverage: bool, one_rank: bool, extra_facts=None) -> Derivation:
    """The check's facts (:func:`check_facts`) and one engine run of ``program`` over them."""
    times: dict = {}
    facts, copies = check_facts(inp, seq, ranks, times)
    t_facts, t_oracles = times["facts"], times["oracles"]
    run_program = instrumented(program) if coverage else program
    fast = one_rank and not coverage  # the one-rank world does not record which rules fired

    tuples = facts.tuples(program.decls)
    progress.stage("solve")
    if extra_facts:
        tuples = {**tuples, **extra_facts}
    t2 = time.perf_counter()
    derived = solve_one_rank(program, run_program, runner, tuples, copies, inp.world_size) if fast else None
    one_rank_solved = derived is not None
    if derived is None and copies.targets and getattr(runner, "graph_copies", False):
        given, copied = copies.engine_facts(tuples, program.decls)
        derived = runner.run(run_program, given, copies=copied)
    elif derived is None:
        derived = runner.run(run_program, tuples)
    t_engine = time.perf_counter() - t2
    fired = coverage_of(program, derived) if coverage else []
    derived.pop(COVERAGE_RELATION, None)
    for name in probe_relations(program):
        derived.pop(name, None)
    return Derivation(
        coverage=fired,
        facts=tuples,
        derived=derived,
        decls=program.decls,
        timings={"facts": t_facts, "oracles": t_oracles, "engine": t_engine},
        one_rank=one_rank_solved,
    )
