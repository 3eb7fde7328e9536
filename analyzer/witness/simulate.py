"""Numeric witness: run the sequential and the rank graphs on the same random inputs.

The static checker derives relations (:class:`~analyzer.layout.Layout`) between sequential
values and their per-rank counterparts; this module confirms them numerically:

1. :func:`run_ranks` draws random inputs for the sequential graph, derives each rank's
   inputs through the input relations, runs the sequential graph and every rank graph with
   ``onnx.reference.ReferenceEvaluator`` (all standard ops; initializers as stored in each
   file) and simulates the collectives between the rank threads with NCCL semantics
   (:mod:`analyzer.witness.collectives`: the k-th collective of rank 0 meets the k-th of every
   other rank).
2. :func:`rebuild` / :func:`relation_error` turn rank pieces back into the sequential value
   and measure the error; :func:`witness` does it for the graph outputs,
   :func:`check_relations` for any list of (intermediate) relations.

Example::

    sim = run_ranks(seq, [rank0, rank1], {"x": REPLICATE}, keep_intermediates=True)
    bad = check_relations(sim, [("h", Layout("Shard", axis=1), ["h", "h"])], tol=1e-4)
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.inliner
from onnx.reference import ReferenceEvaluator

from analyzer.layout import Layout
from analyzer.witness import segments
from analyzer.witness.collectives import (
    AxisRendezvous,
    CollectiveCall,
    RankAborted,
    Rendezvous,
    collective_ops_for,
    find_collectives,
)
from analyzer.witness.errors import CollectiveMismatch, SimulationError
from analyzer.witness.inputs import guess_input_relations, random_inputs, rank_inputs
from analyzer.witness.layouts import (
    distribute,
    max_abs_diff,
    rebuild,
    relation_error,
    relative_error,
    replicate_spread,
)

__all__ = [
    "CollectiveMismatch",
    "SimResult",
    "SimulationError",
    "check_relations",
    "distribute",
    "guess_input_relations",
    "max_abs_diff",
    "rebuild",
    "relation_error",
    "relative_error",
    "replicate_spread",
    "run_fed",
    "run_ranks",
    "witness",
]

ModelLike = onnx.ModelProto | str | Path


@dataclass
class SimResult:
    """Values computed by one simulation.

    Attributes:
        seq: sequential values by name — the graph outputs, or with
            ``keep_intermediates`` every top-level value (inputs, initializers, node
            outputs; values inside subgraphs / inlined-function internals excepted).
        ranks: the same per rank, in rank order.
        seq_inputs: the random inputs fed to the sequential graph.
        rank_inputs: the inputs fed to each rank (derived through the input relations).
        collectives: completed collectives in issue order, one :class:`CollectiveCall`
            per rank.
        seconds: wall time of the simulation.
    """

    seq: dict[str, Any]
    ranks: list[dict[str, Any]]
    seq_inputs: dict[str, np.ndarray] = field(default_factory=dict)
    rank_inputs: list[dict[str, np.ndarray]] = field(default_factory=list)
    collectives: list[tuple[CollectiveCall, ...]] = field(default_factory=list)
    seconds: float = 0.0

    def pieces(self, names: Sequence[str]) -> list[Any]:
        """Rank values ``[ranks[r][names[r]] for r]``.

        Raises:
            SimulationError: ``len(names)`` is not the number of ranks, or a name is absent
                (rerun with ``keep_intermediates=True`` for intermediate values).
        """
        if len(names) != len(self.ranks):
            raise SimulationError(f"{len(names)} rank value names for {len(self.ranks)} ranks")
        out = []
        for r, name in enumerate(names):
            if name not in self.ranks[r]:
                raise SimulationError(f"rank {r}: no value named {name!r}")
            out.append(self.ranks[r][name])
        return out


def _load(model: ModelLike) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    return onnx.load(str(model))


def _prepare(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inline local functions and declare collective domains missing from opset_import.

    ``ReferenceEvaluator`` does not pass ``new_ops`` to function bodies, so functions are
    inlined (the call sites' outputs keep their names). The caller's model is not changed.
    """
    missing = {d for d, _ in find_collectives(model)} - {o.domain for o in model.opset_import}
    if not model.functions and not missing:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for domain in sorted(missing):
        out.opset_import.append(onnx.helper.make_opsetid(domain, 1))
    if out.functions:
        out = onnx.inliner.inline_local_functions(out)
    return out


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    return f"{type(exc).__name__}: {msg[:limit]}"


def _failing_node(exc: BaseException, evaluator: ReferenceEvaluator) -> str | None:
    """Name and op of the top-level node that was running when ``exc`` was raised."""
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if frame.f_locals.get("self") is evaluator and "node" in frame.f_locals:
            node = getattr(frame.f_locals["node"], "onnx_node", None)
            if node is not None:
                op = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
                return f"node {node.name!r} ({op})"
    return None


