"""Input relations: how graph inputs and weights of the sequential graph live on the ranks.

Inferred from names and shapes (the same name on every rank; the same shape means
``Replicate``; one axis divided by the world size means ``Shard(axis)`` with rank r holding
chunk r, as ``torch.distributed.tensor.distribute_tensor`` and Megatron-LM lay weights out;
one axis divided by ``N / k`` means ``Shard(axis, replicas=k)``, rank r holding chunk
``r // k``, as vLLM and Megatron-LM place K < N kv heads),
then overridden or completed by a YAML spec (``--relations SPEC.yaml``), and, where both sides
store a weight's data, checked and completed by its values (:mod:`analyzer.inputs.values`)::

    world_size: 2                 # optional; checked against the number of rank files
    relations:
      input_ids: replicate
      model.layers.0.self_attn.qkv_proj.weight: {shard: 0, sections: [64, 16, 16]}
      model.layers.0.self_attn.k_proj.weight: {shard: 0, replicas: 2}   # rank r: chunk r // 2
      qkv_proj.weight: {shard: 0, sections: [1536, 256, 256], replicas: [1, 2, 2]}  # per section
      attn_partial: {partial: sum}
      empty_1: {shard: 0, ranks: [empty_3, empty_3]}   # rank-side names when they differ
      x: {shard: 0, micro_batches: [x_mb0, x_mb1]}     # micro-batch k of M is input x_mb{k}
      "*": {shape: [2048, 3072], shard: 1, sections: [2048, 512, 512]}  # every input of that shape
    outputs: [0]                  # optional; check only these output positions (all by default)
    constants: {_tensor_constant0: 0}   # optional; values of constants a torch.fx dump leaves out
                                        #   (also graph inputs of that name in ONNX files)
    groups: {"1": 1}              # optional; ranks per process group of a torch.fx dump (1: identity)
    pipeline: {stages: 2}         # optional; the rank files are pipeline stages (as --pp 2)

A key with ``*`` or ``?`` is a name pattern (``fnmatch``) over the sequential graph's inputs and
weights, narrowed by ``shape`` (their sequential shape) when given: one spec then serves a
model family at any depth, also where names are positional (XLA HLO's ``p11.12``). A relation
given by name wins over a pattern; a pattern that matches nothing is an error.
A layout may also be spelled as DTensor writes it (``Shard(0)``, ``Replicate()``, ``Partial()``,
``{placement: Shard(0), sections: [...]}``; :mod:`analyzer.inputs.placements`). Every spec is
validated against ``schemas/spec.schema.json`` (:mod:`analyzer.inputs.spec_schema`), and every
relation it gives is checked against the shapes the rank graphs record and the values they
store (:mod:`analyzer.inputs.spec_check`): a spec cannot make a wrong claim true.

``micro_batches`` lists, for gradient accumulation with each micro-batch a graph input of its
own, the value holding micro-batch k (k = 0..M-1, the same name on every rank): rank r's value
k is ``Shard(axis, micro=(M, k))`` of the sequential value (chunk ``r*M + k`` of ``N*M``,
:mod:`analyzer.layout`), or its ``Partial(sum, micro=(M, k))`` term with ``partial: sum``.

A two-dimensional mesh (docs/mesh.md, :mod:`analyzer.mesh`) gives the mesh axes and sizes,
the sequential graph on one data-parallel replica's batch, and a layout per axis::

    mesh: {dp: 2, tp: 2}                 # init_device_mesh(..., (2, 2), mesh_dim_names=("dp", "tp"))
    replica_seq: seq_replica.onnx        # relative to the spec file
    relations:
      input_ids: {dp: {shard: 0}}        # an axis left out is inferred from the shapes

``pipeline: {stages: P}`` says the rank files are P pipeline stages, one file per process in
global-rank order with the tensor-parallel rank varying fastest (Megatron-LM's default rank
order, torchtitan's ``("pp", ..., "tp")`` mesh): with F files, file f is stage ``f // (F/P)``,
tensor-parallel rank ``f % (F/P)``. Each tensor-parallel rank's stages are chained by their
boundary tensor names (:mod:`analyzer.importers.pipeline`) and checked as one rank; ``world_size``,
when given, is then the number of files (PP x TP), and ``relations`` name values of the
chained graphs. The file list stays on the command line, as for tensor parallelism, so one
spec fits a run whatever its files are called.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import onnx

from analyzer.errors import InputError, shown
from analyzer.inputs.placements import is_placement, placement_entry
from analyzer.inputs.spec_schema import validate_spec
from analyzer.layout import PARTIAL_SUM, REPLICATE, Layout

__all__ = [
    "InputRelation",
    "MisplacedChunk",
    "infer_input_relations",
    "load_spec",
    "apply_spec",
    "Spec",
]


@dataclass(frozen=True)
class InputRelation:
    """The relation of one seq value to the ranks.

    Attributes:
        seq_value: name of the value in the sequential graph.
        layout: the relation form.
        rank_values: the value's name on rank 0, 1, ... (length = world size); ``""`` for a
            rank that does not hold the value (a weight stored on rank 0 alone,
            :mod:`analyzer.inputs.values`: no piece there, so the relation never holds on
            every rank).
        source: ``"inferred"`` or ``"spec"``.
        evidence: what the stored values showed (:mod:`analyzer.inputs.values`), e.g.
            ``"values match chunk r of each of 3 blocks on axis 0"``; ``""`` when the relation
            rests on names and shapes (or the spec) alone.
        established: how the relation was established: ``"values"`` (the data both sides store
            was compared), ``"shapes"`` (names and shapes only: a fed input, a weight not stored
            or not compared), ``"spec"`` (declared, not checked), ``"names"`` (names only). A
            proof that rests on a relation not established by ``"values"`` holds given it.
    """

    seq_value: str
    layout: Layout
    rank_values: tuple[str, ...]
    source: str = "inferred"
    evidence: str = ""
    established: str = "shapes"


@dataclass(frozen=True)
class MisplacedChunk:
    """A rank's weight that is not the chunk its ``Shard`` gives it (by value, :mod:`analyzer.inputs.values`).

    Attributes:
        seq_value: the weight's name in the sequential graph.
        rank: the rank.
        rank_value: the weight's name on that rank.
        axis: the shard axis.
        chunk: index of the chunk of the sequential weight (``chunks`` equal chunks along
            ``axis``) that the rank holds; -1 when it holds none of them.
        chunks: N for a plain ``Shard``, ``N / k`` for ``Shard(axis, replicas=k)``.
    """

    seq_value: str
    rank: int
    rank_value: str
    axis: int
    chunk: int
    chunks: int


@dataclass(frozen=True)
class Spec:
    """A parsed relations spec file."""

    path: str
    world_size: int | None
    relations: Mapping[str, tuple[Layout, tuple[str, ...] | None]]
    outputs: tuple[int, ...] | None = None
    constants: Mapping[str, float] | None = None
    groups: Mapping[str, int] | None = None
    pipeline_stages: int | None = None
    mesh: Mapping[str, int] | None = None
    replica_seq: str | None = None
    mesh_relations: Mapping[str, Mapping[str, tuple[Layout, tuple[str, ...] | None]]] | None = None
    micro_batches: Mapping[str, tuple[tuple[Layout, str], ...]] | None = None
    patterns: tuple[tuple[str, tuple[int, ...] | None, Layout], ...] = ()


def _per_model(fn, models: Sequence[onnx.ModelProto], same: Sequence[int] | None) -> list:
    """``[fn(m) for m in models]`` for a ``fn`` that reads only the graph, calling it once per
    distinct graph: ``same[i]`` is the index of an earlier model whose graph is stored like
    model i's (i when none; see :class:`analyzer.model.CheckInput`). Results are shared."""
    out: list = []
    for i, m in enumerate(models):
        j = same[i] if same is not None and len(same) == len(models) else i
        out.append(out[j] if j < i else fn(m))
    return out


