"""Layer memoization: same verdicts and reports with it on and off; a bug in a middle layer
is reported in that layer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, ROOT

from analyzer import check

DEEP = ROOT / "tests" / "data"
CASES = sorted(
    p
    for p in [*EXAMPLES.glob("*"), *DEEP.glob("llama6_*")]
    if (p / "case.yaml").is_file() and not (p / "stage0.onnx").is_file()  # pipeline cases: test_pipeline.py
)


def _files(case: Path):
    n = yaml.safe_load((case / "case.yaml").read_text())["world_size"]
    return case / "seq.onnx", [case / f"rank{r}.onnx" for r in range(n)]


def _spec(case: Path) -> dict:
    """``relations=`` for a case checked with a spec (a mesh case: files.spec, docs/mesh.md)."""
    spec = yaml.safe_load((case / "case.yaml").read_text()).get("files", {}).get("spec")
    return {"relations": case / spec} if spec else {}


def _summary(result):
    v = result.verdict_
    return (
        v.verdict,
        [(o.name, o.relation, o.rank_values) for o in v.outputs],
        [(d.kind, d.node, d.scope, d.source, d.hint_ids, d.origin_scope) for d in v.discrepancies[:1]],
    )


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_memoization_does_not_change_the_result(case):
    seq, ranks = _files(case)
    on = check(seq, ranks, memoize=True, **_spec(case))
    off = check(seq, ranks, memoize=False, **_spec(case))
    assert _summary(on) == _summary(off)


def test_identical_layers_are_solved_once():
    seq, ranks = _files(DEEP / "llama6_tp2")
    result = check(seq, ranks)
    assert result.verdict == "verified"
    assert result.derivation.memo.startswith("layers 1..5 solved once")


def test_bug_in_a_middle_layer_is_reported_in_that_layer():
    seq, ranks = _files(DEEP / "llama6_tp2_bug_layer3")
    result = check(seq, ranks)
    assert "1..2" in result.derivation.memo and "4..5" in result.derivation.memo
    first = result.verdict_.discrepancies[0]
    assert first.scope == "model.layers.3"
    assert first.origin_scope == "model.layers.3.mlp.down_proj"
