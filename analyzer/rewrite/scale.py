"""A constant factor that the program divides back out: ``f(c * k) / c == f(k)`` for ``f`` linear.

Pattern (the Hugging Face Trainer under data parallelism with ``average_tokens_across_devices``,
transformers ``trainer.py``, ``compute_loss``: ``loss *= num_processes``; then DDP's default
communication hook, ``torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py``,
``allreduce_hook``: each gradient bucket divided by the world size, then all-reduced): the
backward of ``loss * c`` starts from a seed constant ``c`` (``c * 1``, folded by the exporter)
where the sequential step's seed is 1; every gradient is ``c`` times the sequential rank's until
the hook divides it by ``c``.

Rewrite: for a node ``n`` that reads a one-element float constant ``k`` of whole value ``c >= 2``
at input ``i`` (one edge; ``k`` may have other readers, which keep it), follow every value
computed from that edge. When

- every node reached is homogeneous of degree 1 in its reached inputs (``f(c x) = c f(x)``): the
  op tables ``LinearIn`` / ``LinearJoint`` / ``LinearBeside`` of ``rules/ops/Linear.dl`` (read
  from that file, not written here): ``LinearIn(op, pos)`` with only input ``pos`` reached,
  ``LinearJoint(op)`` with every present input reached, ``LinearBeside(op, pos, other)`` with
  ``pos`` reached and ``other`` reached or a zero constant (``Where(m, x, 0)``, a scatter of
  ``x`` into zeros), nothing else reached;
- every path ends at a *sink*: ``Div(x, c')`` or ``Mul(x, 1/c')`` (either order) with ``c'`` a
  one-element constant of the same value ``c`` (as its float type rounds it), ``x`` reached;
- no reached value is a graph output, and at least one sink exists,

then ``k`` on that edge becomes ``k / c`` (a new constant, value 1 for the seed) and each sink
becomes ``Identity`` of its ``x``: every sink's value is unchanged (``f(c k) / c = f(k)`` by
homogeneity), and nothing else read a reached value. The rewrite keeps the program's semantics
exactly in real arithmetic (the float results agree to rounding; for ``c`` a power of two,
bit for bit). It runs on a copy of each graph, before facts are extracted
(:func:`analyzer.rewrite.canonical.canonicalize`).

The values followed over all edges are bounded by 64 per node of the graph (at least 200,000):
once spent, the remaining edges are left as they are.

A factor that nothing divides back (a gradient summed without the 1/N, the bug
``missing-average``) or a path through an op not in the tables (a collective, a non-linear op)
keeps the graph as it is: the rules then see the scaled values.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper

__all__ = ["cancel_divided_factors", "linearity_tables"]

_WORK_PER_NODE = 64  # values followed over all edges, per node of the graph (bounded work)
_MIN_WORK = 200_000
_FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)


@functools.cache
def linearity_tables() -> tuple[frozenset, frozenset, frozenset]:
    """``(LinearIn, LinearJoint, LinearBeside)`` facts of ``rules/ops/Linear.dl``: sets of
    ``(op, domain, pos)``, ``(op, domain)`` and ``(op, domain, pos, other)``; kept in the
    on-disk cache (:mod:`analyzer.cache`) under a digest of the files read.

    Raises:
        analyzer.datalog.errors.DatalogError: the bundled file does not parse.
    """
    from analyzer.cache import cached, digest
    from analyzer.solve.rulebook import rules_dir, schema_files

    files = [*schema_files(), rules_dir() / "ops" / "Linear.dl"]
    return cached("linearity", digest(f.read_bytes() for f in files), lambda: _read_tables(files))


def _read_tables(files) -> tuple[frozenset, frozenset, frozenset]:
    from analyzer.datalog.parser import load_program

    program = load_program(files, check=False)
    rows: dict[str, set] = defaultdict(set)
    for fact in program.facts:
        rows[fact.relation].add(tuple(fact.values))
    return frozenset(rows["LinearIn"]), frozenset(rows["LinearJoint"]), frozenset(rows["LinearBeside"])


def _constants(g: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Small constants (at most 4096 elements) by value name: initializers and Constant nodes."""
    out: dict[str, np.ndarray] = {}
    for t in g.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL and math.prod(t.dims) <= 4096:
            out[t.name] = numpy_helper.to_array(t)
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1:
            for a in n.attribute:
                if a.name == "value" and math.prod(a.t.dims) <= 4096:
                    out[n.output[0]] = numpy_helper.to_array(a.t)
    return out