def _boundary_shapes(model: onnx.ModelProto) -> dict[str, tuple[int | str, ...]]:
    """Shapes of graph inputs and initializers (symbolic dims as strings)."""
    shapes: dict[str, tuple[int | str, ...]] = {}
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims)
    for init in model.graph.initializer:
        shapes[init.name] = tuple(init.dims)
    return shapes


def _layout_from_shapes(seq: tuple, rank_shapes: Sequence[tuple], n: int) -> Layout | None:
    if all(s == seq for s in rank_shapes):
        return REPLICATE
    first = rank_shapes[0]
    if any(s != first for s in rank_shapes) or len(first) != len(seq):
        return None
    diff = [i for i, (a, b) in enumerate(zip(seq, first)) if a != b]
    if len(diff) != 1:
        return None
    axis = diff[0]
    a, b = seq[axis], first[axis]
    if isinstance(a, int) and isinstance(b, int) and b * n == a:
        return Layout("Shard", axis=axis)
    # fewer chunks than ranks: groups of k = b * N / a consecutive ranks hold the same chunk
    if isinstance(a, int) and isinstance(b, int) and 0 < b < a and (b * n) % a == 0:
        k = b * n // a
        if 1 < k < n and n % k == 0:
            return Layout("Shard", axis=axis, replicas=k)
    return None


