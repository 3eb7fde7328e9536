"""The DeepSpeed-MoE producer (scripts/export_deepspeed_moe.py) reproduces the committed case:
same graphs' node counts, collectives and verdict. Skipped when DeepSpeed is not importable
(it is not a dependency of shardlog; the corpus tests read the committed graphs)."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest
from conftest import EXAMPLES

from analyzer import check

pytest.importorskip("deepspeed", reason="DeepSpeed is not installed (scripts/export_deepspeed_moe.py needs it)")

REPO = EXAMPLES.parent


def test_producer_reproduces_the_committed_case(tmp_path):
    env = {**os.environ, "DS_ACCELERATOR": "cpu", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, str(REPO / "scripts/export_deepspeed_moe.py"), "--case", "deepspeed_moe_ep2",
                    "--out", str(tmp_path)], check=True, env=env, capture_output=True, timeout=600)
    for name in ("seq.onnx", "rank0.onnx", "rank1.onnx"):
        new, old = onnx.load(tmp_path / name), onnx.load(EXAMPLES / "deepspeed_moe_ep2" / name)
        assert [n.op_type for n in new.graph.node] == [n.op_type for n in old.graph.node], name
    assert check(tmp_path / "seq.onnx", [tmp_path / "rank0.onnx", tmp_path / "rank1.onnx"]).verdict == "verified"
