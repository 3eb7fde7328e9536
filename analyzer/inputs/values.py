"""Input relations decided by stored values, wherever the sequential graph and every rank store
a weight's data.

Names and shapes (:func:`analyzer.inputs.infer.infer_input_relations`) say how many pieces a
weight is cut into, not which piece a rank holds nor how it was cut: a loader that gives a rank
another rank's chunk, a corrupted replica, a sequential checkpoint that is not the ranks' or two
weights swapped keep every shape. Here every relation of an initializer whose data is inline in
the sequential graph and in every rank (same dtype) is checked by value, whatever its size and
layout (``Replicate`` too), and where it fails, or the shapes fit no layout, the layouts a
checkpoint loader produces are searched (:func:`search_layout`), the first the values prove
taken:

- ``Replicate``: every rank holds the array;
- ``Shard(a)``: rank r holds chunk r along a (a per-head ``[heads, 3, head_dim]`` fused weight
  flattened is this too: a head's q, k and v rows are contiguous);
- ``Shard(a, replicas=k)``: chunk ``r // k`` of ``N / k`` (kv heads over groups of ranks);
- ``Shard(a, sections=...)``: chunk r of each of b equal or unequal blocks (fused q|k|v,
  gate|up, a 3-D expert tensor ``[E, 2I, H]`` on axis 1), each block cut into ``N / replicas``
  chunks (vLLM's qkv with replicated kv heads), found from where each rank's rows sit in the
  sequential array (a digest per row, :func:`_row_ids`);
- ``Shard(a, replicas=k, inner=b)``: two axes cut (a ``(N/k, k)`` mesh).

A weight that rank 0 alone stores, with the sequential values, and that no other rank has as an
input or initializer, is ``Replicate`` on rank 0 only (rank values ``(name, "", ...)``): vLLM's
``RowParallelLinear`` adds its bias on tensor-parallel rank 0 alone, so the other ranks'
exports never hold it (``rules/parallel/one_rank_term.dl`` reads that piece). Held by another
subset of ranks, missing on rank 0, or with other values there, it stays without a relation
(the note of :func:`~analyzer.inputs.infer.infer_input_relations` says which rank lacks it).

Values that prove no relation are reported, not guessed: a rank's array that is the layout's
piece of another rank (a permuted rank order), the transpose of a layout's piece (weights stored
transposed, as GPT-2's ``Conv1D`` against ``nn.Linear``: no layout relates them), the piece of
another weight of the sequential graph (weights swapped, another layer's), or nothing. Those
become facts (``MisplacedChunk``, ``WeightValueMismatch``, ``WeightValueMatch`` in
``schemas/inputs.dl``) that the hint rules (``rules/diagnose/hints_weights.dl``) read.
``Partial`` and micro-batch relations, and weights stored outside the file or not at all
(weight-free exports), stay as the shapes and the spec give them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import onnx

from analyzer.inputs.infer import InputRelation, MisplacedChunk, _per_model
from analyzer.layout import REPLICATE, Layout

__all__ = [
    "LayoutFound",
    "TransposedPiece",
    "ValueFindings",
    "WeightMismatch",
    "decide_by_values",
    "layout_evidence",
    "search_layout",
]


@dataclass(frozen=True)
class WeightMismatch:
    """A rank's stored weight that is not its piece of the sequential weight under ``layout``.

    Attributes:
        seq_value: the weight's name in the sequential graph.
        rank: the rank.
        rank_value: the weight's name on that rank.
        layout: the layout the shapes (or the spec) gave and the values refute.
        matches: sequential weights (other than ``seq_value``) whose piece of this rank under
            ``layout`` equals the rank's array, found by a digest of the values.
    """

    seq_value: str
    rank: int
    rank_value: str
    layout: Layout
    matches: tuple[str, ...] = ()


@dataclass(frozen=True)
class TransposedPiece:
    """A rank's 2-D weight that is the transpose of its piece of the sequential weight under
    ``layout`` (weights stored transposed: ``nn.Linear``'s ``[out, in]`` against GPT-2's
    ``Conv1D`` ``[in, out]``). No input relation relates the two arrays; a rank ``Transpose``
    of it is the piece (``rules/core/transposed.dl``)."""

    seq_value: str
    rank: int
    rank_value: str
    layout: Layout


@dataclass
class ValueFindings:
    """What the stored values decided (:func:`decide_by_values`)."""

    relations: list[InputRelation]
    misplaced: list[MisplacedChunk] = field(default_factory=list)
    mismatches: list[WeightMismatch] = field(default_factory=list)
    transposed: list[TransposedPiece] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)  # weights whose relation the values decided


def _stored(model: onnx.ModelProto, names: set[str] | None = None) -> dict[str, np.ndarray]:
    """Initializers (among ``names``; all when None) whose data is stored in the model."""
    from onnx import numpy_helper

    out = {}
    for init in model.graph.initializer:
        if (names is None or init.name in names) and init.data_location != onnx.TensorProto.EXTERNAL:
            try:
                arr = numpy_helper.to_array(init)
            except (ValueError, TypeError):  # no data (a shape-only export) or an odd dtype
                continue
            if arr.size == int(np.prod(init.dims, dtype=np.int64)):
                out[init.name] = arr
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shape, dtype and elements (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if np.array_equal(a, b):
        return True
    return a.dtype.kind in "fc" and bool(np.array_equal(a, b, equal_nan=True))


def _pieces(layout: Layout, full: np.ndarray, n: int) -> list[np.ndarray] | None:
    """Rank r's piece of ``full`` under ``layout`` (views), None when the layout does not apply."""
    if layout.kind == "Replicate":
        return [full] * n
    from analyzer.witness.layouts import distribute  # here: a check without stored weights never needs it

    try:
        return distribute(layout, full, n)
    except (ValueError, IndexError, np.exceptions.AxisError):
        return None


