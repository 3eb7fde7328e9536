"""Python oracles: shape algebra that Datalog does badly, written as facts for the rules.

Each oracle reads fact tables (and, in the driver loop, derived relations) and returns new
rows for relations declared in ``schemas/inputs.dl``, with the ``Param_*`` rows of every
layout param it writes (``schemas/layouts.dl``); the params of the input relations are read
from their ``Param_*`` rows, never from their text. No op semantics live here: which ops use a
reshape axis map is said by ``rules/ops/Reshape.dl``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence

from analyzer.facts import FactTables
from analyzer.layout import micro_family, micro_param, param_facts, replicas_param, sections_param

__all__ = [
    "shard_shapes",
    "reshape_axis_maps",
    "const_ints_text",
    "reshape_axis_map",
    "reshape_strided_map",
    "strided_param",
    "section_spans",
    "replica_factors",
    "replica_shard_shapes",
    "replica_reshape_maps",
    "microbatch_counts",
    "microbatch_facts",
    "pad_reshape_axes",
]


def strided_param(size: int, split_factor: int) -> str:
    """Layout param of a strided shard (DTensor's ``_StridedShard(dim, split_factor)``) of an
    axis of ``size``: the axis is ``split_factor`` equal sections, each split into N chunks,
    which is the fused-sections form of ``Shard`` ("12,12,...", see analyzer/layout.py);
    "" for a plain shard (split factor 1)."""
    return "" if split_factor == 1 else sections_param([size // split_factor] * split_factor)


def _add_param(out: FactTables, seen: set[str], param: str, **fields) -> None:
    """Add the ``Param_*`` rows of ``param`` (:func:`analyzer.layout.param_facts`) once."""
    if param and param not in seen:
        seen.add(param)
        for name, row in param_facts(param, **fields):
            out.add(name, **row)


def _seq_shapes(facts: FactTables) -> dict[str, list[int]]:
    """Static seq shapes (shapes with a data-dependent size: :func:`_symbolic_seq_shapes`)."""
    out = {}
    for row in facts.rows("Value_Shape"):
        if row["g"] == "seq":
            dims = row["shape"].split(",") if row["shape"] else []
            if all(d.isdigit() for d in dims):
                out[row["value"]] = [int(d) for d in dims]
    return out


def _symbolic_seq_shapes(facts: FactTables) -> dict[str, list[int | str]]:
    """Seq shapes with a data-dependent size (``u0``: analyzer/facts/extract.py), sizes as ints."""
    out: dict[str, list[int | str]] = {}
    for row in facts.rows("Value_Shape"):
        if row["g"] == "seq" and row["shape"]:
            dims = row["shape"].split(",")
            if not all(d.isdigit() for d in dims):
                out[row["value"]] = [int(d) if d.isdigit() else d for d in dims]
    return out


def _numel(dims: Sequence[int | str]) -> tuple[int, tuple[str, ...]]:
    """The element count of a shape as (product of the sizes, sorted data-dependent size names)."""
    return math.prod(d for d in dims if isinstance(d, int)), tuple(sorted(d for d in dims if isinstance(d, str)))


def shard_shapes(facts: FactTables, world_size: int) -> FactTables:
    """``ShardShape(s, axis, shape)``: each static seq shape with one axis divided by N.

    Args:
        facts: tables holding ``Value_Shape`` rows.
        world_size: N.

    Returns:
        New rows, one per (seq value, axis) whose size is divisible by N.
    """
    out = FactTables()
    for value, dims in [*_seq_shapes(facts).items(), *_symbolic_seq_shapes(facts).items()]:
        for axis, size in enumerate(dims):
            if isinstance(size, int) and size % world_size == 0 and size > 0:
                local = dims.copy()
                local[axis] = size // world_size
                out.add("ShardShape", s=value, axis=axis, shape=",".join(map(str, local)))
    return out


def reshape_axis_map(in_shape: Sequence[int | str], out_shape: Sequence[int | str], world_size: int) -> dict[int, int]:
    """Where a shard of each input axis lands after a row-major reshape.

    Splitting input axis ``a`` into N contiguous chunks equals splitting output axis ``b``
    into N chunks exactly when the product of the axes before them is the same and both
    sizes are divisible by N (row-major order: ONNX Reshape spec).

    Args:
        in_shape: input shape; a data-dependent size (a name such as ``u0``) counts as a factor of
            its own, and an axis of that size is never split.
        out_shape: output shape with the same element count.
        world_size: N (>= 2).

    Returns:
        in_axis -> out_axis for every input axis that maps.
    """
    if _numel(in_shape) != _numel(out_shape):
        return {}
    outer_out: dict[tuple, int] = {}
    for b, size in enumerate(out_shape):
        if isinstance(size, int) and size % world_size == 0 and size > 0:
            outer_out.setdefault(_numel(out_shape[:b]), b)
    result = {}
    for a, size in enumerate(in_shape):
        if isinstance(size, int) and size % world_size == 0 and size > 0:
            b = outer_out.get(_numel(in_shape[:a]))
            if b is not None:
                result[a] = b
    return result


_MAX_SPLIT_FACTOR = 256  # the param spells every section out


def _divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order (pairs ``d``, ``n // d`` with ``d * d <= n``;
    a vocabulary axis of 128256 costs 358 steps, not 128256)."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def reshape_strided_map(in_shape: list[int], out_shape: list[int], world_size: int) -> list[tuple[int, int, int, int]]:
    """Where a (possibly strided) shard of each input axis lands after a row-major reshape.

    A shard of axis ``a`` with split factor ``P`` gives rank r, inside each of the
    ``E = prod(shape[:a]) * P`` leading blocks of the flat element order, the r-th of N
    contiguous chunks. Two shards with the same ``E`` hold the same elements, so input
    (a, P_in) maps to output (b, P_out) when ``prod(out[:b]) * P_out == E`` and output axis b's
    inner factor ``out[b] / P_out`` is divisible by N. This is how heads sharded on
    ``[B, heads, ...]`` become a strided shard of ``[B * heads, ...]`` (an attention kernel's
    batched matmul) and a plain shard again after the view back.

    Returns:
        (in_axis, P_in, out_axis, P_out) for every mapping from a plain to a strided shard or
        back. Plain to plain is :func:`reshape_axis_map`, which also carries a strided shard
        through an axis whose leading product does not change.
    """
    if math.prod(in_shape) != math.prod(out_shape) or world_size < 2 or 0 in in_shape or 0 in out_shape:
        return []
    result = []
    for a, size in enumerate(in_shape):
        for p_in in _divisors(size) if size > 0 else []:
            if (size // p_in) % world_size:
                continue
            blocks = math.prod(in_shape[:a]) * p_in
            if p_in > _MAX_SPLIT_FACTOR:
                break
            for b, out_size in enumerate(out_shape):
                outer = math.prod(out_shape[:b])
                if blocks % outer:
                    continue
                p_out = blocks // outer
                if p_out > _MAX_SPLIT_FACTOR or (p_in > 1) == (p_out > 1):
                    continue
                if out_size % p_out or (out_size // p_out) % world_size:
                    continue
                result.append((a, p_in, b, p_out))
                break
    return result


def reshape_axis_maps(facts: FactTables, world_size: int) -> FactTables:
    """``ReshapeAxisMap(n, in_axis, out_axis)`` and ``ReshapeStridedMap`` for seq nodes whose input 0 and output 0 have
    static shapes of equal size that differ (every reshape-like node, whatever its op)."""
    shapes = _seq_shapes(facts)
    out = FactTables()
    seen: set[str] = set()
    symbolic = _symbolic_seq_shapes(facts)
    for node, src, dst in _seq_first_io(facts):
        if src in symbolic and dst in symbolic and symbolic[src] != symbolic[dst]:
            for a, b in reshape_axis_map(symbolic[src], symbolic[dst], world_size).items():
                out.add("ReshapeAxisMap", n=node, in_axis=a, out_axis=b)
            continue
        if src not in shapes or dst not in shapes or shapes[src] == shapes[dst]:
            continue
        for a, b in reshape_axis_map(shapes[src], shapes[dst], world_size).items():
            out.add("ReshapeAxisMap", n=node, in_axis=a, out_axis=b)
        for a, p_in, b, p_out in reshape_strided_map(shapes[src], shapes[dst], world_size):
            in_param, out_param = strided_param(shapes[src][a], p_in), strided_param(shapes[dst][b], p_out)
            out.add("ReshapeStridedMap", n=node, in_axis=a, in_param=in_param, out_axis=b, out_param=out_param)
            for param, size, factor in ((in_param, shapes[src][a], p_in), (out_param, shapes[dst][b], p_out)):
                _add_param(out, seen, param, sections=[size // factor] * factor)
    return out


def const_ints_text(facts: FactTables) -> FactTables:
    """``Const_IntsText(g, value, text)``: small integer constants as comma-joined text."""
    elems: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
    for row in facts.rows("Const_Int"):
        elems[(row["g"], row["value"])][row["pos"]] = row["v"]
    out = FactTables()
    for (g, value), items in elems.items():
        out.add("Const_IntsText", g=g, value=value, text=",".join(str(items[i]) for i in sorted(items)))
    return out


def _input_params(facts: FactTables) -> set[str]:
    """The params of the ``Shard`` input relations."""
    return {row["param"] for row in facts.rows("InputPiece") if row["kind"] == "Shard"}


def _input_sections(facts: FactTables) -> dict[str, list[tuple[int, int]]]:
    """(size, replicas) of each section of every fused-sections param of a ``Shard`` input
    relation, in order (its ``Param_Section`` rows)."""
    params = _input_params(facts)
    found: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    for row in facts.rows("Param_Section"):
        if row["p"] in params:
            found[row["p"]][row["index"]] = (row["size"], row["replicas"])
    return {p: [sections[i] for i in sorted(sections)] for p, sections in found.items()}


def section_spans(facts: FactTables, world_size: int | None = None) -> FactTables:
    """``SectionSpan(param, start, end, span)``: for every fused-sections layout param of the
    input relations (e.g. "1536,256,256"), the element range [start, end) of
    each run of consecutive sections along the axis, and that run's own param ("" for one
    section, "rep{k}" for one section replicated over groups of k ranks, e.g. "256,256" for
    the last two). A slice of exactly those elements keeps them sharded section by section.

    With ``world_size`` and a param with replicated sections (``"1536,256:rep2,256:rep2"``),
    also ``SectionLocalSpan(param, start, end, local_start, local_end)``: where that run lies in
    a rank's piece, and ``SectionOf(param, index, sizes, span)``: section ``index``'s own param
    when the sections are cut by sizes ``sizes`` ("1536,256,256")."""
    out = FactTables()
    seen: set[str] = set()
    for param, entries in sorted(_input_sections(facts).items()):
        sizes = [size for size, _ in entries]
        reps = [k for _, k in entries]
        bounds = [0, *itertools.accumulate(sizes)]
        mixed = world_size is not None and any(k > 1 for k in reps)
        if mixed:
            local = [0, *itertools.accumulate(size * k // world_size for size, k in entries)]
            plain = sections_param(sizes)
        for i in range(len(sizes)):
            for j in range(i + 1, len(sizes) + 1):
                if j - i > 1:
                    span = sections_param(sizes[i:j], reps[i:j])
                    _add_param(out, seen, span, sections=sizes[i:j], section_replicas=reps[i:j])
                elif reps[i] > 1:
                    span = replicas_param(reps[i])
                    _add_param(out, seen, span, replicas=reps[i])
                else:
                    span = ""
                out.add("SectionSpan", param=param, start=bounds[i], end=bounds[j], span=span)
                if mixed:
                    out.add(
                        "SectionLocalSpan", param=param, start=bounds[i], end=bounds[j],
                        local_start=local[i], local_end=local[j],
                    )
                    if j == i + 1:
                        out.add("SectionOf", param=param, index=i, sizes=plain, span=span)
    return out


def replica_factors(facts: FactTables, world_size: int) -> list[int]:
    """The group sizes k of the ``Shard(axis, replicas=k)`` input relations (param "rep{k}")."""
    params = _input_params(facts)
    found = {row["replicas"] for row in facts.rows("Param_Replicas") if row["p"] in params}
    found.update(k for entries in _input_sections(facts).values() for _, k in entries)
    return sorted(k for k in found if 1 < k < world_size and world_size % k == 0)


def _mixed_section_params(facts: FactTables) -> dict[str, list[tuple[int, int]]]:
    """Fused-sections params with replicated sections, and every run of two or more of their
    consecutive sections that has one (what slices and concats of the fused tensor carry):
    param -> (size, replicas) of each section."""
    out = {}
    for entries in _input_sections(facts).values():
        for i in range(len(entries)):
            for j in range(i + 2, len(entries) + 1):
                run = entries[i:j]
                if any(k > 1 for _, k in run):
                    out[sections_param([size for size, _ in run], [k for _, k in run])] = run
    return out


def replica_shard_shapes(facts: FactTables, world_size: int) -> FactTables:
    """``ParamShardShape(s, axis, param, shape)`` for the replicated-group layouts
    (analyzer/layout.py): with groups of k ranks, "rep{k}" divides the axis by ``N / k``, and
    "rep{k}/{b}" also divides axis b by k. Rows only for the factors k of the input relations;
    also for fused-sections params with replicated sections (section i divided by
    ``N / replicas[i]``) on the axes of their total size."""
    out = FactTables()
    seen: set[str] = set()
    mixed = _mixed_section_params(facts)
    if mixed:
        for value, dims in _seq_shapes(facts).items():
            for param, entries in sorted(mixed.items()):
                total = sum(size for size, _ in entries)
                if any(world_size % k or size % (world_size // k) for size, k in entries):
                    continue
                for axis, size in enumerate(dims):
                    if size == total:
                        local = dims.copy()
                        local[axis] = sum(size * k // world_size for size, k in entries)
                        out.add("ParamShardShape", s=value, axis=axis, param=param, shape=",".join(map(str, local)))
                        _add_param(
                            out, seen, param, sections=[s for s, _ in entries], section_replicas=[k for _, k in entries]
                        )
    # every "rep{k}/{b}" a rule may name (parallel/gqa.dl: an Expand's broadcast axis b)
    axes = max((row["ndim"] for row in facts.rows("Value_NDim") if row["g"] == "seq"), default=0)
    for k in replica_factors(facts, world_size):
        _add_param(out, seen, replicas_param(k), replicas=k)
        for b in range(axes):
            _add_param(out, seen, replicas_param(k, b), replicas=k, inner=b)
        groups = world_size // k
        for value, dims in _seq_shapes(facts).items():
            for axis, size in enumerate(dims):
                if size <= 0 or size % groups:
                    continue
                local = dims.copy()
                local[axis] = size // groups
                out.add("ParamShardShape", s=value, axis=axis, param=replicas_param(k), shape=",".join(map(str, local)))
                for b, inner in enumerate(dims):
                    if b != axis and inner > 0 and inner % k == 0:
                        both = local.copy()
                        both[b] = inner // k
                        shape = ",".join(map(str, both))
                        out.add("ParamShardShape", s=value, axis=axis, param=replicas_param(k, b), shape=shape)
    return out


def _seq_reshapes(facts: FactTables, shapes: dict[str, list[int]]):
    """``(node, input shape, output shape)`` of each seq node whose first output has the
    elements of its first input in another shape (Reshape, Flatten, Squeeze, ...)."""
    for node, src, dst in _seq_first_io(facts):
        if src in shapes and dst in shapes and shapes[src] != shapes[dst]:
            if math.prod(shapes[src]) == math.prod(shapes[dst]):
                yield node, shapes[src], shapes[dst]


def _seq_first_io(facts: FactTables):
    """``(node, input 0, output 0)`` of each seq node that has both."""
    first_in = {x["node"]: x["value"] for x in facts.rows("Node_Input") if x["g"] == "seq" and x["pos"] == 0}
    first_out = {x["node"]: x["value"] for x in facts.rows("Node_Output") if x["g"] == "seq" and x["pos"] == 0}
    for node, src in first_in.items():
        if node in first_out:
            yield node, src, first_out[node]


def replica_reshape_maps(facts: FactTables, world_size: int) -> FactTables:
    """``ReshapeStridedMap`` rows of the replicated-group layouts for reshape-like seq nodes.

    A ``Shard(a, replicas=k)`` is N / k contiguous chunks, so it maps like a plain shard over
    N / k ranks (:func:`reshape_axis_map`): "rep{k}" -> "rep{k}". A ``Shard(a, replicas=k,
    inner=a+1)`` whose axis a has N / k elements (one per group), with axes a and a + 1 merged
    into output axis b (same leading product), is the plain ``Shard(b)``: rank ``g*k + j``
    holds elements ``[(g*k + j) * m, ...)`` of the merged axis, m = size(a+1) / k (HF's
    ``repeat_kv`` reshape of the expanded kv heads).
    """
    ks = replica_factors(facts, world_size)
    out = FactTables()
    if not ks:
        return out
    for node, a_shape, b_shape in _seq_reshapes(facts, _seq_shapes(facts)):
        for k in ks:
            groups = world_size // k
            if groups >= 2:
                for a, b in reshape_axis_map(a_shape, b_shape, groups).items():
                    rep = replicas_param(k)
                    out.add("ReshapeStridedMap", n=node, in_axis=a, in_param=rep, out_axis=b, out_param=rep)
            for a in range(len(a_shape) - 1):
                if a_shape[a] != groups or a_shape[a + 1] % k:
                    continue
                lead = math.prod(a_shape[:a])
                for b, size in enumerate(b_shape):
                    if math.prod(b_shape[:b]) == lead and size == a_shape[a] * a_shape[a + 1]:
                        inner = replicas_param(k, a + 1)
                        out.add("ReshapeStridedMap", n=node, in_axis=a, in_param=inner, out_axis=b, out_param="")
    return out


def microbatch_counts(facts: FactTables) -> set[int]:
    """Micro-batch counts M >= 2 that rank graphs may cut their rows into: a rank-graph Slice
    of a graph input along axis 0 (constant bounds, one axis) whose length L divides the
    input's size D there, at a multiple of L, gives M = D / L (gradient accumulation slices the
    rank's batch inputs this way; slices of caches and intermediates are not looked at, so
    other graphs get no micro-batch facts); and the M of every input relation with a
    micro-batch layout (an ``InputPiece`` param with a ``Param_Micro`` row)."""
    # micro-batches given as separate inputs (a spec's micro_batches: analyzer/inputs/infer.py)
    params = {x["param"] for x in facts.rows("InputPiece")}
    out = {x["batches"] for x in facts.rows("Param_Micro") if x["p"] in params}
    nodes = {(x["g"], x["node"]) for x in facts.rows("Node") if x["g"] != "seq" and x["op"] == "Slice"}
    if not nodes:
        return out
    inputs = {(x["g"], x["value"]) for x in facts.rows("GraphInput") if x["g"] != "seq"}
    ins: dict[tuple, dict[int, str]] = defaultdict(dict)
    for x in facts.rows("Node_Input"):
        if (x["g"], x["node"]) in nodes:
            ins[(x["g"], x["node"])][x["pos"]] = x["value"]
    ints: dict[tuple, dict[int, int]] = defaultdict(dict)
    for x in facts.rows("Const_Int"):
        if x["g"] != "seq":
            ints[(x["g"], x["value"])][x["pos"]] = x["v"]
    dim0 = {(x["g"], x["value"]): x["size"] for x in facts.rows("Value_Dim") if x["g"] != "seq" and x["axis"] == 0}
    for (g, _node), args in ins.items():
        st, en, ax = (ints.get((g, args.get(i, "")), {}) for i in (1, 2, 3))
        if set(st) != {0} or set(en) != {0} or ax != {0: 0}:
            continue
        if (g, args.get(0, "")) not in inputs:
            continue
        size = dim0.get((g, args.get(0, "")))
        if not size or size <= 0:
            continue
        start, end = st[0], min(en[0], size)
        length = end - start
        if length > 0 and start >= 0 and size % length == 0 and start % length == 0 and size // length >= 2:
            out.add(size // length)
    return out


def microbatch_facts(facts: FactTables, world_size: int) -> FactTables:
    """Facts of the micro-batch layouts (analyzer/layout.py, ``micro``) for the counts M of
    :func:`microbatch_counts`: ``Param_Micro`` of every micro-batch param "mb{M}:{k}";
    ``ParamShardShape(s, axis, "mb{M}", shape)``, the seq shape with the axis divided by N*M;
    and ``ReshapeStridedMap(n, a, "mb{M}", b, "mb{M}")`` where N*M contiguous chunks of input
    axis a are N*M contiguous chunks of output axis b (:func:`reshape_axis_map` over N*M)."""
    out = FactTables()
    counts = sorted(microbatch_counts(facts))
    if not counts:
        return out
    shapes = _seq_shapes(facts)
    given = {x["p"] for x in facts.rows("Param_Micro")}
    for m in counts:
        for k in range(m):
            _add_param(out, given, micro_param(m, k), micro=(m, k))
        chunks = world_size * m
        for value, dims in shapes.items():
            for axis, size in enumerate(dims):
                if size > 0 and size % chunks == 0:
                    local = dims.copy()
                    local[axis] = size // chunks
                    shape = ",".join(map(str, local))
                    out.add("ParamShardShape", s=value, axis=axis, param=micro_family(m), shape=shape)
    for node, src_shape, dst_shape in _seq_reshapes(facts, shapes):
        for m in counts:
            for a, b in reshape_axis_map(src_shape, dst_shape, world_size * m).items():
                family = micro_family(m)
                out.add("ReshapeStridedMap", n=node, in_axis=a, in_param=family, out_axis=b, out_param=family)
    return out


_RESHAPE_LIKE = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")  # the ops of rules/ops/Reshape.dl


def pad_reshape_axes(facts: FactTables, world_size: int) -> FactTables:
    """``PadReshapeAxis(n, a, U, b, U2)`` for reshape-like seq nodes, when some input relation
    is a padded shard (a ``Param_Pad`` row; analyzer/padding.py): a unit of ``U`` elements of
    input axis ``a`` is a unit of ``U2`` elements of output axis ``b`` (the same run of
    elements, row-major: the axes before them hold the same number of elements and
    ``U * stride_in(a) == U2 * stride_out(b)``), with the same unit count on both axes. ``U``
    ranges over the divisors of the axis size; reshapes that keep the shape map every axis to
    itself. Also ``ShapeAround(s, a, pre, post)``, the text of each static seq shape around
    each axis. ``world_size`` is unused (the map is the same for every N)."""
    out = FactTables()
    if not facts.rows("Param_Pad"):
        return out
    shapes = _seq_shapes(facts)
    for value, dims in shapes.items():
        text = [str(d) for d in dims]
        for a in range(len(dims)):
            pre = ",".join(text[:a]) + ("," if a else "")
            post = ("," if a + 1 < len(dims) else "") + ",".join(text[a + 1 :])
            out.add("ShapeAround", s=value, axis=a, pre=pre, post=post)
    reshapes = {x["node"] for x in facts.rows("Node") if x["g"] == "seq" and x["op"] in _RESHAPE_LIKE}
    for node, src, dst in _seq_first_io(facts):
        if node not in reshapes or src not in shapes or dst not in shapes:
            continue
        ins, outs = shapes[src], shapes[dst]
        if math.prod(ins) != math.prod(outs) or not ins or not outs:
            continue
        for a, size in enumerate(ins):
            if size <= 1:
                continue
            before, stride = math.prod(ins[:a]), math.prod(ins[a + 1 :])
            for b, osize in enumerate(outs):
                if math.prod(outs[:b]) != before or osize <= 1:
                    continue
                ostride = math.prod(outs[b + 1 :])
                for unit in _divisors(size):
                    if (unit * stride) % ostride:
                        continue
                    unit2 = unit * stride // ostride
                    if unit2 >= 1 and osize % unit2 == 0 and osize // unit2 == size // unit:
                        out.add("PadReshapeAxis", n=node, in_axis=a, in_unit=unit, out_axis=b, out_unit=unit2)
    return out
