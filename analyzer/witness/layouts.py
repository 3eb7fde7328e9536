"""Numeric meaning of a :class:`~analyzer.layout.Layout`: split, rebuild, compare.

``distribute`` turns a sequential array ``s`` into rank pieces ``d_0 .. d_{N-1}`` and
``rebuild`` turns pieces back into ``s``; the two are inverse for every layout (exactly for
Replicate, Shard and Partial(max), up to float rounding for Partial(sum)). The semantics are
those documented in :mod:`analyzer.layout` (PyTorch DTensor placements; Megatron fused
sections for ``Shard(axis, sections)``).

The error measures never raise: a shape mismatch or a layout that cannot apply yields
``inf``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from analyzer.layout import Layout

__all__ = [
    "BLOCK",
    "distribute",
    "max_abs_diff",
    "rebuild",
    "rebuild_micro",
    "relation_error",
    "relative_error",
    "replicate_spread",
]


def _axis_size(value: np.ndarray, axis: int) -> int:
    if axis >= value.ndim:
        raise ValueError(f"axis {axis} out of range for a rank-{value.ndim} array")
    return int(value.shape[axis])


def _section_sizes(layout: Layout, dim: int, n: int, reps: Sequence[int] = ()) -> tuple[int, ...]:
    """Sizes of the fused sections along the axis, checked against ``dim`` and ``n`` (section
    i is cut into ``n / reps[i]`` chunks)."""
    sections = tuple(layout.sections) if layout.sections else (dim,)
    reps = tuple(reps) or (1,) * len(sections)
    if sum(sections) != dim:
        raise ValueError(
            f"sections {list(sections)} sum to {sum(sections)}, axis size is {dim}"
        )
    for size, k in zip(sections, reps):
        if n % k or size % (n // k):
            raise ValueError(
                f"section of size {size} does not split into {n // max(k, 1)} equal chunks"
            )
    return sections


def distribute(
    layout: Layout,
    value: np.ndarray,
    n: int,
    *,
    rng: np.random.Generator | None = None,
) -> list[np.ndarray]:
    """Split a sequential array into the pieces ``n`` ranks hold under ``layout``.

    Args:
        layout: the relation between ``value`` and the pieces.
        value: the sequential array ``s``.
        n: number of ranks (>= 1).
        rng: randomness for Partial layouts (default ``np.random.default_rng(0)``).
            Partial(sum): ranks ``1..n-1`` get random addends, rank 0 gets the rest.
            Partial(max): every element's maximum sits on a random rank, the other ranks
            hold strictly smaller values (``False`` for bool).

    Returns:
        ``n`` arrays. Shard: rank ``r`` holds chunk ``r`` of ``value`` along ``axis``
        (``shape[axis] / n``); with ``sections``, chunk ``r`` of every section, concatenated
        in section order. With ``replicas=k``: chunk ``r // k`` of ``n / k`` (and of
        that, chunk ``r % k`` along ``inner``). Replicate: ``value`` itself for every rank.
        A ``scale`` c: the pieces of ``c * value``.

    Raises:
        ValueError: ``n < 1``, an axis out of range, a size not divisible by ``n``,
            sections not summing to the axis size, or Partial(sum) of a bool array.
    """
    if n < 1:
        raise ValueError(f"need at least one rank, got {n}")
    value = np.asarray(value)
    if layout.scale is not None:  # the pieces of scale * value
        return distribute(replace(layout, scale=None), value * float(layout.scale), n, rng=rng)
    if layout.kind == "Replicate":
        return [value] * n
    if layout.micro is not None:
        if layout.kind != "Shard":
            raise ValueError("one micro-batch's terms of a Partial(sum) do not determine the pieces")
        count, k = layout.micro
        axis = int(layout.axis)  # type: ignore[arg-type]
        if _axis_size(value, axis) % (n * count):
            raise ValueError(f"axis {axis} of size {value.shape[axis]} does not split into {n * count} chunks")
        chunks = np.split(value, n * count, axis=axis)
        return [chunks[r * count + k] for r in range(n)]
    if layout.kind == "Shard" and isinstance(layout.replicas, int):
        return _replica_pieces(layout, value, n)
    if layout.pad is not None:
        return _padded_pieces(layout, value, n)
    if layout.kind == "Shard":
        axis = int(layout.axis)  # type: ignore[arg-type]
        dim = _axis_size(value, axis)
        reps = layout.section_replicas or (1,)
        sections = _section_sizes(layout, dim, n, reps)
        parts = np.split(value, np.cumsum(sections)[:-1], axis=axis)
        chunks = [np.split(part, n // k, axis=axis) for part, k in zip(parts, reps)]
        return [np.concatenate([c[r // k] for c, k in zip(chunks, reps)], axis=axis) for r in range(n)]
    rng = rng if rng is not None else np.random.default_rng(0)
    if layout.even:
        return [value / n for _ in range(n)]
    if layout.reduce == "sum":
        return _partial_sum_pieces(value, n, rng)
    return _partial_max_pieces(value, n, rng)


def _padded_pieces(layout: Layout, value: np.ndarray, n: int) -> list[np.ndarray]:
    """The pieces of a padded shard (analyzer/padding.py): each rank's listed units, zeros for
    its padding ("anything" units as zeros too)."""
    from analyzer.padding import expand, gather

    axis = int(layout.axis)  # type: ignore[arg-type]
    _axis_size(value, axis)
    if len(expand(layout.pad).ranks) != n:  # type: ignore[arg-type]
        raise ValueError(f"the padded layout is for {len(expand(layout.pad).ranks)} ranks, not {n}")  # type: ignore[arg-type]
    return [gather(layout.pad, value, axis, r) for r in range(n)]  # type: ignore[arg-type]


def _padded_error(layout: Layout, seq_value: np.ndarray, arrays: Sequence[np.ndarray]) -> float:
    """Max abs error of each rank's piece against its listed units and zero units; units that
    may hold anything ("x", analyzer/padding.py) are not compared."""
    from analyzer.padding import mask

    axis = int(layout.axis)  # type: ignore[arg-type]
    expected = _padded_pieces(layout, seq_value, len(arrays))
    worst = 0.0
    for r, (a, e) in enumerate(zip(arrays, expected)):
        if a.shape != e.shape:
            return float("inf")
        keep = mask(layout.pad, a.shape, axis, r)  # type: ignore[arg-type]
        worst = max(worst, max_abs_diff(np.where(keep, a, 0), np.where(keep, e, 0)))
    return worst


def _padded_rebuild(layout: Layout, pieces: Sequence[np.ndarray]) -> np.ndarray:
    """The sequential value from a padded shard's pieces: each seq unit from the first rank
    that holds it (a unit no rank holds cannot be rebuilt: ValueError)."""
    from analyzer.padding import expand

    pm = expand(layout.pad)  # type: ignore[arg-type]
    axis = int(layout.axis)  # type: ignore[arg-type]
    found: dict[int, np.ndarray] = {}
    for r, piece in enumerate(pieces):
        for j, src in enumerate(pm.ranks[r]):
            if src >= 0 and src not in found:
                found[src] = np.take(np.asarray(piece), range(j * pm.unit, (j + 1) * pm.unit), axis=axis)
    if len(found) != pm.units:
        raise ValueError("the padded layout does not hold every unit of the sequential axis")
    units = [found[k] for k in range(pm.units) for _ in range(pm.group)]
    return np.concatenate(units, axis=axis)


def _groups(layout: Layout, n: int) -> int:
    """Number of rank groups ``N / k`` of a ``Shard(axis, replicas=k)``."""
    k = int(layout.replicas)  # type: ignore[arg-type]
    if n % k:
        raise ValueError(f"replicas={k} does not divide {n} ranks into groups")
    return n // k


def _replica_pieces(layout: Layout, value: np.ndarray, n: int) -> list[np.ndarray]:
    """Rank r holds chunk ``r // k`` of ``N / k`` along the axis (and chunk ``r % k`` of that
    along ``inner``, when given)."""
    k = int(layout.replicas)  # type: ignore[arg-type]
    groups = _groups(layout, n)
    axis = int(layout.axis)  # type: ignore[arg-type]
    if _axis_size(value, axis) % groups:
        raise ValueError(f"axis {axis} of size {value.shape[axis]} does not split into {groups} chunks")
    chunks = np.split(value, groups, axis=axis)
    if layout.inner is None:
        return [chunks[r // k] for r in range(n)]
    if _axis_size(value, layout.inner) % k:
        raise ValueError(f"axis {layout.inner} of size {value.shape[layout.inner]} does not split into {k} chunks")
    return [np.split(chunks[r // k], k, axis=layout.inner)[r % k] for r in range(n)]


def _replica_rebuild(layout: Layout, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Inverse of :func:`_replica_pieces` from ranks ``0, k, 2k, ...`` (``inner``: every rank
    of each group)."""
    k = int(layout.replicas)  # type: ignore[arg-type]
    groups = _groups(layout, len(arrays))
    axis = int(layout.axis)  # type: ignore[arg-type]
    if layout.inner is None:
        return np.concatenate([arrays[g * k] for g in range(groups)], axis=axis)
    return np.concatenate(
        [np.concatenate(arrays[g * k : g * k + k], axis=layout.inner) for g in range(groups)], axis=axis
    )