def _holds(layout: Layout, full: np.ndarray, arrays: Sequence[np.ndarray]) -> bool:
    pieces = _pieces(layout, full, len(arrays))
    return pieces is not None and all(_same(a, p) for a, p in zip(arrays, pieces))


def _order(layout: Layout, full: np.ndarray, arrays: Sequence[np.ndarray]) -> list[int] | None:
    """For a layout whose pieces the ranks hold in another order: the piece each rank holds
    (a permutation other than the identity); None when they are not its pieces."""
    if layout.kind == "Replicate":
        return None
    pieces = _pieces(layout, full, len(arrays))
    if pieces is None:
        return None
    own = [_same(a, p) for a, p in zip(arrays, pieces)]
    if all(own):
        return None
    held = [r if mine else -1 for r, mine in enumerate(own)]
    for r, a in enumerate(arrays):
        if held[r] < 0:
            free = [j for j, p in enumerate(pieces) if j not in held and _same(a, p)]
            if not free:
                return None
            held[r] = free[0]
    return held


def _row_ids(arrays: Sequence[np.ndarray], axis: int) -> list[np.ndarray] | None:
    """Per array, an id per index along ``axis``: equal ids, byte-equal slices (one sort of the
    slices' bytes, numpy's ``unique`` over void rows). None when the slices differ in size."""
    if any(a.size == 0 for a in arrays):
        return None
    rows = [np.ascontiguousarray(np.moveaxis(a, axis, 0)).reshape(a.shape[axis], -1) for a in arrays]
    widths = {r.shape[1] * r.dtype.itemsize for r in rows}
    if len(widths) != 1 or 0 in widths:
        return None
    width = widths.pop()
    voids = [r.view(np.dtype((np.void, width))).reshape(-1) for r in rows]
    _, inverse = np.unique(np.concatenate(voids), return_inverse=True)
    inverse = inverse.reshape(-1)
    cuts = np.cumsum([len(v) for v in voids])[:-1]
    return np.split(inverse, cuts)


