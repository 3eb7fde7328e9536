"""Full-size graphs from scripts/make_large.py (opt-in: producing them takes minutes to tens
of minutes, so CI does not). Set SHARDLOG_LARGE to the folder holding, e.g.,
``llama31_405b_tp8/`` and ``llama31_405b_tp8_bug97/`` (made with ``--bug-layer 97``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from analyzer import check

ROOT = Path(os.environ.get("SHARDLOG_LARGE", ""))
FOLDERS = sorted(p for p in ROOT.glob("llama*_tp*") if (p / "seq.onnx").is_file()) if ROOT.name else []
pytestmark = pytest.mark.skipif(not FOLDERS, reason="set SHARDLOG_LARGE to a folder of scripts/make_large.py outputs")


def _files(folder: Path):
    ranks = sorted(folder.glob("rank*.onnx"), key=lambda p: int(p.stem[4:]))
    return folder / "seq.onnx", ranks


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_large_graph(folder):
    seq, ranks = _files(folder)
    result = check(seq, ranks)
    bug = re.search(r"_bug(\d+)$", folder.name)
    if bug is None:
        assert result.verdict == "verified"
        assert "solved once" in result.derivation.memo
    else:
        layer = int(bug.group(1))
        assert result.verdict == "discrepancy"
        first = result.verdict_.discrepancies[0]
        assert first.scope == f"model.layers.{layer}"
        assert first.origin_scope == f"model.layers.{layer}.mlp.down_proj"
        assert "missing-allreduce" in first.hint_ids
