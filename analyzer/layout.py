"""Relations between a sequential tensor and its per-rank counterparts (DTensor placements).

A *layout* says how the rank values ``d_0 .. d_{N-1}`` rebuild the sequential value ``s``
(PyTorch DTensor placements, torch.distributed.tensor.placement_types):

- ``Replicate``: every ``d_r == s``.
- ``Shard(axis)``: ``s == concat(d_0 .. d_{N-1}, axis)``. With ``sections=(a, b, c)``,
  ``s`` is made of consecutive sections of those sizes along ``axis`` and *each section* is
  sharded across ranks (Megatron fused QKV with GQA: sections q, k, v): rank r holds
  ``concat(section_0[chunk r], section_1[chunk r], ...)``.
- ``Shard(axis, replicas=k)``: the ranks form ``N / k`` groups of ``k`` consecutive ranks
  (a ``(N / k, k)`` device mesh, row-major); ``s == concat(c_0 .. c_{N/k-1}, axis)`` and every
  rank of group g (ranks ``g*k .. g*k+k-1``) holds ``c_g``. This is how vLLM
  (``QKVParallelLinear``, ``num_kv_head_replicas = N / K``) and Megatron-LM place K < N kv
  heads: rank r holds kv head ``r // (N / K)``. With ``inner=b`` the ranks of a group do not
  hold the same piece: they split ``c_g`` further along axis ``b`` (rank ``g*k + j`` holds
  chunk j of k), DTensor placements ``(Shard(axis), Shard(b))`` on that mesh; HF's
  ``repeat_kv`` makes this of a replicated kv head before it views it as plain ``Shard``.
- ``Shard(axis, sections=(a, b, c), replicas=(1, k, k))``: fused sections where section i is
  cut into ``N / replicas[i]`` chunks and rank r holds chunk ``r // replicas[i]`` of it (vLLM's
  fused ``qkv_proj`` with K < N kv heads: q sharded, k and v replicated over groups).
- ``Partial(sum)`` / ``Partial(max)``: ``s == reduce(d_0 .. d_{N-1})`` (a pending all-reduce).
- Micro-batches (gradient accumulation: each rank runs its rows in M micro-batches inside one
  step): ``Shard(axis, micro=(M, k))`` — rank r holds chunk ``r*M + k`` of ``N*M`` equal chunks of
  ``s`` along ``axis``; ``Partial(sum, micro=(M, k))`` — rank r holds the ``(r, k)`` term of a
  sum over ``N*M`` terms (``s == sum over r, k`` of the pieces). One such relation covers one
  micro-batch k; the M relations k = 0..M-1 of ``s`` together rebuild it.

- Padded shards (transformers-neuronx at a degree that does not divide the heads):
  ``Shard(axis)`` with a ``pad`` param — rank r holds listed units of ``s`` along ``axis`` and
  zero units (:mod:`analyzer.padding`; param "pad{U}/{K}:...").

- Scaled relations (a distributed program that holds a multiple of the value): ``Replicate``
  with ``scale=c`` — every ``d_r == c * s``; ``Partial(sum)`` with ``scale=c`` — ``sum_r d_r ==
  c * s``. A mean over a sharded axis taken locally is ``Partial(sum, scale=N)`` (the local means
  sum to N times the mean), the all-reduce of N copies of a ``Replicate`` value is
  ``Replicate(scale=N)``; a division by c on the ranks gives the plain relation back. ``c`` is a
  positive fraction other than 1 (:class:`fractions.Fraction`).
- ``Partial(sum, even)``: every ``d_r == s / N`` (a replicated value divided by the world size on
  every rank, DTensor's replicate -> partial). It is its own relation, not ``Partial(sum)``: each
  piece is a function of ``s`` (any mix of two even splits sums to ``s``), while the pieces of a
  ``Partial(sum)`` are the summands of one decomposition (contraction chunks) that no other
  decomposition's piece may replace (docs/soundness.md, 4.).

In the relation tables a layout is three columns ``(kind, axis, param)``: ``param`` is ""
(plain), the section sizes ("64,16,16"; a replicated section as "16:rep2"), ``"rep{k}"`` /
``"rep{k}/{b}"`` (replicas, inner axis), ``"mb{M}:{k}"`` (micro-batch k of M, for ``Shard`` and
``Partial(sum)``), ``"x{c}"`` (a scaled ``Replicate``, ``c`` as ``2`` or ``1/2``), ``"sum:x{c}"`` (a
scaled ``Partial(sum)``), ``"sum:even"`` (``Partial(sum, even)``) or the reduce op of ``Partial`` (:attr:`Layout.param`,
:meth:`Layout.from_row`; schemas/layouts.dl). The rules read a param's fields from the typed
``Param_*`` relations, whose rows this module writes (:func:`param_facts`), not from the text;
this module is the one place that writes and reads the text (a scaled param the rules build
themselves, rules/core/scale.dl, gets its ``Param_Reduce`` row there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "Layout",
    "REPLICATE",
    "PARTIAL_SUM",
    "micro_family",
    "micro_param",
    "param_facts",
    "replicas_param",
    "sections_param",
]

_KINDS = ("Replicate", "Shard", "Partial")


@dataclass(frozen=True)
class Layout:
    """One relation form.

    Attributes:
        kind: ``"Replicate"``, ``"Shard"`` or ``"Partial"``.
        axis: the sharded axis (non-negative) for ``Shard``; ``None`` otherwise.
        sections: sizes of the fused sections along ``axis`` in the *sequential* tensor,
            each sharded across ranks; ``None`` for one plain block.
        reduce: ``"sum"`` or ``"max"`` for ``Partial``; ``None`` otherwise.
        replicas: for ``Shard``, the number k (>= 2) of consecutive ranks that hold the same
            chunk (``N / k`` chunks along ``axis``); ``None`` for one chunk per rank. With
            ``sections``: one count (>= 1) per section.
        inner: with ``replicas``, the axis along which the k ranks of a group split their
            group's chunk; ``None`` when they hold it whole.
        micro: ``(M, k)``: the piece of micro-batch k of M (module docstring), for a plain
            ``Shard`` or ``Partial(sum)``; ``None`` otherwise.
        scale: ``c`` of a scaled ``Replicate`` or ``Partial(sum)`` (the ranks hold ``c`` times the
            value, module docstring); ``None`` for the value itself.
        pad: for ``Shard``, a padded (index-gathered) shard's param (:mod:`analyzer.padding`):
            rank r holds selected, possibly repeated, units of the axis plus zero padding.
        even: for a plain ``Partial(sum)``, every rank holds ``s / N`` (module docstring).
    """

    kind: str
    axis: int | None = None
    sections: tuple[int, ...] | None = None
    reduce: str | None = None
    replicas: int | tuple[int, ...] | None = None
    inner: int | None = None
    micro: tuple[int, int] | None = None
    scale: Fraction | None = None
    pad: str | None = None
    even: bool = False

    def __post_init__(self) -> None:
        if self.even and (self.kind != "Partial" or self.reduce != "sum" or self.scale or self.micro):
            raise ValueError("even is a parameter of a plain Partial(sum)")
        if self.pad is not None:
            if self.kind != "Shard" or self.sections or self.replicas or self.micro or self.scale:
                raise ValueError("a padded param is a parameter of a plain Shard")
            from analyzer.padding import SPEC_PREFIX, expand

            if not self.pad.startswith(SPEC_PREFIX):  # a spec's form, resolved by apply_spec
                expand(self.pad)  # raises ValueError on a param that is not one
        if self.scale is not None:
            if self.scale <= 0 or self.scale == 1:
                raise ValueError("scale is a positive factor other than 1")
            if self.kind == "Shard" or self.reduce == "max" or self.micro is not None:
                raise ValueError("scale is a parameter of Replicate or of a plain Partial(sum)")
        if self.kind not in _KINDS:
            raise ValueError(f"unknown layout kind {self.kind!r}; expected one of {_KINDS}")
        if (self.kind == "Shard") != (self.axis is not None):
            raise ValueError("Shard needs an axis; Replicate and Partial take none")
        if self.kind == "Partial" and self.reduce not in ("sum", "max"):
            raise ValueError("Partial needs reduce='sum' or 'max'")
        if isinstance(self.replicas, tuple):
            if self.kind != "Shard" or not self.sections or len(self.replicas) != len(self.sections):
                raise ValueError("replicas per section needs a Shard with that many sections")
            if any(k < 1 for k in self.replicas) or self.inner is not None:
                raise ValueError("replicas per section are counts >= 1 (and take no inner axis)")
        elif self.replicas is not None and (self.kind != "Shard" or self.sections or self.replicas < 2):
            raise ValueError("replicas (>= 2) is a parameter of a Shard without sections")
        if self.inner is not None and (self.replicas is None or self.inner == self.axis or self.inner < 0):
            raise ValueError("inner needs replicas and an axis other than the shard axis")
        if self.micro is not None:
            count, k = self.micro
            if count < 2 or not 0 <= k < count:
                raise ValueError("micro=(M, k) needs M >= 2 and 0 <= k < M")
            if self.kind == "Replicate" or self.reduce == "max" or self.sections or self.replicas:
                raise ValueError("micro is a parameter of a plain Shard or of Partial(sum)")

    @property
    def param(self) -> str:
        """The ``param`` column of this layout in the relation tables (module docstring)."""
        if self.pad is not None:
            return self.pad
        if self.micro is not None:
            return micro_param(*self.micro)
        if self.scale is not None:
            return f"x{self.scale}" if self.kind == "Replicate" else f"sum:x{self.scale}"
        if self.even:
            return "sum:even"
        if self.kind == "Partial":
            return self.reduce or "sum"
        if self.sections:
            return sections_param(self.sections, self.section_replicas)
        if self.replicas:
            return replicas_param(self.replicas, self.inner)
        return ""

    def param_facts(self) -> list[tuple[str, dict[str, object]]]:
        """The rows of the ``Param_*`` relations of this layout's param (:func:`param_facts`)."""
        return param_facts(
            self.param,
            sections=self.sections or (),
            section_replicas=self.section_replicas,
            replicas=self.replicas if isinstance(self.replicas, int) else None,
            inner=self.inner,
            micro=self.micro,
            pad=self.pad,
        )

    @property
    def section_replicas(self) -> tuple[int, ...]:
        """Replica count of each section (1: sharded over all ranks); ``()`` without sections."""
        if not self.sections:
            return ()
        return self.replicas if isinstance(self.replicas, tuple) else (1,) * len(self.sections)

    @classmethod
    def from_row(cls, kind: str, axis: int, param: str) -> Layout:
        """The layout of a ``(kind, axis, param)`` row (inverse of :attr:`param`).

        Raises:
            ValueError: a param that is none of the forms in the module docstring.
        """
        if param.startswith("pad") and kind == "Shard":
            return cls("Shard", axis=axis, pad=param)
        if param.startswith("mb") and kind in ("Shard", "Partial"):
            count, _, k = param[2:].partition(":")
            if kind == "Shard":
                return cls("Shard", axis=axis, micro=(int(count), int(k)))
            return cls("Partial", reduce="sum", micro=(int(count), int(k)))
        if kind == "Shard":
            if param.startswith("rep"):
                reps, _, inner = param[3:].partition("/")
                return cls("Shard", axis=axis, replicas=int(reps), inner=int(inner) if inner else None)
            if not param:
                return cls("Shard", axis=axis)
            entries = [x.partition(":rep") for x in param.split(",")]
            sections = tuple(int(size) for size, _, _ in entries)
            reps = tuple(int(k) if k else 1 for _, _, k in entries)
            return cls("Shard", axis=axis, sections=sections, replicas=reps if any(k > 1 for k in reps) else None)
        if kind == "Partial" and param == "sum:even":
            return cls("Partial", reduce="sum", even=True)
        if kind == "Partial" and param.startswith("sum:x"):
            return cls("Partial", reduce="sum", scale=Fraction(param[5:]))
        if kind == "Partial":
            return cls("Partial", reduce=param or "sum")
        if kind == "Replicate" and param.startswith("x"):
            return cls("Replicate", scale=Fraction(param[1:]))
        return cls(kind)

    def __str__(self) -> str:
        if self.pad is not None:
            from analyzer.padding import expand

            pm = expand(self.pad)
            held = sum(e >= 0 for r in pm.ranks for e in r)
            pads = sum(e < 0 for r in pm.ranks for e in r)
            return (
                f"Shard({self.axis}, padded: {pm.rank_size} of {pm.seq_size} per rank, "
                f"{held} units of {pm.unit * pm.group} held, {pads} padding)"
            )
        if self.micro is not None:
            head = f"Shard({self.axis}" if self.kind == "Shard" else "Partial(sum"
            return f"{head}, micro={self.micro[1]}/{self.micro[0]})"
        if self.kind == "Shard":
            extra = f", sections={list(self.sections)}" if self.sections else ""
            if self.sections and self.replicas:
                extra += f", replicas={list(self.section_replicas)}"
            elif self.replicas:
                extra = f", replicas={self.replicas}" + (f", inner={self.inner}" if self.inner is not None else "")
            return f"Shard({self.axis}{extra})"
        if self.even:
            return "Partial(sum, even)"
        if self.kind == "Partial":
            return f"Partial({self.reduce}" + (f", scale={self.scale})" if self.scale is not None else ")")
        return "Replicate" + (f"(scale={self.scale})" if self.scale is not None else "")


