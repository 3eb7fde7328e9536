"""docs/query.md is a notebook: run its Python cells in order in one namespace."""

from __future__ import annotations

import re

from conftest import ROOT

DOC = ROOT / "docs" / "query.md"


def test_query_notebook_runs(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    cells = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)
    assert len(cells) >= 4
    for cell in cells:
        exec(compile(cell, str(DOC), "exec"), namespace)
    assert namespace["result"].verdict == "discrepancy"
    assert "bias-before-reduce" in capsys.readouterr().out