def infer_input_relations(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto], same: Sequence[int] | None = None
) -> tuple[list[InputRelation], list[str]]:
    """Infer input relations from names and shapes.

    Args:
        seq: the sequential model.
        ranks: the rank models, rank 0 first.
        same: optional, per rank the index of the first rank whose graph is stored byte for
            byte like its own (its shapes and constants are read once).

    Returns:
        (relations, notes): one relation per seq graph input or initializer found by name
        on every rank with shapes that fit a layout; a note for each one that did not.
    """
    n = len(ranks)
    seq_shapes = _boundary_shapes(seq)
    rank_shapes = _per_model(_boundary_shapes, ranks, same)
    relations: list[InputRelation] = []
    notes: list[str] = []
    for name, shape in seq_shapes.items():
        missing = [r for r, shapes in enumerate(rank_shapes) if name not in shapes]
        if missing:
            notes.append(f"{name}: not an input or initializer of rank {missing[0]}")
            continue
        layout = _layout_from_shapes(shape, [s[name] for s in rank_shapes], n)
        micro = _micro_batch_constant(seq, ranks, name, shape, [s[name] for s in rank_shapes]) if layout is None else []
        if micro:
            relations.extend(InputRelation(name, lay, (name,) * n, established="values") for lay in micro)
            continue
        if layout is None:
            got = ", ".join(str(list(s[name])) for s in rank_shapes)
            notes.append(f"{name}: shape {list(shape)} on seq and {got} on ranks fit no layout")
            continue
        relations.append(InputRelation(name, layout, (name,) * n))
    return relations, notes


