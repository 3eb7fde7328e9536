"""A relation the witness refutes in the graphs' own precision, re-checked in float64.

The witness's tolerance (:func:`analyzer.witness.check.tolerance`, ``1e-5 + 1e-4 * max|s|``)
is what float32 rounding explains. A graph computed in float16 (transformers-neuronx's HLO:
f16 activations, one f16 rounding is 4.9e-4 of the value) or one whose rounding an operation
amplifies (the mean of squares of an RMSNorm over values that already carry the rounding of
an all-reduce, the sum of a rank's partial products rounded before the all-reduce) exceeds it
on a correct program. So a refutation counts only after a second run: the same inputs (the
sequential inputs of the refuting seed, widened; the ranks' inputs derived from them through
the same input relations, so a ``Partial`` split sums to its value in float64 too) through
the same graphs with every floating type widened to float64 (:func:`widen`), and the same
tolerance. Rounding shrinks by 2**29 from float32 (2**42 from float16); the error of a wrong
relation does not depend on the precision, so a bug stays refuted and a false alarm goes.

Only the values the refutations need run (:func:`cones`): the nodes they depend on, in the
sequential graph and in each rank's; every rank also runs the collectives up to the last one
any rank's cone needs (the k-th collective of every rank meets the k-th,
:mod:`analyzer.witness.collectives`), so the ranks' collectives pair as in the full run.

Not widened: integer and bool values, and what an op computes in a fixed type of its own
(``LayerNormalization``'s float32 ``stash_type`` on onnx.reference). Semantics: ONNX's type
constraints (a float op takes and gives one floating type, ``Cast``'s ``to``, the ``dtype``
attributes of the generators).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnx.inliner
from onnx import TensorProto, helper, numpy_helper

from analyzer.layout import Layout
from analyzer.witness.collectives import find_collectives
from analyzer.witness.inputs import feed_inputs, rank_inputs
from analyzer.witness.segments import _reads
from analyzer.witness.simulate import SimResult, run_fed

__all__ = ["FLOATS", "cones", "rerun_float64", "widen"]

#: the floating element types widened to float64
FLOATS = frozenset({TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16})
# attributes naming an output's element type (Cast's ``to``; the generators' ``dtype``)
_TYPE_ATTRS = {"to", "dtype"}


def _widen_tensor(t: TensorProto) -> None:
    if t.data_type in FLOATS:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))


def _widen_graph(g: onnx.GraphProto) -> None:
    for vi in [*g.input, *g.output, *g.value_info]:
        if vi.type.tensor_type.elem_type in FLOATS:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    for t in g.initializer:
        _widen_tensor(t)
    for node in g.node:
        for att in node.attribute:
            if att.name in _TYPE_ATTRS and att.type == onnx.AttributeProto.INT and att.i in FLOATS:
                att.i = TensorProto.DOUBLE
            elif att.type == onnx.AttributeProto.TENSOR:
                _widen_tensor(att.t)
            elif att.type == onnx.AttributeProto.GRAPH:
                _widen_graph(att.g)
            elif att.type == onnx.AttributeProto.GRAPHS:
                for sub in att.graphs:
                    _widen_graph(sub)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            # value_float(s) make a float32 constant: a float64 tensor instead
            for att in list(node.attribute):
                if att.name in ("value_float", "value_floats"):
                    values = [att.f] if att.name == "value_float" else list(att.floats)
                    arr = np.asarray(values[0] if att.name == "value_float" else values, dtype=np.float64)
                    node.attribute.remove(att)
                    node.attribute.append(helper.make_attribute("value", numpy_helper.from_array(arr)))


def widen(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` (local functions inlined) computing in float64: every float32,
    float16 and bfloat16 input, output, value type, initializer, constant and ``Cast`` /
    ``dtype`` target becomes float64; integers and bools stay."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    if out.functions:
        out = onnx.inliner.inline_local_functions(out)
    _widen_graph(out.graph)
    return out


def _cone_nodes(model: onnx.ModelProto, values: Sequence[str]) -> list[int]:
    """Indices of the top-level nodes ``values`` depend on (graph order)."""
    producer = {o: i for i, node in enumerate(model.graph.node) for o in node.output if o}
    seen: set[str] = set()
    picked: set[int] = set()
    todo = [v for v in values if v]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        i = producer.get(v)
        if i is not None and i not in picked:
            picked.add(i)
            todo.extend(_reads(model.graph.node[i]))
    return sorted(picked)


def _sub_model(model: onnx.ModelProto, picked: Sequence[int], outputs: Sequence[str]) -> onnx.ModelProto:
    """``model`` with the nodes ``picked`` only, the inputs and initializers they read, and
    ``outputs`` as its outputs."""
    nodes = [model.graph.node[i] for i in picked]
    reads = {v for node in nodes for v in _reads(node)} | set(outputs)
    known = {vi.name: vi for vi in [*model.graph.input, *model.graph.value_info, *model.graph.output]}
    made = {o for node in nodes for o in node.output}
    graph = helper.make_graph(
        nodes,
        model.graph.name,
        [vi for vi in model.graph.input if vi.name in reads],
        [known.get(v) or helper.make_empty_tensor_value_info(v) for v in outputs],
        initializer=[t for t in model.graph.initializer if t.name in reads],
        value_info=[vi for vi in model.graph.value_info if vi.name in made and vi.name not in outputs],
    )
    out = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    return out


def cones(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto], seq_values: Sequence[str],
    rank_values: Sequence[Sequence[str]],
) -> tuple[onnx.ModelProto, list[onnx.ModelProto]]:
    """The parts of the graphs that compute ``seq_values`` (sequential) and ``rank_values[r]``
    (rank r), as models whose outputs are those values.

    Each rank's part also holds its collectives up to the last one that any rank's part needs
    (and what they read), so that the k-th collectives of the ranks still pair; collectives
    are those :func:`analyzer.witness.collectives.find_collectives` knows, in graph order.
    """
    seq_part = _sub_model(seq, _cone_nodes(seq, seq_values), list(dict.fromkeys(seq_values)))
    order = []
    for model in ranks:
        kinds = set(find_collectives(model))
        order.append([i for i, n in enumerate(model.graph.node) if (n.domain, n.op_type) in kinds])
    wanted = [list(dict.fromkeys(v)) for v in rank_values]
    depth = 0  # every rank runs its first `depth` collectives
    while True:
        closed = [_cone_nodes(m, [*w, *(o for i in order[r][:depth] for o in m.graph.node[i].output)])
                  for r, (m, w) in enumerate(zip(ranks, wanted))]
        sets = [set(c) for c in closed]
        need = max((p + 1 for r, c in enumerate(sets) for p, i in enumerate(order[r]) if i in c), default=0)
        if need <= depth:
            break
        depth = need
    rank_parts = [_sub_model(m, c, w) for m, c, w in zip(ranks, closed, wanted)]
    return seq_part, rank_parts


def _wide(value: np.ndarray) -> np.ndarray:
    arr = np.asarray(value)
    return arr.astype(np.float64) if arr.dtype.kind == "f" or arr.dtype.name == "bfloat16" else arr


def rerun_float64(
    seq: onnx.ModelProto,
    ranks: Sequence[onnx.ModelProto],
    input_relations: Mapping[str, Layout],
    seq_values: Sequence[str],
    rank_values: Sequence[Sequence[str]],
    *,
    seed: int,
    aliases: Mapping[str, tuple[str, Layout]] | None = None,
    mesh_axis: str | None = None,
    widened: bool = True,
) -> SimResult:
    """Run the parts of the graphs that compute ``seq_values`` / ``rank_values[r]``
    (:func:`cones`) in float64 (:func:`widen`) on the inputs of seed ``seed``.

    The sequential inputs are drawn as :func:`analyzer.witness.simulate.run_ranks` draws them
    for ``seed`` (the same values), then widened; the ranks' inputs are derived from the widened
    ones through ``input_relations`` and ``aliases`` (as there, from the generator
    ``[seed, 1]``).

    Args:
        seq: the sequential model the refuting run ran.
        ranks: the rank models it ran.
        input_relations: layout of each fed input by name.
        seq_values: the sequential values wanted.
        rank_values: the rank values wanted, per rank.
        seed: the seed of the refuting run.
        aliases: rank inputs named otherwise than their sequential value.
        mesh_axis: as for ``run_ranks``.
        widened: False runs the same parts in the graphs' own types on the same inputs (what
            the refuting run computed; for comparison).

    Returns:
        The :class:`~analyzer.witness.simulate.SimResult`: ``seq`` and ``ranks`` hold the wanted
        values (float64 where they are floating).

    Raises:
        SimulationError: the parts cannot run (or their collectives do not pair).
    """
    from analyzer.witness.inputs import random_inputs
    from analyzer.witness.simulate import _prepare

    seq_model = _prepare(seq)
    rank_models = [_prepare(m) for m in ranks]
    seq_part, rank_parts = cones(seq_model, rank_models, seq_values, rank_values)
    if widened:
        seq_part = widen(seq_part)
        rank_parts = [widen(m) for m in rank_parts]
    drawn = random_inputs(seq_model, np.random.default_rng(seed), world_size=len(rank_models))
    needed = {vi.name for vi in feed_inputs(seq_part)}
    for m in rank_parts:
        for vi in feed_inputs(m):
            needed.add(aliases[vi.name][0] if aliases and vi.name in aliases else vi.name)
    wide = {name: _wide(drawn[name]) if widened else drawn[name] for name in needed if name in drawn}
    del drawn
    feeds = rank_inputs(wide, rank_parts, input_relations, np.random.default_rng([seed, 1]), aliases)
    seq_feeds = {vi.name: wide[vi.name] for vi in feed_inputs(seq_part) if vi.name in wide}
    return run_fed(seq_part, rank_parts, seq_feeds, feeds, keep_intermediates=False, mesh_axis=mesh_axis)
