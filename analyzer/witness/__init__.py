"""Helpers of the numeric witness (:mod:`analyzer.witness.simulate`).

- :mod:`analyzer.witness.errors`: exception types.
- :mod:`analyzer.witness.layouts`: distribute a sequential array into rank pieces and rebuild it,
  error measures between a sequential value and its rank pieces.
- :mod:`analyzer.witness.collectives`: NCCL collectives in numpy, paired across rank threads.
- :mod:`analyzer.witness.inputs`: random graph inputs and their per-rank derivation.
"""

from __future__ import annotations

__all__: list[str] = []
