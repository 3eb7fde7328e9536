"""Rewriting to a normal form before facts are extracted: one computation that exporters write
in two ways meets in one way (:mod:`analyzer.rewrite.canonical`)."""