def _zeros(g: onnx.GraphProto, consts: dict[str, np.ndarray]) -> set[str]:
    """Values that are all zeros: zero constants, ConstantOfShape of 0 (its default), and
    Transpose/Reshape/Expand/Unsqueeze/Squeeze/Cast of a zero value."""
    zero = {k for k, v in consts.items() if v.size and not np.any(v)}
    for n in g.node:  # nodes are in topological order (ONNX)
        if n.domain not in ("", "ai.onnx") or len(n.output) != 1:
            continue
        if n.op_type == "ConstantOfShape":
            value = [a.t for a in n.attribute if a.name == "value"]
            if not value or not np.any(numpy_helper.to_array(value[0])):
                zero.add(n.output[0])
        elif n.op_type in ("Transpose", "Reshape", "Expand", "Unsqueeze", "Squeeze", "Cast") and n.input[0] in zero:
            zero.add(n.output[0])
    return zero


def _whole_factor(v: np.ndarray) -> int | None:
    """The whole number c >= 2 held by a one-element float constant, else None."""
    if v.size != 1 or v.dtype.kind != "f":
        return None
    x = float(v.reshape(-1)[0])
    return int(x) if x >= 2 and x == int(x) else None


def _divides_by(n: onnx.NodeProto, x: str, c: int, consts: dict[str, np.ndarray]) -> bool:
    """``n`` is ``Div(x, c)`` or ``Mul(x, 1/c)`` / ``Mul(1/c, x)`` (1/c as the constant's float type rounds it)."""
    if n.domain not in ("", "ai.onnx"):
        return False
    ins = list(n.input)
    if n.op_type == "Div" and len(ins) == 2 and ins[0] == x and ins[1] != x:
        v = consts.get(ins[1])
        return v is not None and v.size == 1 and v.dtype.kind == "f" and float(v.reshape(-1)[0]) == c
    if n.op_type == "Mul" and len(ins) == 2 and x in ins and ins[0] != ins[1]:
        v = consts.get(ins[1] if ins[0] == x else ins[0])
        return v is not None and v.size == 1 and v.dtype.kind == "f" and v.reshape(-1)[0] == v.dtype.type(1.0 / c)
    return False


def _homogeneous(n: onnx.NodeProto, reached: set[int], zero_inputs: set[int], tables) -> bool:
    """``n`` is homogeneous of degree 1 in its inputs at positions ``reached`` (the others fixed)."""
    lin_in, joint, beside = tables
    op, dom = n.op_type, n.domain if n.domain != "ai.onnx" else ""
    present = {i for i, v in enumerate(n.input) if v}
    # attribute and operand conditions the tables leave implicit: a Cast to a non-float type
    # rounds (not homogeneous); a Pad's fill value must be zero (or absent)
    if op == "Cast" and any(a.name == "to" and a.i not in _FLOAT_TYPES for a in n.attribute):
        return False
    if op == "Pad" and len(n.input) > 2 and n.input[2] and 2 not in zero_inputs:
        return False
    if (op, dom) in joint and reached == present:
        return True
    if len(reached) == 1 and (op, dom, next(iter(reached))) in lin_in:
        return True
    if op in ("ScatterND", "ScatterElements") and any(
        a.name == "reduction" and a.s not in (b"none", b"add") for a in n.attribute
    ):
        return False  # mul / max / min reductions are not linear
    for o, d, pos, other in beside:
        if (o, d) == (op, dom) and pos in reached and reached <= {pos, other}:
            if other in reached or other in zero_inputs:
                return True
    return False


