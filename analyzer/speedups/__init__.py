"""Speed paths beside the main path. Each is called at one place and can be switched off
(``--no-memo``, ``--all-ranks``); the result is the same either way.

- :mod:`analyzer.speedups.memo` (+ :mod:`~analyzer.speedups.repeats`): identical decoder
  layers solved once.
- :mod:`analyzer.speedups.symmetry` (+ :mod:`~analyzer.speedups.one_rank`): one representative
  rank solved when every rank runs the same graph on the same relations.
- :mod:`analyzer.speedups.relevance`: rules that cannot fire on the facts are not run.
- :mod:`analyzer.speedups.beside`, :mod:`~analyzer.speedups.proofs`: whole-file string and
  shape checks on the second core.
"""