def _micro_batch_constant(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto], name: str, shape: tuple, rank_shapes: Sequence[tuple]
) -> list[Layout]:
    """The micro-batch relations (analyzer/layout.py, ``micro``) of a constant that every
    micro-batch of every rank uses alike (a causal mask, a zero fill, as traced for one
    micro-batch): one axis of the rank arrays is the seq size divided by N*M (M >= 2), and
    every one of the N*M chunks of the seq array equals the rank arrays, checked by value (so
    ``Shard(axis, micro=(M, k))`` holds for every k). ``[]`` when the shapes or values do not
    say so, or the data is not stored inline."""
    import numpy as np

    n = len(ranks)
    first = rank_shapes[0]
    if any(s != first for s in rank_shapes) or len(first) != len(shape):
        return []
    diff = [i for i, (a, b) in enumerate(zip(shape, first)) if a != b]
    if len(diff) != 1 or not all(isinstance(x, int) for x in (shape[diff[0]], first[diff[0]])):
        return []
    axis = diff[0]
    size, local = shape[axis], first[axis]
    if local <= 0 or size % (local * n) or size // (local * n) < 2:
        return []
    full = _inline_array(seq, {name}).get(name)
    mine = [_inline_array(m, {name}).get(name) for m in ranks]
    if full is None or any(x is None for x in mine):
        return []
    chunks = np.split(np.asarray(full), size // local, axis=axis)
    if not all(np.array_equal(c, x) for c in chunks for x in mine):
        return []
    count = size // (local * n)
    return [Layout("Shard", axis=axis, micro=(count, k)) for k in range(count)]


def _parse_micro_batches(where: str, entry: Mapping) -> tuple[tuple[Layout, str], ...]:
    """The layouts of ``{shard: a | partial: sum, micro_batches: [v_0, ..., v_{M-1}]}``: micro-batch
    k is rank value ``v_k``, ``Shard(a, micro=(M, k))`` or ``Partial(sum, micro=(M, k))``."""
    names = entry["micro_batches"]
    if not isinstance(names, list) or len(names) < 2 or not all(isinstance(x, str) for x in names):
        raise InputError(f"{where}.micro_batches: expected a list of two or more value names, one per micro-batch")
    if len(set(names)) != len(names):
        raise InputError(f"{where}.micro_batches: a value is named twice")
    extra = set(entry) & {"ranks", "sections", "replicas"}
    if extra:
        raise InputError(f"{where}: micro_batches does not combine with {sorted(extra)[0]}")
    layout, _ = _parse_layout(where, {k: v for k, v in entry.items() if k != "micro_batches"})
    if layout.kind == "Shard":
        layouts = [Layout("Shard", axis=layout.axis, micro=(len(names), k)) for k in range(len(names))]
    elif layout == PARTIAL_SUM:
        layouts = [Layout("Partial", reduce="sum", micro=(len(names), k)) for k in range(len(names))]
    else:
        raise InputError(f"{where}: micro_batches needs shard or partial: sum")
    return tuple(zip(layouts, names))


def _parse_layout(where: str, entry: object) -> tuple[Layout, tuple[str, ...] | None]:
    if is_placement(entry):  # DTensor's spelling, Shard(0) (analyzer/inputs/placements.py)
        entry = placement_entry(where, entry)
    elif isinstance(entry, Mapping) and "placement" in entry:
        form = placement_entry(f"{where}.placement", str(entry["placement"]))
        rest = {k: v for k, v in entry.items() if k != "placement"}
        if set(map(str, rest)) - {"ranks", "sections", "replicas", "micro_batches"}:
            raise InputError(f"{where}: give exactly one of replicate, shard, partial, placement")
        entry = {**({form: True} if isinstance(form, str) else form), **rest}
    if isinstance(entry, str):
        entry = {entry: True}
    if not isinstance(entry, Mapping):
        raise InputError(f"{where}: expected 'replicate' or a mapping like {{shard: 0}}, got {shown(entry)}")
    pad_keys = {"unit", "pad_to", "repeat", "index"}
    keys = set(entry) - {"ranks", "sections", "replicas"} - pad_keys
    if len(keys) != 1:
        raise InputError(f"{where}: give exactly one of replicate, shard, partial (got {sorted(map(str, keys))})")
    kind = str(next(iter(keys))).lower()
    value = entry[next(iter(keys))]
    ranks = entry.get("ranks")
    if ranks is not None and (not isinstance(ranks, list) or not all(isinstance(x, str) for x in ranks)):
        raise InputError(f"{where}.ranks: expected a list of value names, one per rank")
    if kind == "replicate":
        layout = REPLICATE
    elif kind == "partial":
        if value not in (True, "sum", "max"):
            raise InputError(f"{where}.partial: expected sum or max, got {shown(value)}")
        layout = PARTIAL_SUM if value in (True, "sum") else Layout("Partial", reduce="max")
    elif kind == "shard":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
            raise InputError(f"{where}.shard: expected a non-negative axis, got {shown(value)}")
        if pad_keys & set(entry):
            return _parse_padded(where, value, entry), tuple(ranks) if ranks is not None else None
        sections = entry.get("sections")
        if sections is not None and (
            not isinstance(sections, list)
            or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in sections)
        ):
            raise InputError(f"{where}.sections: expected a list of positive section sizes")
        replicas = entry.get("replicas")
        if sections and replicas is not None:
            # one count per section: vLLM's fused qkv with kv heads replicated, [1, 2, 2]
            if (
                not isinstance(replicas, list)
                or len(replicas) != len(sections)
                or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x < 2**31 for x in replicas)
            ):
                raise InputError(f"{where}.replicas: expected one rank count >= 1 per section, got {shown(replicas)}")
            replicas = tuple(replicas) if any(x > 1 for x in replicas) else None
        elif replicas is not None and (
            not isinstance(replicas, int) or isinstance(replicas, bool) or not 2 <= replicas < 2**31
        ):
            raise InputError(f"{where}.replicas: expected a rank count >= 2, got {shown(replicas)}")
        layout = Layout("Shard", axis=value, sections=tuple(sections) if sections else None, replicas=replicas)
    else:
        raise InputError(f"{where}: unknown layout {shown(kind)} (expected replicate, shard or partial)")
    return layout, tuple(ranks) if ranks is not None else None


