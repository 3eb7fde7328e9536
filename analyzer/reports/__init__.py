"""Reports of a check: text and JSON (:mod:`~analyzer.reports.text`), HTML
(:mod:`~analyzer.reports.html`), SARIF (:mod:`~analyzer.reports.sarif`) and relation tables
on disk (:mod:`~analyzer.reports.tables`)."""
