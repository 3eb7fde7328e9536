"""Padded (index-gathered) shards: rank r holds selected, possibly repeated, units of the
sequential value along one axis, plus padding.

transformers-neuronx at a tensor-parallel degree that does not divide the heads or the FFN
(``transformers_neuronx/utils.py`` ``pad_interleaved``/``maybe_pad``, ``layers/attention.py``:
Llama-3 at TP 6 pads 32 query heads to 36 and the FFN from 8192 to 8196 and gives each rank its
own copies of the 8 kv heads) lays a weight out so that rank r holds, along ``axis``, a list of
*units* (``unit`` consecutive elements each) of the sequential weight: unit ``src`` of the
sequential axis, or a zero unit (padding). The layout is ``Shard(axis)`` with a param of the form
(:class:`analyzer.layout.Layout`, ``pad``)::

    pad{U}/{K}:{rank 0}|{rank 1}|...

``U`` the unit size (elements), ``K`` the number of units of the sequential axis (its size is
``K * U``), each rank's list of entries joined by ``.``: ``i`` (unit i of the sequential axis),
``a-b`` (units a..b, ascending), ``z`` (a unit of zeros), ``x`` (a unit that may hold anything),
``i*4`` / ``z*4`` / ``x*4`` (four of them). The rules (rules/parallel/padded.dl) derive new params by
appending steps, which :func:`expand` applies:

- ``~x``: every zero unit becomes "anything" (the op does not keep zeros: ``exp(0) = 1``);
- ``~u{U2}``: the same entries with unit size ``U2`` (a reshape that moves the axis);
- ``~s{a}:{b}:{la}:{lb}``: the sequential units ``[a, b)`` and the rank's entries ``[la, lb)``
  (a slice on both sides; sources re-based to ``a``);
- ``~f{c}``: the same layout in units of ``U / c`` (each unit cut into c; a layout found from
  values has the largest unit, a reshape or a contraction may need a finer one);
- ``~g{R}``: the sequential axis is each unit repeated R times (``repeat_interleave``, GQA's
  ``repeat_kv`` on the sequential side only): an entry ``k`` stands for any of its R copies.

The numeric meaning (:func:`gather`): rank r's value is the concatenation along ``axis`` of its
entries' units, a zero unit for ``z``; an ``x`` unit is not compared (:func:`mask`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ZERO", "ANY", "SPEC_PREFIX", "PadMap", "expand", "param_text", "from_spec", "resolve_spec"]

MAX_ENTRIES = 1 << 22  # units a spec's padded form may list over all ranks (a hostile pad_to)
SPEC_PREFIX = "padspec:"  # a spec entry's padded form before the axis size is known

ZERO = -1  # a unit of zeros
ANY = -2  # a unit that may hold anything (not compared)

_BASE = re.compile(r"^pad(\d+)/(\d+):([^~]*)")
_STEP = re.compile(r"~(x|u\d+|s\d+:\d+:\d+:\d+|g\d+|f\d+)")


@dataclass(frozen=True)
class PadMap:
    """The expanded meaning of a padded param.

    Attributes:
        unit: elements per unit along the axis.
        units: units of the sequential axis (before the ``~g`` repeat).
        group: R of ``~g{R}`` (1 otherwise): the sequential axis has ``units * group * unit``
            elements, entry k standing for units ``k*R .. k*R + R - 1`` (equal copies).
        ranks: per rank, its entries: a unit index >= 0, :data:`ZERO` or :data:`ANY`.
    """

    unit: int
    units: int
    group: int
    ranks: tuple[tuple[int, ...], ...]

    @property
    def seq_size(self) -> int:
        """Size of the sequential axis."""
        return self.units * self.group * self.unit

    @property
    def rank_size(self) -> int:
        """Size of the rank's axis (the same on every rank: one program for every rank)."""
        return len(self.ranks[0]) * self.unit