def _sections_from_rows(full: np.ndarray, arrays: Sequence[np.ndarray], axis: int) -> Layout | None:
    """The fused-sections layout whose chunks the ranks' rows along ``axis`` are, read from
    where each rank's rows sit in ``full`` (the sequential rows must be distinct); None when
    no such layout of two or more sections explains them."""
    n = len(arrays)
    ids = _row_ids([full, *arrays], axis)
    if ids is None:
        return None
    seq_ids, rank_ids = ids[0], ids[1:]
    if len(np.unique(seq_ids)) != len(seq_ids):
        return None  # repeated rows: where a rank's row comes from is not known
    where = np.full(int(max(x.max() for x in ids)) + 1, -1)
    where[seq_ids] = np.arange(len(seq_ids))
    maps = [where[x] for x in rank_ids]
    if any((m < 0).any() for m in maps) or len({len(m) for m in maps}) != 1:
        return None
    local = len(maps[0])
    breaks = {0}
    for m in maps:
        breaks.update((np.nonzero(np.diff(m) != 1)[0] + 1).tolist())
    bounds = [*sorted(breaks), local]
    if len(bounds) < 3:
        return None
    starts = [min(int(m[b]) for m in maps) for b in bounds[:-1]]
    if starts != sorted(starts) or starts[0] != 0:
        return None
    sizes = [b - a for a, b in zip(starts, [*starts[1:], full.shape[axis]])]
    widths = [b - a for a, b in zip(bounds, bounds[1:])]
    reps = []
    for size, w in zip(sizes, widths):
        if size % w or n % (size // w):
            return None
        reps.append(n // (size // w))
    try:
        return Layout("Shard", axis=axis, sections=tuple(sizes), replicas=tuple(reps) if max(reps) > 1 else None)
    except ValueError:
        return None


def _padded_from_rows(
    full: np.ndarray, arrays: Sequence[np.ndarray], axis: int, need_padding: bool = False
) -> Layout | None:
    """The padded shard (analyzer/padding.py) the ranks' rows along ``axis`` are: each rank row
    byte-equal to one sequential row (possibly on several ranks or places: copies) or all zeros
    (padding), every sequential row held somewhere. The unit is the largest run length that every
    ascending run of rows is made of (a head of 64 rows when whole heads are copied or padded).
    None when some rank row is neither, a row is held nowhere, the sequential rows repeat
    (where a copy comes from is then not known), or ``need_padding`` and no rank holds a zero
    row."""
    from math import gcd

    from analyzer.padding import ZERO, param_text

    ids = _row_ids([full, *arrays], axis)
    if ids is None:
        return None
    seq_ids, rank_ids = ids[0], ids[1:]
    if len(np.unique(seq_ids)) != len(seq_ids) or len({len(x) for x in rank_ids}) != 1:
        return None
    where = np.full(int(max(x.max() for x in ids)) + 1, -1)
    where[seq_ids] = np.arange(len(seq_ids))
    maps = []
    for a, x in zip(arrays, rank_ids):
        m = where[x]
        zero = np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)
        m = np.where((m < 0) & ~zero.any(axis=1), ZERO, m)
        if (m == -1).sum() != (m == ZERO).sum() or (m < -1).any():
            return None
        if ((m < 0) & zero.any(axis=1)).any():
            return None  # a row that is neither a sequential row nor zeros
        maps.append(m)
    if len(np.unique(np.concatenate(maps)[np.concatenate(maps) >= 0])) != full.shape[axis]:
        return None
    if need_padding and not any((m == ZERO).any() for m in maps):
        return None
    unit = full.shape[axis]
    for m in maps:
        unit = gcd(unit, len(m))
        j = 0
        while j < len(m):
            k = j + 1
            while k < len(m) and ((m[j] < 0 and m[k] == m[j]) or (m[j] >= 0 and m[k] == m[k - 1] + 1)):
                k += 1
            unit = gcd(unit, gcd(j, k - j))
            if m[j] >= 0:
                unit = gcd(unit, int(m[j]))
            j = k
    units = [[int(e) // unit if e >= 0 else ZERO for e in m[::unit]] for m in maps]
    try:
        return Layout("Shard", axis=axis, pad=param_text(unit, full.shape[axis] // unit, units))
    except ValueError:
        return None


_MAX_BLOCKS = 16  # equal blocks tried by value without the row search (fused q|k|v: 3, gate|up: 2)


def _divisors(x: int) -> list[int]:
    return [b for b in range(2, min(x, _MAX_BLOCKS) + 1) if x % b == 0]


def _candidates(full: np.ndarray, arrays: Sequence[np.ndarray]) -> list[Layout]:
    """Layouts whose rank shapes are the arrays' shapes, simplest first (no values read)."""
    n = len(arrays)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays) or len(shape) != full.ndim:
        return []
    if shape == full.shape:
        return [REPLICATE]
    diff = [i for i, (s, d) in enumerate(zip(full.shape, shape)) if s != d]
    out: list[Layout] = []
    if len(diff) == 1:
        (a,) = diff
        s, d = full.shape[a], shape[a]
        if d == 0 or s == 0 or s % d:
            return []
        if s == n * d:
            out.append(Layout("Shard", axis=a))
            # equal blocks, each cut into N chunks (the row search below finds unequal ones)
            out.extend(Layout("Shard", axis=a, sections=(s // b,) * b) for b in _divisors(d))
        elif n % (s // d) == 0:
            out.append(Layout("Shard", axis=a, replicas=n // (s // d)))
    elif len(diff) == 2:
        for a, b in (diff, diff[::-1]):
            qa, qb = full.shape[a] // shape[a], full.shape[b] // shape[b]
            if full.shape[a] % shape[a] == 0 and full.shape[b] % shape[b] == 0 and qa * qb == n and qb > 1:
                out.append(Layout("Shard", axis=a, replicas=qb, inner=b))
    return out


@dataclass(frozen=True)
class LayoutFound:
    """What :func:`search_layout` found: a layout the values prove, or one whose pieces the
    ranks hold in another order (``order``: the rank whose piece rank r holds), or whose pieces'
    transposes they hold (``transposed``)."""

    layout: Layout
    order: tuple[int, ...] | None = None
    transposed: bool = False


def search_layout(full: np.ndarray, arrays: Sequence[np.ndarray], skip: Layout | None = None) -> LayoutFound | None:
    """The layout a checkpoint loader produced, proven by the values (module docstring).

    Args:
        full: the sequential array.
        arrays: rank r's array, rank 0 first (N = ``len(arrays)``).
        skip: a layout already refuted (not tried again).

    Returns:
        The first candidate whose pieces equal the arrays (shapes decide which are tried:
        Replicate, Shard, equal blocks, replicas, two-axis; then unequal sections from the rows);
        failing that, a candidate whose pieces the ranks hold in another order (``order``: the
        piece rank r holds), or, for 2-D arrays, one whose pieces' transposes they hold
        (``transposed``); None when none fits.
    """
    cands = [c for c in _candidates(full, arrays) if c != skip]
    for c in cands:
        if _holds(c, full, arrays):
            return LayoutFound(c)
    shape = arrays[0].shape
    diff = [i for i, (s, d) in enumerate(zip(full.shape, shape)) if s != d] if len(shape) == full.ndim else []
    sec = None
    if len(diff) == 1 and all(a.shape == shape for a in arrays) and full.dtype != object:
        sec = _sections_from_rows(full, arrays, diff[0])
        if sec is not None and sec != skip and _holds(sec, full, arrays):
            return LayoutFound(sec)
    if all(a.shape == shape for a in arrays) and full.dtype != object and len(shape) == full.ndim:
        # a padded shard may keep an axis's size (8 kv heads copied onto 2 x 3 ranks, padded to 4)
        # only where the shapes fit no regular layout or a rank holds padding: a regular layout's
        # pieces in a wrong order (kv heads misassigned) stay a misplaced chunk, not a gather
        for axis in diff if len(diff) == 1 else (range(full.ndim) if not diff else ()):
            padded = _padded_from_rows(full, arrays, axis, need_padding=bool(cands) or skip is not None)
            if padded is not None and padded != skip and _holds(padded, full, arrays):
                return LayoutFound(padded)
    for c in [*([skip] if skip is not None else []), *cands, *([sec] if sec is not None else [])]:
        order = _order(c, full, arrays)
        if order is not None:
            return LayoutFound(c, order=tuple(order))
    if full.ndim == 2 and all(a.ndim == 2 for a in arrays):
        flipped = [a.T for a in arrays]
        for c in _candidates(full, flipped):
            if _holds(c, full, flipped):
                return LayoutFound(c, transposed=True)
    return None


def layout_evidence(layout: Layout) -> str:
    """What the values showed, in words: ``"values match chunk r of each of 3 blocks on axis 0"``."""
    if layout.kind == "Replicate":
        return "values equal on every rank"
    a = layout.axis
    if layout.pad is not None:
        from analyzer.padding import expand

        pm = expand(layout.pad)
        copies = sum(e >= 0 for r in pm.ranks for e in r) - pm.units
        return (
            f"values match units of {pm.unit} on axis {a}: every unit held"
            + (f", {copies} copies" if copies else "")
            + f", {sum(e < 0 for r in pm.ranks for e in r)} zero units of padding"
        )
    if layout.sections:
        secs = list(layout.sections)
        what = f"each of {len(secs)} blocks" if len(set(secs)) == 1 else f"each of the sections {secs}"
        if layout.replicas:
            return (
                f"values match chunk r // k of {what} on axis {a}, k = {list(layout.section_replicas)} ranks per chunk"
            )
        return f"values match chunk r of {what} on axis {a}"
    if layout.replicas and layout.inner is not None:
        k = layout.replicas
        return f"values match chunk r // {k} on axis {a}, cut {k} ways on axis {layout.inner}"
    if layout.replicas:
        return f"values match chunk r // {layout.replicas} on axis {a}"
    return f"values match chunk r on axis {a}"


def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest() + str(a.shape).encode()


class _Weights:
    """The sequential graph's stored weights, and digests of their pieces, read on demand."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self._digests: dict[tuple[str, Layout, int], dict[int, bytes]] = {}

    def holding(self, layout: Layout, got: np.ndarray, r: int, n: int, exclude: str) -> tuple[str, ...]:
        """Sequential weights of ``exclude``'s shape and dtype whose piece r under ``layout``
        equals ``got`` (by digest, then by value)."""
        want = _digest(got)
        mine = self.arrays[exclude]
        out = []
        for name, full in self.arrays.items():
            if name == exclude or full.dtype != got.dtype or full.shape != mine.shape:
                continue
            key = (name, layout, n)
            if key not in self._digests:
                pieces = _pieces(layout, full, n)
                self._digests[key] = {} if pieces is None else {i: _digest(p) for i, p in enumerate(pieces)}
            if self._digests[key].get(r) == want and _same(_pieces(layout, full, n)[r], got):
                out.append(name)
        return tuple(sorted(out))


def _refuted(
    name: str,
    rel: InputRelation,
    full: np.ndarray,
    arrays: Sequence[np.ndarray],
    weights: _Weights,
    order: Sequence[int] | None = None,
) -> tuple[list[MisplacedChunk], list[WeightMismatch], str]:
    """The facts and the note of a relation its values refute (``order``: the rank whose piece
    each rank holds, when they hold the layout's pieces in a permuted order)."""
    n = len(arrays)
    lay = rel.layout
    pieces = _pieces(lay, full, n) or [None] * n
    misplaced, mismatches, parts = [], [], []
    chunked = lay.kind == "Shard" and not lay.sections and lay.inner is None and lay.micro is None
    groups = n // lay.replicas if chunked and lay.replicas else n
    chunks = np.split(full, groups, axis=lay.axis) if chunked and full.shape[lay.axis] % groups == 0 else []
    for r, (got, want) in enumerate(zip(arrays, pieces)):
        if want is not None and _same(got, want):
            continue
        d = rel.rank_values[r]
        matches = weights.holding(lay, got, r, n, name)
        mismatches.append(WeightMismatch(name, r, d, lay, matches))
        text = f"rank {r} holds {'the values of ' + ', '.join(matches) if matches else 'other values'}"
        if chunks:
            same = [c for c, chunk in enumerate(chunks) if _same(chunk, got)]
            found = same[0] if same else -1
            misplaced.append(MisplacedChunk(name, r, d, lay.axis, found, groups))
            k = lay.replicas or 1
            if found >= 0 or not matches:
                held = f"chunk {found}" if found >= 0 else "no chunk"
                text = f"rank {r} holds {held} of {groups}, {lay} gives it chunk {r // k}"
        elif order is not None and lay.kind == "Shard":  # fused sections: rank r holds rank c's piece
            misplaced.append(MisplacedChunk(name, r, d, lay.axis, order[r], n))
            text = f"rank {r} holds the piece of rank {order[r]}"
        parts.append(text)
    if len(parts) == n and all(p == f"rank {r} holds other values" for r, p in enumerate(parts)):
        parts = ["every rank holds other values"]
    note = f"{name}: its values refute {lay}{' (from the spec)' if rel.source == 'spec' else ''} ({'; '.join(parts)})"
    return misplaced, mismatches, note


def _boundary_names(model: onnx.ModelProto) -> set[str]:
    """Names of the graph inputs and initializers of ``model``."""
    return {v.name for v in model.graph.input} | {i.name for i in model.graph.initializer}


def _on_rank_zero_only(name: str, full: np.ndarray, arrays: Sequence[np.ndarray | None], held: Callable) -> bool:
    """Weight ``name`` is stored on rank 0 alone, with the sequential values (same shape, dtype
    and elements), and no other rank has an input or initializer of that name: vLLM's
    ``RowParallelLinear`` adds its bias on tensor-parallel rank 0 only, so the other ranks'
    exports never see it. A weight that some rank r > 0 holds, that rank 0 lacks, or whose copy
    on rank 0 differs, is not such a weight. ``held()`` gives each rank's input and initializer
    names (read once, when first needed)."""
    if arrays[0] is None or not _same(arrays[0], full):
        return False
    return all(name not in names for names in held()[1:])


def decide_by_values(
    seq: onnx.ModelProto,
    ranks: Sequence[onnx.ModelProto],
    relations: Sequence[InputRelation],
    same: Sequence[int] | None = None,
) -> ValueFindings:
    """Check every relation of a stored weight by value and search layouts where none holds.

    Args:
        seq: the sequential model.
        ranks: the rank models, rank 0 first.
        relations: the relations from names, shapes and the spec.
        same: optional, per rank the index of the first rank whose graph is stored byte for
            byte like its own (its arrays are read once).

    Returns:
        The relations with each stored weight's relation confirmed (``evidence`` says what the
        values showed), replaced by the layout the values prove (an inferred relation), or
        dropped (refuted: its facts and a note); also a relation for a stored weight whose
        shapes fit none but whose values prove one, and ``Replicate`` on rank 0 alone (rank
        values ``(name, "", ..., "")``) for a weight that rank 0 alone stores, with the
        sequential values (:func:`_on_rank_zero_only`). A spec relation is checked, never
        replaced. A weight whose dtype differs between the sides is not compared.
    """
    n = len(ranks)
    seq_arrays = _stored(seq)
    if not seq_arrays:
        return ValueFindings(list(relations))
    by_name: dict[str, list[InputRelation]] = {}
    for rel in relations:
        by_name.setdefault(rel.seq_value, []).append(rel)
    wanted: set[str] = set(seq_arrays)
    for rels in by_name.values():
        for rel in rels:
            wanted.update(rel.rank_values)
    rank_arrays = _per_model(lambda m: _stored(m, wanted), ranks, same)
    weights = _Weights(seq_arrays)
    out = ValueFindings([])
    decided: dict[str, list[InputRelation]] = {}
    held = functools.cache(lambda: _per_model(_boundary_names, ranks, same))
    for name, full in seq_arrays.items():
        rels = by_name.get(name, [])
        if len(rels) > 1 or any(r.layout.kind == "Partial" or r.layout.micro is not None for r in rels):
            continue
        rel = rels[0] if rels else None
        names = rel.rank_values if rel is not None else (name,) * n
        arrays = [rank_arrays[r].get(d) for r, d in enumerate(names)]
        if rel is None and n > 1 and _on_rank_zero_only(name, full, arrays, held):
            decided[name] = [
                InputRelation(
                    name, REPLICATE, (name,) + ("",) * (n - 1), "inferred",
                    "rank 0 stores it with the sequential values; "
                    + (f"ranks 1..{n - 1} do not hold it" if n > 2 else "rank 1 does not hold it"),
                    established="values",
                )
            ]
            out.decided.add(name)
            continue
        if any(a is None or a.dtype != full.dtype for a in arrays):
            continue
        if rel is not None and _holds(rel.layout, full, arrays):
            decided[name] = [replace(rel, evidence=layout_evidence(rel.layout), established="values")]
            continue
        found = None if rel is not None and rel.source == "spec" else search_layout(full, arrays, rel and rel.layout)
        if found is not None and found.order is None and not found.transposed:
            why = layout_evidence(found.layout)
            if rel is not None:
                why += f" (not {rel.layout}, which the shapes gave)"
            decided[name] = [InputRelation(name, found.layout, names, "inferred", why, established="values")]
            out.decided.add(name)
            continue
        if rel is None and found is None:
            continue  # shapes fit no layout and no value proves one: the shape note stays
        decided[name] = []
        out.decided.add(name)
        if found is not None and found.transposed:
            out.transposed.extend(TransposedPiece(name, r, d, found.layout) for r, d in enumerate(names))
            out.notes.append(
                f"{name}: every rank stores the transpose of its piece of {found.layout} (weights stored "
                "transposed): no input relation; a rank Transpose of it is the piece"
            )
            continue
        base = rel if rel is not None else InputRelation(name, found.layout, names)
        if found is not None and found.order is not None:
            base = replace(base, layout=found.layout)
        order = found.order if found is not None else None
        misplaced, mismatches, note = _refuted(name, base, full, arrays, weights, order)
        if found is not None and found.order is not None:
            note += f"; a permuted rank order: ranks 0..{n - 1} hold the pieces of ranks {list(found.order)}"
        out.misplaced.extend(misplaced)
        out.mismatches.extend(mismatches)
        out.notes.append(note)
    done: set[str] = set()
    for rel in relations:
        if rel.seq_value in decided:
            if rel.seq_value not in done:
                out.relations.extend(decided[rel.seq_value])
                done.add(rel.seq_value)
        else:
            out.relations.append(rel)
    out.relations.extend(r for name, rels in decided.items() if name not in done for r in rels)
    return out
