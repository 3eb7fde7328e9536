"""Exception types of the numeric witness.

Messages are one line: they name the graph (``seq`` or ``rank r``), the node or the
collective index, and the cause.
"""

from __future__ import annotations

__all__ = ["CollectiveMismatch", "SimulationError"]


class SimulationError(RuntimeError):
    """A graph cannot be run (unsupported op, bad input, shape error, missing value)."""


class CollectiveMismatch(SimulationError):
    """The k-th collectives of the ranks do not pair up.

    Raised when ranks issue different collective ops, shapes, dtypes or attributes at the
    same issue index ``k``, or when some rank finishes (or times out) while others wait at
    collective ``k``.
    """