def _parse_padded(where: str, axis: int, entry: Mapping) -> Layout:
    """A padded shard (analyzer/padding.py): ``unit``, ``sections`` (in units), ``pad_to``,
    ``repeat`` (one each or one per section), or ``index`` (per rank, the units it holds, -1 a
    unit of zeros). Resolved against the axis size by :func:`apply_spec`."""
    from analyzer.padding import spec_form

    def ints(key: str, value: object, *, lists: bool = True) -> object:
        ok_int = isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31
        ok_list = lists and isinstance(value, list) and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 < x < 2**31 for x in value
        )
        if not (ok_int or ok_list):
            what = "a positive size" + (" or a list of them" if lists else "")
            raise InputError(f"{where}.{key}: expected {what}, got {shown(value)}")
        return value

    fields: dict[str, object] = {}
    if "replicas" in entry:
        raise InputError(f"{where}: a padded shard (unit, pad_to, repeat, index) takes no replicas")
    if "unit" in entry:
        fields["unit"] = ints("unit", entry["unit"], lists=False)
    for key in ("sections", "pad_to", "repeat"):
        if key in entry:
            fields[key] = ints(key, entry[key], lists=True)
    if "index" in entry:
        index = entry["index"]
        if set(fields) - {"unit"}:
            raise InputError(f"{where}.index: give index or sections/pad_to/repeat, not both")
        if not isinstance(index, list) or not all(
            isinstance(r, list) and all(isinstance(x, int) and not isinstance(x, bool) and -1 <= x < 2**31 for x in r)
            for r in index
        ):
            raise InputError(f"{where}.index: expected one list of unit indices (-1: zeros) per rank")
        fields["index"] = index
    return Layout("Shard", axis=axis, pad=spec_form(fields))


def _resolve_padded(path: str, name: str, layout: Layout, shape: tuple | None, n: int) -> Layout:
    """A spec's padded form resolved against the value's shape (analyzer/padding.py)."""
    from dataclasses import replace

    from analyzer.padding import SPEC_PREFIX, resolve_spec

    if layout.pad is None or not layout.pad.startswith(SPEC_PREFIX):
        return layout
    axis = int(layout.axis)  # type: ignore[arg-type]
    if shape is None or axis >= len(shape) or not isinstance(shape[axis], int):
        raise InputError(f"{path}: {shown(name)}: a padded shard needs the value's static shape with axis {axis}")
    try:
        return replace(layout, pad=resolve_spec(layout.pad, shape[axis], n))
    except ValueError as exc:
        raise InputError(f"{path}: {shown(name)}: {exc}") from None


def load_spec(path: str | Path) -> Spec:
    """Read a relations spec file (format in the module docstring).

    Raises:
        InputError: a missing or unreadable file, or one that is not a regular file, over
            1 MiB, nested over 64 levels or over 250,000 nodes with its aliases expanded
            (:mod:`analyzer.inputs.yaml_file`); a YAML syntax error, or an entry that is not
            a layout.
    """
    from analyzer.inputs.yaml_file import load_yaml_file  # here: a check without a spec does not import yaml

    p = Path(path)
    data = load_yaml_file(p, "spec file")
    if not isinstance(data, Mapping) or not isinstance(data.get("relations", {}), Mapping):
        raise InputError(f"{p}: expected a mapping with a 'relations' mapping")
    keys = {"world_size", "relations", "outputs", "constants", "groups", "pipeline", "mesh", "replica_seq"}
    unknown = set(data) - keys
    if unknown:
        raise InputError(
            f"{p}: unknown key {shown(sorted(map(str, unknown))[0])} "
            "(expected world_size, relations, outputs, constants, groups, pipeline, mesh, replica_seq)"
        )
    if "mesh" in data or "replica_seq" in data:
        spec = _load_mesh_spec(p, data)
        validate_spec(p, data)
        return spec
    ws = data.get("world_size")
    if ws is not None and (not isinstance(ws, int) or isinstance(ws, bool) or not 1 <= ws < 2**31):
        raise InputError(f"{p}: world_size must be a positive integer, got {shown(ws)}")
    rels, micro, patterns = {}, {}, []
    for k, v in (data.get("relations") or {}).items():
        where = f"{p.name}: relations.{k}"
        if _is_pattern(str(k)):
            patterns.append(_parse_pattern(where, str(k), v))
        elif isinstance(v, Mapping) and "shape" in v:
            raise InputError(f"{where}.shape: a shape selects values of a name pattern (with * or ?) only")
        elif isinstance(v, Mapping) and "micro_batches" in v:
            micro[str(k)] = _parse_micro_batches(where, v)
        else:
            rels[str(k)] = _parse_layout(where, v)
    spec = Spec(
        str(p),
        ws,
        rels,
        _parse_outputs(p, data.get("outputs")),
        _parse_constants(p, data.get("constants")),
        _parse_groups(p, data.get("groups")),
        pipeline_stages=_parse_pipeline(p, data.get("pipeline")),
        micro_batches=micro or None,
        patterns=tuple(patterns),
    )
    # the checks above give the precise messages; the published schema is the last word
    validate_spec(p, data)
    return spec


