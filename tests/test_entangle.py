"""GraphGuard's published graphs (../shared/data/entangle): Megatron-LM GPT and vLLM Qwen2 at
tensor parallel 2 are verified from their torch.fx dumps; GraphGuard's "Bug 7" is flagged at
the missing all-reduce, with the Megatron-LM source line. Cases and specs: examples/entangle/."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer import check

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "entangle"
CASES = sorted(p.parent for p in (ROOT / "examples" / "entangle").glob("*/case.yaml"))

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} (GraphGuard's published graphs) is not here")


def _run(case: Path):
    spec = yaml.safe_load((case / "case.yaml").read_text())
    result = check(DATA / spec["seq"], [DATA / r for r in spec["ranks"]], relations=case / spec["spec"])
    return spec, result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_has_the_expected_verdict(case):
    spec, result = _run(case)
    assert result.verdict == spec["expected"], [d.message for d in result.verdict_.discrepancies][:3]


def test_bug7_is_pinned_to_the_lm_head_gradient_that_is_not_all_reduced():
    _, result = _run(ROOT / "examples" / "entangle" / "bug7_missing_allreduce")
    first = result.verdict_.discrepancies[0]
    assert "missing-allreduce" in first.hint_ids
    assert first.origin_source.split(":")[0].endswith("megatron/core/tensor_parallel/layers.py")
    assert "Megatron-LM/megatron/" in first.source
    # the loss itself and every correct gradient are still proved
    outputs = {o.name: o.relation for o in result.verdict_.outputs}
    assert outputs["div_2"] == "Replicate"
    assert outputs["getitem_1"] == "Shard(0)"
