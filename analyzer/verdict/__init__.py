"""From derived relations to a verdict (:mod:`analyzer.verdict.build`)."""