def _is_pattern(key: str) -> bool:
    return "*" in key or "?" in key


def _parse_pattern(where: str, key: str, entry: object) -> tuple[str, tuple[int, ...] | None, Layout]:
    """A name pattern entry: (glob, the sequential shape it is narrowed to or None, layout)."""
    shape = None
    if isinstance(entry, Mapping):
        if "ranks" in entry or "micro_batches" in entry:
            raise InputError(f"{where}: a name pattern cannot list rank values (ranks, micro_batches)")
        if "shape" in entry:
            shape = entry["shape"]
            if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
            ):
                raise InputError(f"{where}.shape: expected a list of sizes like [2048, 3072], got {shape!r}")
            shape = tuple(shape)
            entry = {k: v for k, v in entry.items() if k != "shape"}
    layout, _ = _parse_layout(where, entry)
    return key, shape, layout


def _load_mesh_spec(p: Path, data: Mapping) -> Spec:
    """A spec with ``mesh:`` (docs/mesh.md): per-axis relations, the replica's sequential graph."""
    mesh = data.get("mesh")
    if (
        not isinstance(mesh, Mapping)
        or len(mesh) < 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v < 2**31 for v in mesh.values())
    ):
        raise InputError(
            f"{p}: mesh must map two or more axis names to sizes, like {{dp: 2, tp: 2}}, got {shown(mesh)}"
        )
    mesh = {str(k): int(v) for k, v in mesh.items()}
    replica = data.get("replica_seq")
    if not isinstance(replica, str) or not replica:
        raise InputError(
            f"{p}: a mesh spec needs replica_seq: the sequential graph on one data-parallel replica's batch"
        )
    for key in ("pipeline", "groups", "constants"):
        if data.get(key) is not None:
            raise InputError(f"{p}: {key} cannot be combined with mesh")
    ws = data.get("world_size")
    if ws is not None and ws != math.prod(mesh.values()):
        raise InputError(f"{p}: world_size {shown(ws)} is not the product of the mesh sizes {mesh}")
    per_axis: dict[str, dict[str, tuple[Layout, tuple[str, ...] | None]]] = {x: {} for x in mesh}
    for name, entry in (data.get("relations") or {}).items():
        where = f"{p.name}: relations.{name}"
        if not isinstance(entry, Mapping) or not entry or not set(map(str, entry)) <= set(mesh):
            raise InputError(
                f"{where}: with a mesh, give a layout per mesh axis ({', '.join(mesh)}), like {{dp: {{shard: 0}}}}"
            )
        for axis, layout in entry.items():
            parsed = _parse_layout(f"{where}.{axis}", layout)
            if parsed[1] is not None:
                raise InputError(f"{where}.{axis}: ranks are not supported in a mesh spec")
            per_axis[str(axis)][str(name)] = parsed
    return Spec(
        str(p),
        math.prod(mesh.values()),
        {},
        _parse_outputs(p, data.get("outputs")),
        mesh=mesh,
        replica_seq=str(p.parent / replica),
        mesh_relations=per_axis,
    )


def _parse_pipeline(p: Path, value: object) -> int | None:
    """``pipeline: {stages: P}`` -> P (None when the section is absent)."""
    if value is None:
        return None
    stages = value.get("stages") if isinstance(value, Mapping) else None
    if (
        not isinstance(value, Mapping)
        or set(value) != {"stages"}
        or not isinstance(stages, int)
        or isinstance(stages, bool)
        or not 1 <= stages < 2**31
    ):
        raise InputError(
            f"{p}: pipeline must be a mapping like {{stages: 2}} (a positive stage count), got {shown(value)}"
        )
    return stages


