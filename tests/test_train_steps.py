"""Whole training steps (forward, loss, backward, gradient all-reduce, optimizer update) of
Hugging Face Llama under data parallelism, produced by scripts/export_train_step.py: the
correct steps are verified (every updated parameter and optimizer state Replicate, as the
parameter was) and confirmed on numbers; each bug variant is flagged where it breaks, with a
hint naming the fix, and the numeric witness shows the error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer import check

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CORRECT = ["llama_dp2_sgd", "llama_dp2_adamw_clip"]
BUGS = {
    "llama_dp2_sgd_bug_missing_grad_allreduce": ("grad-not-reduced", "updated.model.layers.1.mlp.down_proj.weight"),
    "llama_dp2_sgd_bug_local_token_count": ("local-normalizer", "loss"),
    "llama_dp2_sgd_bug_double_scale": ("extra-scaling", "updated.model.embed_tokens.weight"),
    # AdamW's step is invariant to the gradients' scale: the wrong clipping shows in its state
    "llama_dp2_adamw_clip_bug_norm_counts_replicas": ("extra-allreduce", "updated.state.exp_avg.lm_head.weight"),
}


def _check(case: str):
    folder = EXAMPLES / case
    spec = yaml.safe_load((folder / "case.yaml").read_text())
    ranks = [folder / r for r in spec["files"]["ranks"]]
    return spec, check(folder / spec["files"]["seq"], ranks, numeric=True)


@pytest.mark.parametrize("case", CORRECT)
def test_correct_training_step_is_verified_on_rules_and_numbers(case):
    spec, result = _check(case)
    assert spec["expected"] == "verified"
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    updated = [o for o in result.verdict_.outputs if o.name.startswith("updated.")]
    assert updated and all(o.relation == "Replicate" for o in updated)
    # the witness divides the summed token losses by a random count, so the loss is large (around
    # 1e3): one float32 ulp there is 1.2e-4. Every updated parameter and state must match to 1e-4.
    assert result.numeric["loss"] < 1e-3
    assert max(v for k, v in result.numeric.items() if k.startswith("updated.")) < 1e-4


@pytest.mark.parametrize("case", sorted(BUGS))
def test_training_step_bug_is_flagged_with_its_fix(case):
    hint, broken_output = BUGS[case]
    spec, result = _check(case)
    assert spec["expected"] == "discrepancy"
    assert result.verdict == "discrepancy"
    assert any(hint in d.hint_ids for d in result.verdict_.discrepancies), [
        (d.node, d.hint_ids) for d in result.verdict_.discrepancies
    ]
    assert result.numeric[broken_output] > 1e-3