def _partial_sum_pieces(
    value: np.ndarray, n: int, rng: np.random.Generator
) -> list[np.ndarray]:
    if value.dtype == np.bool_:
        raise ValueError("Partial(sum) of a bool array is not defined")
    if np.issubdtype(value.dtype, np.integer):
        others = [
            rng.integers(-4, 5, size=value.shape).astype(value.dtype)
            for _ in range(n - 1)
        ]
    else:
        others = [
            rng.standard_normal(value.shape).astype(value.dtype) for _ in range(n - 1)
        ]
    first = value
    for piece in others:
        first = first - piece
    return [np.asarray(first, dtype=value.dtype), *others]


def _partial_max_pieces(
    value: np.ndarray, n: int, rng: np.random.Generator
) -> list[np.ndarray]:
    owner = rng.integers(0, n, size=value.shape)
    pieces = []
    for r in range(n):
        if value.dtype == np.bool_:
            lower = np.zeros_like(value)
        elif np.issubdtype(value.dtype, np.integer):
            lower = value - rng.integers(1, 4, size=value.shape).astype(value.dtype)
        else:
            gap = np.abs(rng.standard_normal(value.shape)) + 0.5
            lower = (value - gap * np.maximum(1.0, np.abs(value))).astype(value.dtype)
        pieces.append(np.where(owner == r, value, lower).astype(value.dtype))
    return pieces