def _parse_groups(p: Path, value: object) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value.values()
    ):
        raise InputError(f"{p}: groups must map process-group names to rank counts (>= 1), got {shown(value)}")
    return {str(k): int(v) for k, v in value.items()}


def _parse_outputs(p: Path, value: object) -> tuple[int, ...] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**31 for x in value)
    ):
        raise InputError(f"{p}: outputs must be a non-empty list of output positions (0, 1, ...), got {shown(value)}")
    return tuple(dict.fromkeys(value))  # a position listed twice is kept once


def _parse_constants(p: Path, value: object) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
    ):
        raise InputError(f"{p}: constants must map constant names to numbers, got {shown(value)}")
    return {str(k): float(v) for k, v in value.items()}


def _value_names(model: onnx.ModelProto) -> set[str]:
    g = model.graph
    names = {v.name for v in g.input} | {i.name for i in g.initializer}
    names.update(o for node in g.node for o in node.output)
    return names


def _known_shapes(model: onnx.ModelProto) -> dict[str, tuple[int | str, ...]]:
    """Shapes recorded in the model for any value (inputs, outputs, value_info, initializers)."""
    shapes: dict[str, tuple[int | str, ...]] = {}
    g = model.graph
    for vi in [*g.value_info, *g.output]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            dims = vi.type.tensor_type.shape.dim
            shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims)
    shapes.update(_boundary_shapes(model))
    return shapes


