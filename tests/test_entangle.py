"""GraphGuard's published graphs (../shared/data/entangle, and the ones bundled in
examples/entangle/published): Megatron-LM GPT at tensor parallel 2, 4, 6 and 8 and with 1, 2
and 4 layers, and vLLM Qwen2 at tensor parallel 2 and 4, are verified from their torch.fx dumps;
GraphGuard's bug cases are flagged at the missing all-reduce, with the Megatron-LM source
line. Cases and specs: examples/entangle/."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import ENTANGLE_SHARED, entangle_dumps_root

from analyzer import check

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted(p.parent for p in (ROOT / "examples" / "entangle").glob("*/case.yaml"))
needs_shared_data = pytest.mark.skipif(
    not ENTANGLE_SHARED.is_dir(), reason=f"{ENTANGLE_SHARED} (GraphGuard's published graphs) is not here"
)


def _run(case: Path):
    spec = yaml.safe_load((case / "case.yaml").read_text())
    root = entangle_dumps_root(spec)
    if not root.is_dir():
        pytest.skip(f"{root} (GraphGuard's published graphs) is not here")
    result = check(root / spec["seq"], [root / r for r in spec["ranks"]], relations=case / spec["spec"])
    return spec, result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_has_the_expected_verdict(case):
    spec, result = _run(case)
    assert result.verdict == spec["expected"], [d.message for d in result.verdict_.discrepancies][:3]


@needs_shared_data
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