REPLICATE = Layout("Replicate")
PARTIAL_SUM = Layout("Partial", reduce="sum")


def replicas_param(k: int, inner: int | None = None) -> str:
    """The param of ``Shard(axis, replicas=k)`` ("rep{k}"), with ``inner=b`` "rep{k}/{b}"."""
    return f"rep{k}" + (f"/{inner}" if inner is not None else "")


def micro_param(count: int, index: int) -> str:
    """The param of micro-batch ``index`` of ``count`` ("mb{M}:{k}")."""
    return f"mb{count}:{index}"


def micro_family(count: int) -> str:
    """The key of the rows that hold for every micro-batch of ``count`` ("mb{M}")."""
    return f"mb{count}"


def sections_param(sizes: Sequence[int], replicas: Sequence[int] = ()) -> str:
    """The param of fused sections of ``sizes`` ("64,16,16"); a section with replicas k > 1
    is written "size:rep{k}" ("1536,256:rep2,256:rep2")."""
    reps = tuple(replicas) or (1,) * len(sizes)
    return ",".join(f"{size}:rep{k}" if k > 1 else str(size) for size, k in zip(sizes, reps))


def param_facts(
    param: str,
    *,
    sections: Sequence[int] = (),
    section_replicas: Sequence[int] = (),
    replicas: int | None = None,
    inner: int | None = None,
    micro: tuple[int, int] | None = None,
    pad: str | None = None,
) -> list[tuple[str, dict[str, object]]]:
    """The rows of the typed fields of a layout param (schemas/layouts.dl): ``Param_Section``
    for each of ``sections`` (with ``section_replicas``, 1 each when empty), ``Param_Replicas``
    for ``replicas`` (and ``inner``, -1 when None), ``Param_Micro`` for ``micro`` = (M, k).
    ``Param_Reduce`` is derived by the rules (rules/core/params.dl).

    Args:
        param: the param's text, as the constructors above write it.

    Returns:
        ``(relation, row)`` pairs, the row a mapping column name -> value.
    """
    rows: list[tuple[str, dict[str, object]]] = []
    if pad is not None:
        from analyzer.padding import expand

        pm = expand(pad)
        length = len(pm.ranks[0])
        rows.append(("Param_Pad", {"p": param, "unit": pm.unit, "units": pm.units, "length": length}))
        for r, entries in enumerate(pm.ranks):
            for j, src in enumerate(entries):
                rows.append(("Param_PadIdx", {"p": param, "r": r, "j": j, "src": src}))
    if micro is not None:
        count, index = micro
        row = {"p": param, "batches": count, "index": index, "family": micro_family(count)}
        rows.append(("Param_Micro", row))
    if replicas is not None:
        rows.append(("Param_Replicas", {"p": param, "replicas": replicas, "inner": -1 if inner is None else inner}))
    start = 0
    reps = tuple(section_replicas) or (1,) * len(sections)
    for i, (size, k) in enumerate(zip(sections, reps)):
        rows.append(("Param_Section", {"p": param, "index": i, "start": start, "size": size, "replicas": k}))
        start += size
    return rows