def _try_edge(g, node_idx: int, pos: int, c: int, consumers, consts, zero, outputs, tables, budget: list[int]):
    """The sinks ({node index: the reached value it divides}) when the edge (node ``node_idx``,
    input ``pos``) can be unscaled by ``c``, else None. Each value followed takes one unit of
    ``budget[0]``; none left: None."""
    nodes = g.node
    reached_vals: set[str] = set()
    reached_in: dict[int, set[int]] = defaultdict(set)
    reached_in[node_idx].add(pos)
    sinks: dict[int, str] = {}
    todo = [node_idx]
    queued = {node_idx}
    while todo:
        j = todo.pop()
        for o in nodes[j].output:
            if not o or o in reached_vals:
                continue
            if o in outputs:
                return None
            reached_vals.add(o)
            budget[0] -= 1
            if budget[0] < 0:
                return None
            for k, i in consumers.get(o, ()):
                if _divides_by(nodes[k], o, c, consts):
                    sinks[k] = o
                    continue
                reached_in[k].add(i)
                if k not in queued:
                    queued.add(k)
                    todo.append(k)
    if not sinks:
        return None
    for k, ins in reached_in.items():
        if k in sinks:
            return None  # a sink reached through its divisor too
        n = nodes[k]
        zero_inputs = {i for i, v in enumerate(n.input) if v in zero}
        if not _homogeneous(n, ins, zero_inputs, tables):
            return None
    return sinks


def cancel_divided_factors(model: onnx.ModelProto, add_initializer=None) -> int:
    """Apply the rewrite of the module docstring to ``model`` in place; returns how many edges
    were unscaled. ``add_initializer(tensor)`` adds the new constants (default: appended to the
    graph's initializers)."""
    g = model.graph
    consts = _constants(g)
    candidates = []
    for j, n in enumerate(g.node):
        for i, v in enumerate(n.input):
            if v in consts:
                c = _whole_factor(consts[v])
                if c is not None:
                    candidates.append((j, i, v, c))
    if not candidates:
        return 0
    tables = linearity_tables()
    consumers: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for j, n in enumerate(g.node):
        for i, v in enumerate(n.input):
            if v:
                consumers[v].append((j, i))
    outputs = {o.name for o in g.output}
    zero = _zeros(g, consts)
    done = 0
    names = {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
    budget = [max(_MIN_WORK, _WORK_PER_NODE * len(g.node))]
    for j, i, v, c in candidates:
        if budget[0] < 0:
            break  # the work bound is spent: the remaining edges keep their factor (no rewrite is sound)
        n = g.node[j]
        if not _homogeneous(n, {i}, set(), tables):
            continue  # fails at the first node: the common case, cheap
        sinks = _try_edge(g, j, i, c, consumers, consts, zero, outputs, tables, budget)
        if sinks is None:
            continue
        arr = consts[v]
        name = f"{v}__div{c}"
        while name in names:
            name += "_"
        names.add(name)
        tensor = numpy_helper.from_array((arr / arr.dtype.type(c)).astype(arr.dtype), name)
        (add_initializer or g.initializer.append)(tensor)
        n.input[i] = name
        consumers[v].remove((j, i))
        consumers[name].append((j, i))
        for k, x in sinks.items():
            s = g.node[k]
            for ii, vv in enumerate(s.input):
                if vv:
                    consumers[vv].remove((k, ii))
            consumers[x].append((k, 0))
            identity = helper.make_node("Identity", [x], list(s.output), name=s.name)
            identity.metadata_props.extend(s.metadata_props)  # the source line stays
            s.CopyFrom(identity)
        done += 1
    return done
