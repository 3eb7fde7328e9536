"""One graph of the numeric witness run on onnxruntime, cut at its collectives.

ONNX Runtime's CPU build has no kernels for the ``com.microsoft`` collectives (they need an
MPI/NCCL build) and cannot pause a graph to meet other ranks. So a rank's graph is cut at each
top-level collective node. Every node that does not wait on a collective's result runs in
one *segment*, extracted as a model of its own and run by ``onnxruntime.InferenceSession``;
then the collectives whose inputs are there are done in numpy, in issue order, by the
rendezvous shared with the other rank threads (:mod:`analyzer.witness.collectives`, NCCL
semantics: the k-th collective of every rank meets the k-th); and again, until every node ran.
So a graph is cut as often as its collectives depend on one another (twice per tensor-parallel
layer; once for all the gradient all-reduces of a training step), not once per collective.
A segment ORT cannot load or run (an op without a CPU kernel, a type ORT refuses) runs on
``onnx.reference`` instead; so does a graph with collectives inside subgraphs (``If``/``Loop``
bodies), whole.

Building a session costs about 20 ms per segment, more than ``onnx.reference`` needs for the
bundled examples' small graphs; :func:`worth_it` says when a graph is large enough for ORT's
kernels to pay that back (docs/benchmarks.md, "Numeric witness on onnxruntime").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from analyzer.witness.collectives import COLLECTIVE_KINDS, CollectiveCall, Rendezvous, _norm_attrs, find_collectives
from analyzer.witness.errors import SimulationError

__all__ = ["WORTH_ELEMENTS", "available", "run_segments", "worth_it"]


#: Elements of a graph's weights and inputs from which ORT's kernels beat session building.
WORTH_ELEMENTS = 2**20


def worth_it(model: onnx.ModelProto) -> bool:
    """Whether ``model`` is large enough to run on ORT (``WORTH_ELEMENTS`` elements or more in
    its initializers and fixed-shape inputs)."""
    total = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
    for vi in model.graph.input:
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            total += int(np.prod(dims))
    return total >= WORTH_ELEMENTS


def available() -> bool:
    """Whether onnxruntime can be imported here."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _subgraph_names(node: onnx.NodeProto) -> set[str]:
    """Outer-scope names read inside a node's subgraphs (If/Loop/Scan bodies)."""
    names: set[str] = set()
    for att in node.attribute:
        graphs = [att.g] if att.type == onnx.AttributeProto.GRAPH else list(att.graphs)
        for g in graphs:
            inner = {i.name for i in g.input} | {i.name for i in g.initializer}
            for n in g.node:
                names.update(v for v in [*n.input, *_subgraph_names(n)] if v and v not in inner)
                inner.update(n.output)
    return names


def _reads(node: onnx.NodeProto) -> list[str]:
    return [v for v in node.input if v] + sorted(_subgraph_names(node))


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    out = {}
    for att in node.attribute:
        value = helper.get_attribute_value(att)
        out[att.name] = value.decode() if isinstance(value, bytes) else value
    return out


def _is_collective(node: onnx.NodeProto, kinds: set[tuple[str, str]]) -> bool:
    return (node.domain, node.op_type) in kinds