def _check_fits(path: str, name: str, layout: Layout, shape: tuple | None, n: int) -> None:
    """A spec's Shard must name an axis of the value, and its sections must add up to that axis."""
    if layout.kind != "Shard" or shape is None or layout.axis is None:
        return
    if layout.axis >= len(shape):
        raise InputError(f"{path}: {shown(name)} has {len(shape)} dimensions, so it has no axis {layout.axis} to shard")
    dim = shape[layout.axis]
    if layout.micro is not None and isinstance(dim, int) and dim > 0 and dim % (n * layout.micro[0]):
        raise InputError(
            f"{path}: {shown(name)}: axis {layout.axis} of size {dim} does not split into "
            f"{n} ranks x {layout.micro[0]} micro-batches"
        )
    if isinstance(layout.replicas, int):
        if n % layout.replicas:
            raise InputError(f"{path}: {shown(name)}: replicas={layout.replicas} does not divide {n} ranks into groups")
        if isinstance(dim, int) and dim > 0 and dim % (n // layout.replicas):
            raise InputError(
                f"{path}: {shown(name)}: axis {layout.axis} of size {dim} does not split into "
                f"{n // layout.replicas} chunks"
            )
    if layout.sections and isinstance(dim, int) and dim > 0:
        if sum(layout.sections) != dim:
            raise InputError(
                f"{path}: {shown(name)}: sections {list(layout.sections)} add up to {sum(layout.sections)}, "
                f"but axis {layout.axis} has size {dim}"
            )
        for size, k in zip(layout.sections, layout.section_replicas):
            if n % k or size % (n // k):
                what = f"{n}" if k == 1 else f"{n} / replicas = {n / k:g}"
                raise InputError(f"{path}: {shown(name)}: every section must split into {what} equal chunks")


def apply_spec(
    relations: Sequence[InputRelation], spec: Spec, seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto]
) -> list[InputRelation]:
    """Override or add relations from a spec.

    Raises:
        InputError: the spec's world size differs from the rank count, it names a value
            that is not in the sequential graph or a rank value that is not in its rank graph,
            a Shard does not fit the value's recorded shape (no such axis, sections that do
            not add up to the axis or do not split into equal chunks), or a relation gives a
            rank another shape than the rank records, or contradicts the values the files
            store (:mod:`analyzer.inputs.spec_check`).
    """
    n = len(ranks)
    if spec.world_size is not None and spec.world_size != n:
        raise InputError(f"{spec.path}: spec is for world size {spec.world_size} but {n} rank files were given")
    seq_names = _value_names(seq)
    rank_names = [_value_names(r) for r in ranks]
    seq_shapes = _known_shapes(seq)
    rank_shapes = [_known_shapes(r) for r in ranks]
    out: dict[str, list[InputRelation]] = {}
    for rel in relations:
        out.setdefault(rel.seq_value, []).append(rel)
    for name, (layout, rank_values) in spec.relations.items():
        if name not in seq_names:
            raise InputError(f"{spec.path}: {shown(name)} is not a value of the sequential graph")
        values = rank_values or (name,) * n
        if len(values) != n:
            raise InputError(f"{spec.path}: {shown(name)} lists {len(values)} rank values for {n} ranks")
        for r, v in enumerate(values):
            if v not in rank_names[r]:
                raise InputError(f"{spec.path}: {shown(v)} is not a value of rank {r}")
        layout = _resolve_padded(spec.path, name, layout, seq_shapes.get(name), n)
        _check_fits(spec.path, name, layout, seq_shapes.get(name), n)
        _check_claim(spec.path, name, layout, values, seq, ranks, seq_shapes, rank_shapes)
        out[name] = [InputRelation(name, layout, tuple(values), "spec", established="spec")]
    boundary = _boundary_shapes(seq)
    for glob, shape, layout in spec.patterns:
        matched = [
            name
            for name, sh in boundary.items()
            if fnmatch.fnmatchcase(name, glob) and (shape is None or tuple(sh) == shape)
        ]
        if not matched:
            what = f" of shape {list(shape)}" if shape is not None else ""
            raise InputError(f"{spec.path}: {glob!r} matches no input or weight{what} of the sequential graph")
        for name in matched:
            if name in spec.relations:
                continue  # a relation given by name wins over a pattern
            for r in range(n):
                if name not in rank_names[r]:
                    raise InputError(f"{spec.path}: {glob!r} matches {name!r}, which is not a value of rank {r}")
            resolved = _resolve_padded(spec.path, name, layout, boundary.get(name), n)
            _check_fits(spec.path, name, resolved, boundary.get(name), n)
            _check_claim(spec.path, name, resolved, (name,) * n, seq, ranks, seq_shapes, rank_shapes)
            out[name] = [InputRelation(name, resolved, (name,) * n, "spec", established="spec")]
    for name, pieces in (spec.micro_batches or {}).items():
        if name not in seq_names:
            raise InputError(f"{spec.path}: {shown(name)} is not a value of the sequential graph")
        for r in range(n):
            missing = [v for _, v in pieces if v not in rank_names[r]]
            if missing:
                raise InputError(f"{spec.path}: {shown(missing[0])} is not a value of rank {r}")
        _check_fits(spec.path, name, pieces[0][0], seq_shapes.get(name), n)
        for layout, v in pieces:
            _check_claim(spec.path, name, layout, (v,) * n, seq, ranks, seq_shapes, rank_shapes)
        out[name] = [InputRelation(name, layout, (v,) * n, "spec", established="spec") for layout, v in pieces]
    return [rel for rels in out.values() for rel in rels]


def _check_claim(path, name, layout, values, seq, ranks, seq_shapes, rank_shapes) -> None:
    """A spec relation must fit the ranks' recorded shapes and stored values
    (:mod:`analyzer.inputs.spec_check`); raises InputError naming the entry."""
    from analyzer.inputs.spec_check import check_against_ranks, check_stored_values

    where = f"{path}: relations.{name}"
    seq_shape = seq_shapes.get(name)
    got = [shapes.get(v) for shapes, v in zip(rank_shapes, values)]
    fit = None
    if seq_shape is not None and all(g is not None for g in got):
        fit = _layout_from_shapes(seq_shape, got, len(ranks))
    check_against_ranks(where, name, layout, seq_shape, values, rank_shapes, fit)
    check_stored_values(where, layout, seq, name, ranks, values, _inline_array)


def _inline_array(model: onnx.ModelProto, names: set[str]) -> dict[str, object]:
    """Initializers among ``names`` whose data is stored in the model, as numpy arrays."""
    from onnx import numpy_helper

    out = {}
    for init in model.graph.initializer:
        if init.name in names and init.data_location != onnx.TensorProto.EXTERNAL:
            try:
                out[init.name] = numpy_helper.to_array(init)
            except (ValueError, TypeError):  # no data (a shape-only export) or an odd dtype
                continue
    return out