def _entries(text: str, budget: list[int]) -> tuple[int, ...]:
    out: list[int] = []
    for tok in text.split(".") if text else []:
        head, _, times = tok.partition("*")
        k = int(times) if times else 1
        if "-" in head:
            a, _, b = head.partition("-")
            k *= max(0, int(b) - int(a) + 1)
        budget[0] -= k
        if budget[0] < 0:
            raise ValueError(f"a padded param of over {MAX_ENTRIES:,} units")
        k = int(times) if times else 1
        if head in ("z", "x"):
            out.extend([ZERO if head == "z" else ANY] * k)
        elif "-" in head:
            a, _, b = head.partition("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.extend([int(head)] * k)
    return tuple(out)


def _compress(entries: Sequence[int]) -> str:
    toks: list[str] = []
    i = 0
    while i < len(entries):
        e, j = entries[i], i + 1
        if j < len(entries) and entries[j] == e or e < 0:
            while j < len(entries) and entries[j] == e:
                j += 1
            sym = "z" if e == ZERO else "x" if e == ANY else str(e)
            toks.append(sym if j - i == 1 else f"{sym}*{j - i}")
        else:
            while (
                j < len(entries)
                and entries[j] == entries[j - 1] + 1
                and (j + 1 == len(entries) or entries[j + 1] != entries[j])
            ):
                j += 1
            toks.append(str(e) if j - i == 1 else f"{e}-{entries[j - 1]}")
        i = j
    return ".".join(toks)


def param_text(unit: int, units: int, ranks: Sequence[Sequence[int]]) -> str:
    """The param of a padded shard (module docstring) of unit size ``unit`` over ``units``
    sequential units, rank r holding ``ranks[r]`` (unit indices, :data:`ZERO`, :data:`ANY`).

    Raises:
        ValueError: ranks of different lengths, or an entry out of ``[0, units)``.
    """
    if not ranks or len({len(r) for r in ranks}) != 1:
        raise ValueError("every rank holds the same number of units")
    if any(not (ZERO <= e < units) and e != ANY for r in ranks for e in r):
        raise ValueError(f"a unit index out of [0, {units})")
    return f"pad{unit}/{units}:" + "|".join(_compress(r) for r in ranks)


@functools.lru_cache(maxsize=4096)
def expand(param: str) -> PadMap:
    """The :class:`PadMap` of a padded param with its steps applied (module docstring).

    Raises:
        ValueError: not a padded param, a step that does not apply, or over
            :data:`MAX_ENTRIES` units.
    """
    m = _BASE.match(param)
    if not m:
        raise ValueError(f"not a padded param: {param[:40]!r}")
    unit, units = int(m.group(1)), int(m.group(2))
    budget = [MAX_ENTRIES]
    ranks = [list(_entries(t, budget)) for t in m.group(3).split("|")]
    group = 1
    rest = param[m.end() :]
    for step in _STEP.findall(rest):
        if step == "x":
            ranks = [[ANY if e == ZERO else e for e in r] for r in ranks]
        elif step[0] == "u":
            unit = int(step[1:])
        elif step[0] == "g":
            group *= int(step[1:])
        elif step[0] == "f":
            c = int(step[1:])
            if unit % c:
                raise ValueError(f"a refine step by {c} of units of {unit}")
            ranks = [[e * c + i if e >= 0 else e for e in r for i in range(c)] for r in ranks]
            unit, units = unit // c, units * c
        else:
            a, b, la, lb = map(int, step[1:].split(":"))
            ranks = [[e - a if e >= 0 else e for e in r[la:lb]] for r in ranks]
            if any(e >= b - a for r in ranks for e in r):
                raise ValueError("a slice step that leaves a unit outside")
            units = b - a
    if "".join(f"~{s}" for s in _STEP.findall(rest)) != rest:
        raise ValueError(f"unreadable steps in a padded param: {rest[:40]!r}")
    return PadMap(unit, units, group, tuple(tuple(r) for r in ranks))


def from_spec(
    size: int,
    n: int,
    *,
    unit: int = 1,
    sections: Sequence[int] | None = None,
    pad_to: Sequence[int] | int | None = None,
    repeat: Sequence[int] | int | None = None,
    index: Sequence[Sequence[int]] | None = None,
) -> str:
    """The padded param a spec entry describes (README, "Padded shards").

    Either ``index`` (per rank, the sequential units it holds, -1 for a zero unit) or the
    transformers-neuronx form: the axis is ``sections`` (in units; one section by default); each
    section's units are repeated ``repeat[i]`` times (``repeat_interleave``), padded with zero
    units at the end to ``pad_to[i]`` units (a multiple of n) and cut into n chunks; rank r
    holds chunk r of every section, in section order.

    Args:
        size: size of the sequential axis (elements).
        n: world size.

    Raises:
        ValueError: sizes that do not fit (the message says which), or over
            :data:`MAX_ENTRIES` units listed.
    """
    if size % unit:
        raise ValueError(f"unit {unit} does not divide the axis size {size}")
    units = size // unit
    if index is not None:
        if len(index) != n:
            raise ValueError(f"index lists {len(index)} ranks, the world size is {n}")
        return param_text(unit, units, [[ZERO if e < 0 else e for e in r] for r in index])
    secs = list(sections) if sections else [units]
    if sum(secs) != units:
        raise ValueError(f"sections {secs} add up to {sum(secs)} units, the axis has {units}")
    reps = [repeat] * len(secs) if isinstance(repeat, int) or repeat is None else list(repeat)
    reps = [1 if r is None else r for r in reps]
    pads = [pad_to] * len(secs) if isinstance(pad_to, int) or pad_to is None else list(pad_to)
    if len(reps) != len(secs) or len(pads) != len(secs):
        raise ValueError("give one repeat and one pad_to per section")
    if sum(max(size_i * rep, pad or 0) for size_i, rep, pad in zip(secs, reps, pads)) > MAX_ENTRIES:
        raise ValueError(f"the padded layout lists over {MAX_ENTRIES:,} units")
    ranks: list[list[int]] = [[] for _ in range(n)]
    start = 0
    for size_i, rep, pad in zip(secs, reps, pads):
        seq_units = [start + k for k in range(size_i) for _ in range(rep)]
        pad = len(seq_units) if pad is None else pad
        if pad < len(seq_units) or pad % n:
            raise ValueError(f"pad_to {pad} is below {len(seq_units)} units or not a multiple of {n}")
        seq_units += [ZERO] * (pad - len(seq_units))
        chunk = pad // n
        for r in range(n):
            ranks[r].extend(seq_units[r * chunk : (r + 1) * chunk])
        start += size_i
    return param_text(unit, units, ranks)


def gather(param: str, value: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """Rank ``rank``'s piece of the sequential ``value`` (zeros for zero and "anything" units).

    Raises:
        ValueError: the axis size is not the param's.
    """
    pm = expand(param)
    if value.shape[axis] != pm.seq_size:
        raise ValueError(f"axis {axis} of size {value.shape[axis]} is not the padded layout's {pm.seq_size}")
    step = pm.group * pm.unit
    parts = []
    for e in pm.ranks[rank]:
        if e >= 0:
            parts.append(np.take(value, range(e * step, e * step + pm.unit), axis=axis))
        else:
            shape = list(value.shape)
            shape[axis] = pm.unit
            parts.append(np.zeros(shape, dtype=value.dtype))
    return np.concatenate(parts, axis=axis)


def mask(param: str, shape: Sequence[int], axis: int, rank: int) -> np.ndarray:
    """A bool array of a rank piece's ``shape``: True where the piece is compared (not ``x``)."""
    pm = expand(param)
    keep = np.repeat(np.array([e != ANY for e in pm.ranks[rank]]), pm.unit)
    view = [1] * len(shape)
    view[axis] = len(keep)
    return np.broadcast_to(keep.reshape(view), tuple(shape))


def spec_form(fields: dict) -> str:
    """The unresolved param of a spec entry's padded form (:func:`resolve_spec` resolves it)."""
    import json

    return SPEC_PREFIX + json.dumps(fields, sort_keys=True)


def resolve_spec(param: str, size: int, n: int) -> str:
    """The padded param of a spec entry's form (:func:`spec_form`) for an axis of ``size``
    over ``n`` ranks (:func:`from_spec`).

    Raises:
        ValueError: the form does not fit the axis (the message says why).
    """
    import json

    fields = json.loads(param[len(SPEC_PREFIX) :])
    return from_spec(size, n, **fields)