def _segment_model(
    model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto], env: Mapping[str, Any], wanted: Sequence[str]
) -> tuple[onnx.ModelProto, list[str]]:
    """A model of ``nodes`` reading the values of ``env`` it needs, writing ``wanted``."""
    made = {o for n in nodes for o in n.output}
    reads = list(dict.fromkeys(v for n in nodes for v in _reads(n) if v not in made))
    feeds = reads  # weights too: fed as arrays, not copied into every segment's model
    inputs = []
    for v in feeds:
        a = np.asarray(env[v])
        inputs.append(helper.make_tensor_value_info(v, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
    known = {vi.name: vi for vi in [*model.graph.value_info, *model.graph.output]}
    outputs = [known.get(v) or helper.make_empty_tensor_value_info(v) for v in wanted]
    graph = helper.make_graph(
        list(nodes),
        "segment",
        inputs,
        outputs,
        value_info=[known[v] for v in made if v in known and v not in wanted],
    )
    seg = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    if any(not o.type.HasField("tensor_type") or not o.type.tensor_type.elem_type for o in seg.graph.output):
        seg = _typed_outputs(seg)
    return seg, feeds


def _typed_outputs(seg: onnx.ModelProto) -> onnx.ModelProto:
    """Output types from ONNX shape inference where the graph did not record them."""
    inferred = onnx.shape_inference.infer_shapes(seg)
    types = {vi.name: vi for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    for i, out in enumerate(seg.graph.output):
        if not out.type.tensor_type.elem_type and out.name in types and types[out.name].type.tensor_type.elem_type:
            seg.graph.output[i].CopyFrom(types[out.name])
    return seg


def _run_ort(seg: onnx.ModelProto, feeds: Mapping[str, Any]) -> list[Any]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1  # the rank threads run side by side
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # built once, run once
    # a session runs once: its arena would only keep freed blocks (1.2 GB of a tp6 simulation)
    opts.enable_cpu_mem_arena = False
    opts.enable_mem_pattern = False
    session = ort.InferenceSession(seg.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return session.run([o.name for o in seg.graph.output], dict(feeds))


def _run_reference(seg: onnx.ModelProto, feeds: Mapping[str, Any], where: str) -> list[Any]:
    """The segment on ``onnx.reference``; a failure names the node (as the whole-graph run does)."""
    import traceback

    from onnx.reference import ReferenceEvaluator

    try:
        evaluator = ReferenceEvaluator(seg)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        msg = f"{type(exc).__name__}: {text[0][:300] if text else ''}"
        raise SimulationError(f"{where}: cannot load the graph: {msg}") from exc
    try:
        return evaluator.run(None, dict(feeds))
    except Exception as exc:
        what = f"a segment of {len(seg.graph.node)} nodes"
        for frame, _ in traceback.walk_tb(exc.__traceback__):
            node = getattr(frame.f_locals.get("node"), "onnx_node", None)
            if frame.f_locals.get("self") is evaluator and node is not None:
                op = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
                what = f"node {node.name!r} ({op})"
        text = str(exc).strip().splitlines()
        raise SimulationError(f"{where}: {what} failed: {type(exc).__name__}: {text[0][:300] if text else ''}") from exc


def run_segments(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    *,
    where: str,
    rank: int,
    hub: Rendezvous,
    keep_intermediates: bool,
    stats: dict | None = None,
) -> dict[str, Any] | None:
    """Run one prepared graph (local functions inlined) segment by segment.

    Args:
        model: the graph.
        feeds: its graph inputs.
        where: ``seq`` or ``rank r``, for messages.
        rank: the rank index at the rendezvous.
        hub: the rendezvous of this simulation.
        keep_intermediates: return every top-level value, not only the graph outputs.
        stats: counts ``ort`` / ``reference`` segments run, when given.

    Returns:
        Values by name, or None when the graph has collectives inside subgraphs (the caller
        runs it whole on ``onnx.reference``).

    Raises:
        SimulationError: a segment fails on both runtimes (naming the graph), or the
            collectives do not pair across ranks (from the rendezvous).
    """
    kinds = set(find_collectives(model))
    top = [n for n in model.graph.node if _is_collective(n, kinds)]
    nested = sum(1 for _ in _walk_collectives(model, kinds))
    if nested != len(top):
        return None
    env: dict[str, Any] = dict(feeds)
    for init in model.graph.initializer:
        env.setdefault(init.name, numpy_helper.to_array(init))
    outputs = [o.name for o in model.graph.output]
    waiting = [n for n in model.graph.node if not _is_collective(n, kinds)]  # in graph order
    queue = [n for n in model.graph.node if _is_collective(n, kinds)]  # issue order
    # without keep_intermediates, a value goes once the nodes that read it have run (an LM
    # head's weights and their transposed copy are not held to the end of the graph)
    readers: dict[str, int] = {}
    if not keep_intermediates:
        for node in model.graph.node:
            for v in set(_reads(node)):
                readers[v] = readers.get(v, 0) + 1
        kept = set(outputs)

    def release(nodes: Sequence[onnx.NodeProto]) -> None:
        if keep_intermediates:
            return
        for node in nodes:
            for v in set(_reads(node)):
                readers[v] -= 1
                if not readers[v] and v not in kept:
                    env.pop(v, None)
    while waiting or queue:
        # every node that does not wait on a collective's result runs now, in one segment
        ready, blocked, known = [], [], set(env)
        for node in waiting:
            if all(v in known for v in _reads(node)):
                ready.append(node)
                known.update(o for o in node.output if o)
            else:
                blocked.append(node)
        if ready:
            made = [o for n in ready for o in n.output if o]
            still = set(outputs).union(*(_reads(n) for n in blocked), *(_reads(n) for n in queue))
            wanted = made if keep_intermediates else [o for o in made if o in still]
            if wanted:
                seg, names = _segment_model(model, ready, env, wanted)
                env.update(zip(wanted, _run_one(seg, {v: env[v] for v in names}, where, stats)))
            release(ready)
        waiting = blocked
        # then the collectives whose inputs are there, in issue order (the k-th meets the k-th)
        done = 0
        for node in queue:
            if not all(v in env for v in node.input if v):
                break
            _collective(node, env, rank, hub)
            release([node])
            done += 1
        queue = queue[done:]
        if not ready and not done:
            raise SimulationError(f"{where}: {len(waiting)} nodes read values no node or input makes")
    if keep_intermediates:
        return env
    return {o: env[o] for o in outputs}


def _collective(node: onnx.NodeProto, env: dict, rank: int, hub: Rendezvous) -> None:
    """One collective in numpy at the rendezvous (NCCL semantics, analyzer/witness/collectives.py)."""
    kind = COLLECTIVE_KINDS[node.op_type]
    args = tuple(np.asarray(env[v]) for v in node.input if v)
    if kind == "wait":
        results = args
    else:
        call = CollectiveCall(node.op_type, kind, node.name, _norm_attrs(node.op_type, _attrs(node)), args)
        results = hub.exchange(rank, call)
    env.update((o, r) for o, r in zip(node.output, results) if o)


def _run_one(seg: onnx.ModelProto, feeds: Mapping[str, Any], where: str, stats: dict | None) -> list[Any]:
    try:
        values = _run_ort(seg, feeds)
        kind = "ort"
    except Exception:  # no CPU kernel, a type ORT refuses: the reference evaluator instead
        values = _run_reference(seg, feeds, where)
        kind = "reference"
    if stats is not None:
        stats[kind] = stats.get(kind, 0) + 1
    return values


def _walk_collectives(model: onnx.ModelProto, kinds: set[tuple[str, str]]):
    from analyzer.witness.collectives import _walk_nodes

    return (n for n in _walk_nodes(model.graph) if _is_collective(n, kinds))