def _evaluate(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    *,
    where: str,
    rank: int,
    hub: Rendezvous,
    keep_intermediates: bool,
) -> dict[str, Any]:
    """Run one graph; any failure becomes a one-line :class:`SimulationError`. A large graph
    runs on onnxruntime, cut at its collectives (:mod:`analyzer.witness.segments`);
    ``$SHARDLOG_WITNESS_RUNTIME`` = ``onnxruntime`` / ``reference`` forces one runtime (default
    ``auto``); onnxruntime missing or collectives inside subgraphs: ``onnx.reference``."""
    runtime = os.environ.get("SHARDLOG_WITNESS_RUNTIME", "auto")
    if (
        runtime != "reference"
        and segments.available()
        and (runtime == "onnxruntime" or segments.worth_it(model))
    ):
        values = segments.run_segments(
            model, feeds, where=where, rank=rank, hub=hub, keep_intermediates=keep_intermediates
        )
        if values is not None:
            return values
    try:
        evaluator = ReferenceEvaluator(model, new_ops=collective_ops_for(model, rank, hub))
    except Exception as exc:
        raise SimulationError(f"{where}: cannot load the graph: {_one_line(exc)}") from exc
    try:
        if keep_intermediates:
            values = evaluator.run(None, dict(feeds), intermediate=True)
            values.pop("", None)
            return values
        outs = evaluator.run(None, dict(feeds))
        return dict(zip(evaluator.output_names, outs))
    except SimulationError as exc:
        node = _failing_node(exc, evaluator)
        if isinstance(exc, (CollectiveMismatch, RankAborted)) or node is None:
            raise
        raise type(exc)(f"{where}: {node}: {exc}") from exc
    except Exception as exc:
        node = _failing_node(exc, evaluator) or "a node"
        raise SimulationError(f"{where}: {node} failed: {_one_line(exc)}") from exc


