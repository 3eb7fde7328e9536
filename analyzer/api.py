"""Public API: run a check and get its relation tables as pandas DataFrames.

Example::

    from analyzer import check
    result = check("examples/llama_tp2/seq.onnx", ["examples/llama_tp2/rank0.onnx",
                                                   "examples/llama_tp2/rank1.onnx"])
    result.verdict                      # "verified" | "discrepancy" | "unproven"
    pieces = result.tables()["Piece"]   # columns s, r, d, kind, axis, param
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.engines import DEFAULT_ENGINE
from analyzer.errors import InputError
from analyzer.facts.source import FrameChoice
from analyzer.inputs.load import load_inputs
from analyzer.model import CheckInput, CheckResult, tables_of
from analyzer.solve.derive import derive
from analyzer.speedups.proofs import WireProofs
from analyzer.verdict.build import Verdict, build_verdict

if TYPE_CHECKING:
    pass

__all__ = ["CheckResult", "check", "tables_of"]  # the records live in analyzer.model


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector: a check allocates millions of small tuples
    and dicts, hardly any in a reference cycle, and each collection would walk them all.

    On the way out, what is alive is moved to the oldest generation unscanned
    (``gc.freeze()`` then ``gc.unfreeze()``, which also resets the allocation counts), so the
    first allocation after the check does not walk everything the check allocated (a
    young-generation collection of 2-3 ms on GraphGuard's one-layer graphs); the few cycles
    a check leaves (hundreds of objects) go at the next full collection. Skipped when the
    caller has frozen objects of its own (``unfreeze`` would thaw them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _locate_stages(inp: CheckInput, verdict: Verdict) -> None:
    """Set ``stage`` on each discrepancy of a pipeline check: the stage of the rank node for a
    rank-side one, else the one stage whose nodes carry the discrepancy's (or its origin's)
    module scope."""
    from analyzer.importers.pipeline import stage_of

    for d in verdict.discrepancies:
        if d.graph.startswith("r") and d.graph[1:].isdigit():
            d.stage = stage_of(inp.ranks[int(d.graph[1:])], node_name=d.node)
        elif d.graph == "seq":
            model = inp.ranks[0]
            d.stage = stage_of(model, scope=d.scope)
            if d.stage is None and d.origin_scope:
                d.stage = stage_of(model, scope=d.origin_scope)


def check(
    seq: str | Path,
    ranks: Sequence[str | Path],
    *,
    relations: str | Path | None = None,
    engine: str = DEFAULT_ENGINE,
    rules: Sequence[str | Path] = (),
    numeric: bool = False,
    seed: int = 0,
    coverage: bool = False,
    memoize: bool = True,
    pipeline: int | None = None,
    one_rank: bool = True,
    world_size: int | None = None,
    sources: FrameChoice | None = None,
    triage: bool = True,
) -> CheckResult:
    """Check that the rank graphs compute what the sequential graph computes.

    Args:
        seq: path of the sequential ONNX model.
        ranks: paths of the rank models, rank 0 first (world size = ``len(ranks)``).
        relations: optional YAML spec of input relations (see :mod:`analyzer.inputs.infer`); a
            spec with ``mesh:`` makes this a two-axis mesh check (:mod:`analyzer.mesh`: one
            check per mesh axis, composed; ``result.mesh`` holds them).
        engine: ``"seminaive"`` (default), ``"clingo"``, ``"souffle"`` or ``"pydatalog"``.
        rules: extra rule folders.
        numeric: also run the numeric witness (random inputs, simulated collectives; on seeds
            ``seed, seed + 1, ...``, :mod:`analyzer.witness.check`): ``result.numeric`` holds the
            error of every output, ``result.witness`` what it found; a derived relation it refutes
            makes the verdict ``inconsistent`` (with ``rules``, each refuted relation's ``rules``
            names the user rules it is traced to, :mod:`analyzer.solve.blame`; not for a mesh
            spec's checks); a witness that cannot run leaves the verdict as it was
            (``result.witness.skipped`` says why).
        seed: first random seed of the numeric witness.
        coverage: record which rules fired (``result.derivation.coverage``).
        memoize: solve each run of identical decoder layers once (:mod:`analyzer.speedups.memo`).
        pipeline: the rank files are this many pipeline stages (``--pp``; tensor-parallel
            rank fastest): each rank's stages are chained by boundary tensor names
            (:mod:`analyzer.importers.pipeline`), and each discrepancy gets the ``stage`` it lives in.
        one_rank: when every rank file holds the same graph and the input relations are the
            same on every rank, solve rank 0 alone and copy its rows (:mod:`analyzer.speedups.symmetry`;
            the result is the same); False solves every rank.
        world_size: the number of ranks when one rank file serves them all (an SPMD program,
            e.g. an XLA HLO file: ``check("tp1.hlo", ["tp8.hlo"], world_size=8)``).
        sources: which recorded frames are the user's code (include/exclude patterns, the
            source root, path prefixes to map; :class:`analyzer.facts.source.FrameChoice`):
            each discrepancy points at the innermost one (:mod:`analyzer.verdict.sources`).
        triage: when the rules do not verify the check, decide each frontier on numbers
            (:mod:`analyzer.verdict.triage`: ``discrepancy`` when the numbers differ,
            ``unproven`` when they agree); False keeps the rules' verdict.

    Returns:
        A :class:`CheckResult`; ``result.verdict`` is ``"verified"``, ``"discrepancy"`` or (with
        ``numeric``) ``"inconsistent"``.

    Raises:
        analyzer.errors.InputError: bad files, spec or rules (one-line message).
        analyzer.engines.EngineUnavailable: the engine cannot run here.
    """
    spec = None
    if relations is not None:
        from analyzer.inputs.infer import load_spec

        spec = load_spec(relations)
        if spec.mesh is not None:  # a two-axis mesh: one check per axis, composed (analyzer/mesh.py)
            from analyzer.mesh import check_mesh

            if pipeline not in (None, 1):
                raise InputError(f"{spec.path}: a mesh spec cannot be combined with --pp")
            with _no_cyclic_gc():
                return check_mesh(seq, ranks, spec, engine=engine, rules=rules, numeric=numeric, seed=seed,
                                  coverage=coverage, memoize=memoize, one_rank=one_rank, sources=sources,
                                  triage=triage)
    t0 = time.perf_counter()
    proofs = WireProofs()  # the string and shape checks of the files, beside the rest of the check
    with _no_cyclic_gc():
        inp = load_inputs(seq, ranks, spec, pipeline=pipeline, proofs=proofs, world_size=world_size)
        t_load = time.perf_counter() - t0
        derived_from = inp  # the inputs of the last derivation (the triage adds relations)
        try:
            deriv = derive(
                inp, engine=engine, extra_rules=rules, coverage=coverage, memoize=memoize, one_rank=one_rank
            )
            t1 = time.perf_counter()
            verdict = build_verdict(inp, deriv, sources)
            t_triage = 0.0
            if triage and verdict.verdict != "verified":
                from analyzer.verdict.triage import triage as triage_on_numbers

                def rederive(more: CheckInput):
                    nonlocal derived_from
                    derived_from = more
                    return derive(more, engine=engine, extra_rules=rules, coverage=coverage, memoize=False,
                                  one_rank=one_rank)

                t2 = time.perf_counter()
                deriv, verdict = triage_on_numbers(inp, deriv, verdict, rederive, seed=seed)
                t_triage = time.perf_counter() - t2
            if inp.pipeline is not None:
                _locate_stages(inp, verdict)
        finally:
            proofs.settle()  # a malformed file is the error, whatever the check did with it
    deriv.timings = {"load": t_load, **deriv.timings, "report": time.perf_counter() - t1 - t_triage}
    if t_triage:
        deriv.timings["triage"] = t_triage
    result = CheckResult(inp, deriv, verdict, engine, 0.0, sources=sources)
    if numeric:
        from analyzer.witness.check import run_witness

        result.record_witness(run_witness(inp, verdict, deriv, seed=seed))
        if rules and result.witness.contradictions:
            from analyzer.solve.blame import blame_contradictions

            blame_contradictions(derived_from, rules, result.witness.contradictions, engine=engine)
    result.seconds = time.perf_counter() - t0
    return result
