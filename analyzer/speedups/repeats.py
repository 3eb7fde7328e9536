"""Decoder layers from repetition, for graphs whose nodes carry no module scope.

A torch.fx dump (:mod:`analyzer.importers.fx`) names nodes ``add_7``, ``mm_12``: nothing says which layer
a node belongs to. Its decoder layers still show as a *tandem repeat* of node signatures (op
type, domain, and the ``File: path:line`` part of the node's source metadata, which the fx
importer copies from the dump's ``# File:`` comments): layer k+1 runs the same source lines in
the same order as layer k.

:func:`find_repeat` finds the longest stretch of a signature sequence that is a tandem repeat
(period ``p >= MIN_PERIOD``, at least 2 whole periods). Where a period starts inside the stretch
(its phase) is a choice: the sequential and the rank graphs must make the same one, although the
rank graphs have extra nodes (collectives) and their stretches may start at another rotation
(a rank's embedding can end with the same reduce-scatter line a layer ends with).
:func:`choose_anchor` picks the *anchor*: among the signatures that occur exactly once per
period in every graph's stretch (a rotation-invariant property), the one that comes first in the
sequential graph's stretch. Every graph cuts its periods at that signature
(:func:`layer_numbers`), so the rank graphs follow the sequential graph's rotation. The
sequential graph's stretch, having no collectives, most often starts where its first layer does,
so that all its layers are whole; the smallest such signature instead would cut a 2-layer model
into 1 whole layer and 2 pieces.

A wrong phase, a spurious repeat or different layers in different graphs only cost speed: the
layers are then not equal in every graph (:mod:`analyzer.speedups.memo` compares exact fingerprints), or
the relations at the collapsed run's boundary are not a fixpoint and the whole graph is checked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import onnx

__all__ = ["MIN_PERIOD", "Anchor", "Repeat", "choose_anchor", "find_repeat", "layer_numbers", "node_signature"]

#: fewest nodes in a period (shorter repeats are parts of a layer: q, k and v projections)
MIN_PERIOD = 8
#: candidate periods tried (the most frequent distances between equal signatures)
_CANDIDATES = 6
_FILE_LINE = re.compile(r"File: (\S+:\d+)")


def node_signature(node: onnx.NodeProto) -> tuple[str, str, str]:
    """(op type, domain, the ``File: path:line`` parts of its ``source`` metadata joined by
    ``;``, or ``""``): what two nodes of two identical layers share, from the fx importer's
    metadata (:mod:`analyzer.importers.fx.to_onnx`)."""
    for prop in node.metadata_props:
        if prop.key == "source":
            return (node.op_type, node.domain, ";".join(_FILE_LINE.findall(prop.value)))
    return (node.op_type, node.domain, "")


@dataclass(frozen=True)
class Repeat:
    """A tandem repeat: ``sigs[start:end]`` has period ``period`` (``end - start >= 2 * period``);
    ``once`` are the signatures occurring exactly once in ``sigs[start:start + period]``, in the
    order they occur there."""

    start: int
    end: int
    period: int
    once: tuple
    window: tuple  # sigs[start:start + period]


#: ``(last, tail)``: cut periods after signature ``last`` and then the signatures ``tail``
Anchor = tuple


def find_repeat(sigs: Sequence[Hashable], min_period: int = MIN_PERIOD) -> Repeat | None:
    """The longest stretch of ``sigs`` that is a tandem repeat with at least 2 whole periods.

    Args:
        sigs: one hashable signature per node, in node order.
        min_period: the shortest period considered.

    Returns:
        The :class:`Repeat` covering the most nodes in whole periods (the shorter period on a
        tie, so 4 layers are not read as 2 double layers), or None when there is none.

    Candidate periods are the distances between consecutive occurrences of one signature that
    occur most often (each signature occurring once per layer gives the layer's length once per
    pair of layers); each candidate is scanned once, so the cost is ``O(n * candidates)``.
    """
    n = len(sigs)
    if n < 2 * min_period:
        return None
    ids: dict[Hashable, int] = {}
    codes = np.fromiter((ids.setdefault(s, len(ids)) for s in sigs), dtype=np.int64, count=n)
    gaps: Counter[int] = Counter()
    last: dict[int, int] = {}
    for i, c in enumerate(codes.tolist()):
        j = last.get(c)
        if j is not None and i - j >= min_period:
            gaps[i - j] += 1
        last[c] = i
    best: tuple[int, int, int, int] | None = None  # (covered, -period, start, end)
    for p, _ in gaps.most_common(_CANDIDATES):
        if 2 * p > n:
            continue
        start, length = _longest_true_run(codes[:-p] == codes[p:])
        if length < p:
            continue
        covered = (length + p) // p * p
        key = (covered, -p, start, start + length + p)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        return None
    _, neg_p, start, end = best
    p = -neg_p
    window = tuple(sigs[start : start + p])
    counts = Counter(window)
    return Repeat(start, end, p, tuple(s for s in window if counts[s] == 1), window)


def _longest_true_run(mask: np.ndarray) -> tuple[int, int]:
    """(start, length) of the longest run of True in ``mask`` (the first one on a tie)."""
    if not mask.any():
        return 0, 0
    padded = np.concatenate(([False], mask, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    starts, ends = edges[0::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - starts[k])


def choose_anchor(seq: Repeat | None, others: Sequence[Repeat | None]) -> Anchor | None:
    """Where every graph cuts its periods, from the sequential graph's stretch.

    Args:
        seq: the sequential graph's repeat with :attr:`Repeat.window` set.
        others: the other graphs' repeats.

    Returns:
        ``(last, tail)``: ``last`` is the last signature of the sequential graph's first period
        that occurs once per period in every graph; ``tail`` the signatures after it to the end
        of that period that every graph's period has. None when a graph has no repeat or no signature is common.
    """
    if seq is None or any(r is None for r in others):
        return None
    common = [set(r.once) for r in others]
    last = next((s for s in reversed(seq.once) if all(s in c for c in common)), None)
    if last is None:
        return None
    q = seq.window.index(last)
    windows = [set(r.window) for r in others]
    return (last, tuple(s for s in seq.window[q + 1 :] if all(s in w for w in windows)))


def layer_numbers(sigs: Sequence[Hashable], repeat: Repeat, anchor: Anchor) -> dict[int, int]:
    """Node index -> layer, for the whole periods of ``repeat`` cut at ``anchor``.

    Args:
        sigs: the signatures :func:`find_repeat` was given.
        repeat: its result.
        anchor: ``(last, tail)`` from :func:`choose_anchor`.

    Returns:
        Periods start right after ``last`` and the signatures of ``tail`` matched in order (a
        subsequence: a rank graph may have extra nodes among them) before the next ``last``;
        layer ``k`` is the k-th whole period from the first such start at or after the
        stretch's. Empty when fewer than 2 fit or ``last`` or ``tail`` is not found.
    """
    p, window = repeat.period, repeat.window
    last, tail = anchor
    try:
        j = window.index(last) + 1
    except ValueError:
        return {}
    stop = j - 1 + p  # the next ``last``
    for want in tail:
        while j < stop and window[j % p] != want:
            j += 1
        if j == stop:
            return {}
        j += 1
    cut = repeat.start + j % p
    layers = (repeat.end - cut) // p
    if layers < 2:
        return {}
    return {cut + i: i // p for i in range(layers * p)}