def rebuild(layout: Layout, pieces: Sequence[np.ndarray]) -> np.ndarray:
    """Rebuild the sequential value from the rank pieces (inverse of :func:`distribute`).

    Args:
        layout: the relation between the sequential value and the pieces.
        pieces: ``d_0 .. d_{N-1}``, one array per rank, in rank order.

    Returns:
        Replicate: ``pieces[0]`` (see :func:`replicate_spread` for the disagreement).
        Shard: concatenation along ``axis``; with ``sections`` each piece is cut into
        per-section chunks (``section / N`` each) and the sections are re-interleaved.
        With ``replicas=k``: the pieces of ranks 0, k, 2k, ... concatenated along ``axis``
        (with ``inner``: each group's k pieces concatenated along ``inner`` first). A section
        with ``replicas`` k is rebuilt from ranks 0, k, 2k, ....
        Partial(sum): elementwise sum in rank order. Partial(max): elementwise maximum.
        A ``scale`` c divides the result by c (the pieces hold c times the value).

    Raises:
        ValueError: no pieces, incompatible shapes, or sections that do not fit.
    """
    if not pieces:
        raise ValueError("rebuild needs at least one piece")
    if layout.pad is not None:
        return _padded_rebuild(layout, pieces)
    if layout.scale is not None:  # the pieces rebuild scale * s
        whole = rebuild(replace(layout, scale=None), pieces)
        return (whole / float(layout.scale)).astype(whole.dtype, copy=False)
    arrays = [np.asarray(p) for p in pieces]
    n = len(arrays)
    if layout.micro is not None:
        raise ValueError("a micro-batch relation holds one of M pieces per rank: use rebuild_micro")
    if layout.kind == "Replicate":
        return arrays[0]
    if layout.kind == "Shard" and isinstance(layout.replicas, int):
        return _replica_rebuild(layout, arrays)
    if layout.kind == "Shard":
        axis = int(layout.axis)  # type: ignore[arg-type]
        if not layout.sections:
            return np.concatenate(arrays, axis=axis)
        sections = tuple(layout.sections)
        reps = layout.section_replicas
        if any(n % k or size % (n // k) for size, k in zip(sections, reps)):
            raise ValueError(f"sections {list(sections)} do not split over {n} ranks")
        local = [size * k // n for size, k in zip(sections, reps)]
        for r, piece in enumerate(arrays):
            dim = _axis_size(piece, axis)
            if dim != sum(local):
                raise ValueError(
                    f"piece {r} has size {dim} along axis {axis}; sections {list(sections)} "
                    f"over {n} ranks need {sum(local)}"
                )
        cuts = np.cumsum(local)[:-1]
        split = [np.split(piece, cuts, axis=axis) for piece in arrays]
        return np.concatenate(
            [
                np.concatenate([split[r][i] for r in range(0, n, k)], axis=axis)
                for i, k in enumerate(reps)
            ],
            axis=axis,
        )
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"Partial pieces have different shapes {sorted(shapes)}")
    op = np.add if layout.reduce == "sum" else np.maximum
    with np.errstate(over="ignore", invalid="ignore"):  # float16 pieces may overflow to inf
        return np.asarray(functools.reduce(op, arrays))


def rebuild_micro(kind: str, axis: int | None, pieces: Sequence[Sequence[np.ndarray]]) -> np.ndarray:
    """Rebuild the sequential value from the micro-batch pieces of every rank.

    Args:
        kind: ``"Shard"`` or ``"Partial"`` (sum).
        axis: the shard axis (``Shard``).
        pieces: ``pieces[r][k]``: rank r's piece of micro-batch k (the ``micro=(M, k)``
            relations k = 0..M-1, analyzer/layout.py).

    Returns:
        Shard: the ``N*M`` pieces concatenated along ``axis`` in the order ``r*M + k``.
        Partial: their elementwise sum.

    Raises:
        ValueError: no pieces, ranks with different numbers of micro-batches, or shapes that
            do not fit.
    """
    flat = [np.asarray(p) for per_rank in pieces for p in per_rank]
    if not flat or len({len(per_rank) for per_rank in pieces}) != 1:
        raise ValueError("every rank needs the same number (>= 1) of micro-batch pieces")
    if kind == "Shard":
        return np.concatenate(flat, axis=int(axis))  # type: ignore[arg-type]
    if len({a.shape for a in flat}) != 1:
        raise ValueError(f"Partial pieces have different shapes {sorted({a.shape for a in flat})}")
    return np.asarray(functools.reduce(np.add, flat))


#: elements compared per block by :func:`max_abs_diff` (and scanned per block by the witness's
#: ``_scale``): a block's float64 temporaries stay a few tens of MB, not several times the array
BLOCK = 1 << 21


def max_abs_diff(a: Any, b: Any) -> float:
    """Largest ``|a - b|`` over elements, ``inf`` when the shapes differ.

    Equal elements count as 0 even when infinite (``-inf`` masks), NaN against NaN counts
    as 0, NaN against a number counts as ``inf``. Bool and integer arrays compare as
    float64. Empty arrays of the same shape give 0. Compared in blocks of :data:`BLOCK`
    elements, so the float64 temporaries do not grow with the array (an LM head's 2.6e8 float16
    weights would otherwise take five 2 GB arrays at once).

    Args:
        a: an array (or anything ``np.asarray`` accepts).
        b: an array of the same shape (no broadcasting).

    Returns:
        The maximum absolute difference as a Python float.
    """
    try:
        x = np.asarray(a)
        y = np.asarray(b)
        if x.shape != y.shape:
            return float("inf")
        if x.size == 0:
            return 0.0
        x = x.reshape(-1)
        y = y.reshape(-1)
        x[:1].astype(np.float64)
        y[:1].astype(np.float64)
    except (TypeError, ValueError):
        return float("inf")
    worst = 0.0
    for start in range(0, x.size, BLOCK):
        xs = x[start : start + BLOCK].astype(np.float64)
        ys = y[start : start + BLOCK].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            same = (xs == ys) | (np.isnan(xs) & np.isnan(ys))
            diff = np.where(same, 0.0, np.abs(xs - ys))
        if np.isnan(diff).any():
            return float("inf")
        worst = max(worst, float(diff.max()))
    return worst


def replicate_spread(pieces: Sequence[np.ndarray]) -> float:
    """How much the ranks disagree on a value that should be replicated.

    Args:
        pieces: one array per rank.

    Returns:
        ``max_r max|d_r - d_0|`` (``inf`` if the shapes differ, 0 for a single piece).
    """
    if not pieces:
        return 0.0
    return max((max_abs_diff(p, pieces[0]) for p in pieces[1:]), default=0.0)


def relation_error(layout: Layout, seq_value: Any, pieces: Sequence[Any]) -> float:
    """Max abs error between the sequential value and the value rebuilt from the pieces.

    Args:
        layout: the claimed relation.
        seq_value: the sequential value ``s``.
        pieces: ``d_0 .. d_{N-1}``.

    Returns:
        Replicate: ``max_r max|d_r - s|`` (every rank must hold ``s``). Shard with
        ``replicas`` or ``micro``: ``max_r max|d_r - distribute(s)[r]|`` (every rank must hold
        its group's, or its micro-batch's, chunk). ``Partial`` with ``micro``: ``inf`` (one
        micro-batch's terms do not determine the sum: :func:`rebuild_micro`). Otherwise
        ``max|rebuild(layout, pieces) - s|``. ``inf`` when shapes do not fit or the layout
        cannot apply; never raises.
    """
    if not pieces:
        return float("inf")
    if layout.kind == "Replicate" and layout.scale is not None:
        try:
            return max(max_abs_diff(np.asarray(p) / float(layout.scale), seq_value) for p in pieces)
        except TypeError:
            return float("inf")
    if layout.kind == "Replicate":
        return max(max_abs_diff(p, seq_value) for p in pieces)
    try:
        arrays = [np.asarray(p) for p in pieces]
        if layout.pad is not None:
            return _padded_error(layout, np.asarray(seq_value), arrays)
        if layout.replicas or (layout.micro is not None and layout.kind == "Shard"):
            # replicated groups: every rank must hold its group's chunk, so each piece is
            # compared with the piece the layout gives that rank
            expected = distribute(layout, np.asarray(seq_value), len(arrays))
            return max(max_abs_diff(a, e) for a, e in zip(arrays, expected))
        rebuilt = rebuild(layout, arrays)
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError):
        return float("inf")
    return max_abs_diff(rebuilt, seq_value)


def relative_error(layout: Layout, seq_value: Any, pieces: Sequence[Any]) -> float:
    """:func:`relation_error` divided by the largest finite ``|s|``.

    Args:
        layout: the claimed relation.
        seq_value: the sequential value ``s``.
        pieces: ``d_0 .. d_{N-1}``.

    Returns:
        ``relation_error / max(max|s|, tiny)`` over the finite elements of ``s`` (``tiny``
        is the smallest normal float32); 0 when the error is 0, ``inf`` when it is ``inf``.
    """
    err = relation_error(layout, seq_value, pieces)
    if err == 0.0 or not np.isfinite(err):
        return err
    try:
        s = np.asarray(seq_value, dtype=np.float64)
        finite = np.abs(s[np.isfinite(s)])
        scale = float(finite.max()) if finite.size else 0.0
    except (TypeError, ValueError):
        return float("inf")
    return err / max(scale, float(np.finfo(np.float32).tiny))
