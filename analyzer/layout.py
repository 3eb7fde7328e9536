"""Relations between a sequential tensor and its per-rank counterparts (DTensor placements).

A *layout* says how the rank values ``d_0 .. d_{N-1}`` rebuild the sequential value ``s``
(PyTorch DTensor placements, torch.distributed.tensor.placement_types):

- ``Replicate``: every ``d_r == s``.
- ``Shard(axis)``: ``s == concat(d_0 .. d_{N-1}, axis)``. With ``sections=(a, b, c)``,
  ``s`` is made of consecutive sections of those sizes along ``axis`` and *each section* is
  sharded across ranks (Megatron fused QKV with GQA: sections q, k, v): rank r holds
  ``concat(section_0[chunk r], section_1[chunk r], ...)``.
- ``Partial(sum)`` / ``Partial(max)``: ``s == reduce(d_0 .. d_{N-1})`` (a pending all-reduce).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layout", "REPLICATE", "PARTIAL_SUM"]

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
    """

    kind: str
    axis: int | None = None
    sections: tuple[int, ...] | None = None
    reduce: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown layout kind {self.kind!r}; expected one of {_KINDS}")
        if (self.kind == "Shard") != (self.axis is not None):
            raise ValueError("Shard needs an axis; Replicate and Partial take none")
        if self.kind == "Partial" and self.reduce not in ("sum", "max"):
            raise ValueError("Partial needs reduce='sum' or 'max'")

    def __str__(self) -> str:
        if self.kind == "Shard":
            extra = f", sections={list(self.sections)}" if self.sections else ""
            return f"Shard({self.axis}{extra})"
        if self.kind == "Partial":
            return f"Partial({self.reduce})"
        return "Replicate"


REPLICATE = Layout("Replicate")
PARTIAL_SUM = Layout("Partial", reduce="sum")