def _run_threads(
    ranks: Sequence[onnx.ModelProto],
    feeds: Sequence[Mapping[str, np.ndarray]],
    hub: Rendezvous,
    keep_intermediates: bool,
) -> list[dict[str, Any]]:
    n = len(ranks)
    results: list[dict[str, Any] | None] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def work(r: int) -> None:
        try:
            results[r] = _evaluate(
                ranks[r],
                feeds[r],
                where=f"rank {r}",
                rank=r,
                hub=hub,
                keep_intermediates=keep_intermediates,
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors[r] = exc
            hub.fail(r, exc)
        else:
            hub.finish(r)

    threads = [threading.Thread(target=work, args=(r,), name=f"shardlog-rank{r}", daemon=True) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    primary = [e for e in errors if e is not None and not isinstance(e, RankAborted)]
    if primary or any(errors):
        exc = primary[0] if primary else next(e for e in errors if e is not None)
        if isinstance(exc, SimulationError):
            raise type(exc)(str(exc)) from exc
        raise SimulationError(f"rank simulation failed: {_one_line(exc)}") from exc
    return [r for r in results if r is not None]


def run_ranks(
    seq: ModelLike,
    ranks: Sequence[ModelLike],
    input_relations: Mapping[str, Layout],
    *,
    seed: int = 0,
    keep_intermediates: bool = False,
    int_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
    timeout: float = 300.0,
    aliases: Mapping[str, tuple[str, Layout]] | None = None,
    mesh_axis: str | None = None,
) -> SimResult:
    """Run the sequential graph and all rank graphs on the same random inputs.

    Args:
        seq: the sequential model (or a path).
        ranks: the rank models (or paths), rank order; ``N = len(ranks)``.
        input_relations: layout of each fed input by name (initializers need none: every
            file holds its own). Unrelated rank inputs with the sequential name and shape
            get the same array.
        seed: seed of the random inputs (and of Partial input pieces).
        keep_intermediates: keep every top-level value, not only the graph outputs.
        int_ranges: ``{name: (low, high)}`` for integer inputs (see
            :mod:`analyzer.witness.inputs` for the defaults: Gather bound, else ``[0, 8)``).
        dims: values of symbolic input dimensions (default 4 each).
        timeout: seconds a rank may wait at one collective.
        aliases: rank inputs named otherwise than their sequential value (see
            :func:`analyzer.witness.inputs.rank_inputs`).
        mesh_axis: the ranks are one group along this axis of a mesh check (docs/mesh.md): a
            collective over another axis meets no other rank
            (:class:`~analyzer.witness.collectives.AxisRendezvous`). None: every collective is
            over all ranks.

    Returns:
        The :class:`SimResult`.

    Raises:
        CollectiveMismatch: the ranks' k-th collectives do not pair up.
        SimulationError: a graph cannot run (message names the graph and the node).
    """
    start = time.perf_counter()
    seq_model = _prepare(_load(seq))
    rank_models = [_prepare(_load(m)) for m in ranks]
    if not rank_models:
        raise SimulationError("no rank graphs given")
    rng = np.random.default_rng(seed)
    seq_feeds = random_inputs(seq_model, rng, dims=dims, int_ranges=int_ranges, world_size=len(rank_models))
    partial_rng = np.random.default_rng([seed, 1])
    feeds = rank_inputs(seq_feeds, rank_models, input_relations, partial_rng, aliases)
    sim = run_fed(seq_model, rank_models, seq_feeds, feeds, keep_intermediates=keep_intermediates,
                  timeout=timeout, mesh_axis=mesh_axis)
    sim.seconds = time.perf_counter() - start
    return sim


def run_fed(
    seq: onnx.ModelProto,
    ranks: Sequence[onnx.ModelProto],
    seq_feeds: Mapping[str, np.ndarray],
    feeds: Sequence[Mapping[str, np.ndarray]],
    *,
    keep_intermediates: bool = False,
    timeout: float = 300.0,
    mesh_axis: str | None = None,
) -> SimResult:
    """Run prepared graphs (:func:`run_ranks` prepares them) on the given inputs: the second
    half of :func:`run_ranks`, for a caller that made the inputs itself (the float64 re-check,
    :mod:`analyzer.witness.recheck`). Arguments and errors as there."""
    start = time.perf_counter()
    rank_models = list(ranks)
    seq_values = _evaluate(
        seq,
        seq_feeds,
        where="seq",
        rank=0,
        hub=Rendezvous(1, timeout) if mesh_axis is None else AxisRendezvous(1, mesh_axis, timeout),
        keep_intermediates=keep_intermediates,
    )
    if mesh_axis is None:
        hub = Rendezvous(len(rank_models), timeout)
    else:
        hub = AxisRendezvous(len(rank_models), mesh_axis, timeout)
    rank_values = _run_threads(rank_models, feeds, hub, keep_intermediates)
    return SimResult(
        seq=seq_values,
        ranks=rank_values,
        seq_inputs=dict(seq_feeds),
        rank_inputs=[dict(f) for f in feeds],
        collectives=hub.log,
        seconds=time.perf_counter() - start,
    )


def witness(
    seq: ModelLike,
    ranks: Sequence[ModelLike],
    input_relations: Mapping[str, Layout],
    output_relations: Mapping[str, tuple[Layout, Sequence[str]]],
    *,
    seed: int = 0,
    int_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
    aliases: Mapping[str, tuple[str, Layout]] | None = None,
) -> dict[str, float]:
    """Max abs error of each sequential output rebuilt from the rank values.

    Args:
        seq: the sequential model (or a path).
        ranks: the rank models (or paths).
        input_relations: see :func:`run_ranks`.
        output_relations: ``{seq output name: (layout, [rank value name per rank])}``;
            rank value names may be intermediates.
        seed: seed of the random inputs.
        int_ranges: see :func:`run_ranks`.
        dims: see :func:`run_ranks`.
        aliases: see :func:`run_ranks`.

    Returns:
        ``{seq output name: relation_error}`` (``inf`` for a shape mismatch).

    Raises:
        SimulationError: a graph cannot run, or a named value does not exist.
    """
    rank_models = [_load(m) for m in ranks]
    outputs = [{o.name for o in m.graph.output} for m in rank_models]
    need_all = any(
        name not in outputs[r]
        for _, names in output_relations.values()
        for r, name in enumerate(names)
        if r < len(outputs)
    )
    sim = run_ranks(
        seq,
        rank_models,
        input_relations,
        seed=seed,
        keep_intermediates=need_all,
        int_ranges=int_ranges,
        dims=dims,
        aliases=aliases,
    )
    errors: dict[str, float] = {}
    for name, (layout, names) in output_relations.items():
        if name not in sim.seq:
            raise SimulationError(f"seq: no output named {name!r}")
        errors[name] = relation_error(layout, sim.seq[name], sim.pieces(names))
    return errors


def check_relations(
    sim: SimResult,
    relations: Iterable[tuple[str, Layout, Sequence[str]]],
    tol: float,
) -> list[tuple[str, Layout, float]]:
    """The relations that the simulation refutes.

    Args:
        sim: a simulation (with ``keep_intermediates=True`` for intermediate values).
        relations: ``(seq value name, layout, [rank value name per rank])`` triples.
        tol: largest acceptable max abs error.

    Returns:
        ``(seq name, layout, error)`` for every relation whose error exceeds ``tol`` or is
        NaN; a value missing from the simulation counts as ``inf``.
    """
    failed = []
    for name, layout, names in relations:
        present = name in sim.seq and len(names) == len(sim.ranks)
        if not present or any(n not in vals for n, vals in zip(names, sim.ranks)):
            err = float("inf")
        else:
            err = relation_error(layout, sim.seq[name], sim.pieces(names))
        if not err <= tol:
            failed.append((name, layout, err))
    return failed
