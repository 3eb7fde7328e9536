"""Helpers of the numeric witness (:mod:`analyzer.simulate`).

- :mod:`analyzer.sim.errors`: exception types.
- :mod:`analyzer.sim.layouts`: distribute a sequential array into rank pieces and rebuild it,
  error measures between a sequential value and its rank pieces.
- :mod:`analyzer.sim.collectives`: NCCL collectives in numpy, paired across rank threads.
- :mod:`analyzer.sim.inputs`: random graph inputs and their per-rank derivation.
"""

from __future__ import annotations

__all__: list[str] = []
