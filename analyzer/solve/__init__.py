"""Solving: the rule library (:mod:`~analyzer.solve.rulebook`), loaded once and cached
(:mod:`~analyzer.solve.program`), run with the Python oracles (:mod:`~analyzer.solve.oracles`)
until nothing new appears (:mod:`~analyzer.solve.derive`)."""
