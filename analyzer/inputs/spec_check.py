"""A spec relation checked against what the rank graphs record: shapes, and values where stored.

A spec entry is a claim about how rank values rebuild a sequential value
(:mod:`analyzer.layout`). Every claim fixes the shape each rank's value must have
(``Replicate`` and ``Partial``: the sequential shape; ``Shard(axis)``: that axis divided into
the layout's chunks), and where the sequential graph and every rank store the value's data
(an initializer), its values too. A claim the files contradict is refused: otherwise a wrong
spec (``{shard: 1}`` on a weight the ranks hold as ``Shard(0)``) would be taken as true and
could make a wrong program verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from analyzer.errors import InputError
from analyzer.layout import Layout

__all__ = ["check_against_ranks", "check_stored_values", "rank_shape"]

Shape = tuple[int | str, ...]

# Partial(sum) pieces stored in float32 add up to the sequential value up to rounding
_PARTIAL_RTOL = 1e-4


def rank_shape(layout: Layout, shape: Shape, n: int) -> tuple[int | None, ...]:
    """The shape each of ``n`` ranks holds of a sequential value of ``shape`` under ``layout``.

    Args:
        layout: the relation (:mod:`analyzer.layout`).
        shape: the sequential value's shape; a symbolic or unknown dim is a string.
        n: world size.

    Returns:
        One entry per axis: the size, or None where it is not known (a symbolic dim).

    Raises:
        ValueError: the shard axis is not of the value, or its size does not split into the
            layout's equal chunks (the message says why).
    """
    out: list[int | None] = [d if isinstance(d, int) and d > 0 else None for d in shape]
    if layout.kind != "Shard":
        return tuple(out)
    axis = int(layout.axis)  # type: ignore[arg-type]
    if axis >= len(shape):
        raise ValueError(f"the value has {len(shape)} dimensions, so no axis {axis}")
    dim = out[axis]
    if dim is None:
        return tuple(out)
    if layout.pad is not None:
        from analyzer.padding import expand

        pm = expand(layout.pad)
        if pm.seq_size != dim or len(pm.ranks) != n:
            raise ValueError(f"the padded layout is of an axis of {pm.seq_size} over {len(pm.ranks)} ranks")
        out[axis] = pm.rank_size
        return tuple(out)
    if layout.micro is not None:
        parts = [(dim, n * layout.micro[0])]
    elif layout.sections:
        parts = [(size, n // k) for size, k in zip(layout.sections, layout.section_replicas)]
    elif isinstance(layout.replicas, int):
        parts = [(dim, n // layout.replicas)]
    else:
        parts = [(dim, n)]
    for size, chunks in parts:
        if chunks < 1 or size % chunks:
            raise ValueError(f"axis {axis} of size {size} does not split into {chunks} equal chunks")
    out[axis] = sum(size // chunks for size, chunks in parts)
    if layout.inner is not None and isinstance(layout.replicas, int):
        inner = out[layout.inner] if layout.inner < len(out) else None
        if inner is not None:
            if inner % layout.replicas:
                raise ValueError(f"axis {layout.inner} of size {inner} does not split into {layout.replicas} chunks")
            out[layout.inner] = inner // layout.replicas
    return tuple(out)


def _fits(want: tuple[int | None, ...], got: Shape) -> bool:
    return len(want) == len(got) and all(
        w is None or not isinstance(g, int) or g <= 0 or w == g for w, g in zip(want, got)
    )


def check_against_ranks(
    where: str,
    name: str,
    layout: Layout,
    seq_shape: Shape | None,
    rank_values: Sequence[str],
    rank_shapes: Sequence[Mapping[str, Shape]],
    fit: Layout | None,
) -> None:
    """Refuse a spec relation whose layout gives the ranks other shapes than they record.

    Args:
        where: the entry, for the message (``spec.yaml: relations.w``).
        name: the value's name in the sequential graph.
        layout: the spec's relation.
        seq_shape: the sequential value's recorded shape (None: not recorded; nothing to check).
        rank_values: the value's name on rank 0, 1, ...
        rank_shapes: per rank, the recorded shapes of its values.
        fit: the layout the recorded shapes alone give (named in the message), or None.

    Raises:
        InputError: one line naming the entry, the rank, the shape the layout gives and the
            shape recorded (and the layout the shapes fit, if any).
    """
    if seq_shape is None:
        return
    n = len(rank_values)
    try:
        want = rank_shape(layout, seq_shape, n)
    except ValueError as exc:
        raise InputError(f"{where}: {layout} does not fit: {exc}") from None
    for r, (value, shapes) in enumerate(zip(rank_values, rank_shapes)):
        got = shapes.get(value)
        if got is None or _fits(want, got):
            continue
        named = "" if value == name else f" ({value!r})"
        shown = [w if w is not None else "?" for w in want]
        hint = f"; the shapes fit {fit}" if fit is not None else "; the shapes fit no layout"
        raise InputError(
            f"{where}: {layout} gives rank {r} shape {shown}, but rank {r} records {list(got)}{named}{hint}"
        )


def check_stored_values(
    where: str,
    layout: Layout,
    seq: onnx.ModelProto,
    name: str,
    ranks: Sequence[onnx.ModelProto],
    rank_values: Sequence[str],
    arrays,
) -> None:
    """Refuse a spec relation of a value whose data the sequential graph and every rank store
    (initializers) when the data contradict it: ``Replicate`` and ``Shard`` exactly (each rank
    must hold the piece :func:`analyzer.witness.layouts.distribute` gives it), ``Partial(sum)``
    and ``Partial(max)`` up to float rounding (relative error 1e-4). One micro-batch's
    ``Partial`` term is not determined by the sum, so it is not checked.

    Args:
        arrays: ``arrays(model, names) -> {name: ndarray}``, the inline initializers.

    Raises:
        InputError: one line naming the entry and the first rank whose values do not fit.
    """
    if layout.kind == "Partial" and layout.micro is not None:
        return
    full = arrays(seq, {name}).get(name)
    if full is None:
        return
    pieces = [arrays(m, {v}).get(v) for m, v in zip(ranks, rank_values)]
    if any(p is None for p in pieces):
        return
    from analyzer.witness.layouts import distribute, max_abs_diff, relative_error

    if layout.kind == "Partial":
        err = relative_error(layout, full, pieces)
        if err > _PARTIAL_RTOL:
            raise InputError(
                f"{where}: the stored values contradict {layout}: "
                f"the ranks' values combine to the sequential value with relative error {err:.3g}"
            )
        return
    try:
        expected = distribute(layout, full, len(pieces))
    except ValueError as exc:
        raise InputError(f"{where}: {layout} does not fit the stored value: {exc}") from None
    for r, (got, want) in enumerate(zip(pieces, expected)):
        if max_abs_diff(got, want) != 0.0:
            what = "the sequential value" if layout.kind == "Replicate" else f"its piece of {layout}"
            raise InputError(f"{where}: the stored values contradict {layout}: rank {r} does not hold {what}")
