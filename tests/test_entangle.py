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


# Megatron-LM's finalize_model_grads all-reduces, over the tensor-parallel group, the gradients of
# the parameters it marks sequence_parallel: the layer norms' weights and biases and the
# row-parallel linears' biases. GraphGuard's dump drops that all-reduce.
LAYERNORM_GRADS = {"add_13", "add_14", "add_17", "add_18", "add_19", "add_20", "add_24", "add_25"}
ROW_PARALLEL_BIAS_GRADS = {"add_8", "add_15"}


def test_missing_layernorm_allreduce_is_flagged_at_every_sequence_parallel_gradient():
    _, result = _run(ROOT / "examples" / "entangle" / "bug_missing_layernorm_allreduce")
    v = result.verdict_
    # every discrepancy is one of those gradients, with the hint naming the missing all-reduce
    assert {d.node: d.hint_ids for d in v.discrepancies} == {
        n: ["grad-not-reduced"] for n in LAYERNORM_GRADS | ROW_PARALLEL_BIAS_GRADS
    }
    assert "grad-not-reduced" in v.discrepancies[0].hint_ids
    # the pre-MLP layer norm's weight gradient (GraphGuard's expected output getitem_58): the
    # apex backward kernel's weight-grad output, a partial sum over each rank's tokens, is
    # accumulated into the gradient buffer without the all-reduce
    ln = next(d for d in v.discrepancies if d.node == "add_13")
    assert [(i.name, i.relations) for i in ln.inputs] == [
        ("tangents_13", ["Replicate"]),
        ("getitem_58", ["Partial(sum)"]),
    ]
    assert ln.inputs[1].producer_op == "apex::fused_layer_norm_affine_bwd"
    # the row-parallel bias gradients carry Megatron's source line
    bias = next(d for d in v.discrepancies if d.node == "add_8")
    assert bias.source.split(":")[0].endswith("megatron/core/fusions/fused_bias_dropout.py")
    # the rest of the backward is proved: the gradients of the column- and row-parallel weights
    # and of the vocab-parallel word embedding in their parameters' layouts, the replicated
    # position embedding's gradient, the loss
    outputs = {o.name: o.relation for o in v.outputs}
    assert {
        k: outputs[k] for k in ("add_9", "add_10", "add_11", "add_16", "add_21", "add_22", "add_26", "add_27", "div_2")
    } == {
        "add_9": "Shard(1)",
        "add_10": "Shard(0)",
        "add_11": "Shard(0)",
        "add_16": "Shard(1)",
        "add_21": "Shard(0)",
        "add_22": "Shard(0)",
        "add_26": "Replicate",
        "add_27": "Shard(0)",
        "div_2": "Replicate",
    }


def test_gradient_accumulation_bug_is_flagged_at_the_per_micro_batch_mean():
    """GraphGuard's Bug 6: each micro-batch a graph input of its own (spec micro_batches), the
    2-step loss a mean per micro-batch (/ 4) where the 1-step loss divides by the batch's 8."""
    spec, _ = _run(ROOT / "examples" / "entangle" / "bug_grad_accumulation")
    root = entangle_dumps_root(spec)
    case = ROOT / "examples" / "entangle" / "bug_grad_accumulation"
    # a graph of 20 nodes: the numeric witness runs (the larger dumps have none)
    result = check(root / spec["seq"], [root / r for r in spec["ranks"]], relations=case / "spec.yaml", numeric=True)
    assert max(result.numeric.values()) > 1e-2, result.numeric
    first = result.verdict_.discrepancies[0]
    assert (first.node, first.op_type) == ("div", "Div")
    assert first.hint_ids == ["micro-batch-mean"]
    assert first.rank_nodes == {0: ["mean", "mean_1"]}
    # the per-micro-batch sums are the micro-batch terms of the one-step sum
    assert [(i.name, i.relations) for i in first.inputs][0] == (
        "sum_1",
        ["Partial(sum, micro=0/2)", "Partial(sum, micro=1/2)"],
    )


def test_switchmlp_bug_is_flagged_at_the_router_gradient_and_the_lost_expert_gradient():
    """GraphGuard's Bug 8: the routing (aten.nonzero, a data-dependent size u0) and the whole
    forward are proved; the backward breaks where the ranks' expert gradient is lost, and the
    router's weight gradient (GraphGuard's expected output t_20) is a partial sum over each
    rank's tokens accumulated without the all-reduce, at Megatron-LM's router line."""
    _, result = _run(ROOT / "examples" / "entangle" / "bug_missing_switchmlp_allreduce")
    v = result.verdict_
    assert [d.node for d in v.discrepancies] == ["mul_49", "add_53"]
    lost, router = v.discrepancies
    # the seq multiplies the output gradient by max_prob for the experts; the ranks never do
    assert lost.source.endswith("megatron/legacy/model/transformer.py:318")
    assert router.hint_ids == ["grad-not-reduced"]
    assert [(i.name, i.relations) for i in router.inputs] == [
        ("tangents_13", ["Replicate"]),
        ("t_20", ["Partial(sum)"]),
    ]
    assert router.origin_source.endswith("megatron/legacy/model/transformer.py:262")
    outputs = {o.name: o.relation for o in v.outputs}
    assert outputs["div_2"] == "Replicate"  # the loss, through the routing and the experts


ENGINE_CASES = ["qwen2_tp2_layer1", "gpt_tp2_layer1", "bug7_missing_allreduce", "bug_missing_switchmlp_allreduce"]


@pytest.mark.parametrize("name", ENGINE_CASES)
@pytest.mark.slow
def test_the_default_engine_derives_what_clingo_derives(name):
    """The compiled-Python engine (the default) against clingo on the same facts: every derived
    relation, row for row, and the same report."""
    case = ROOT / "examples" / "entangle" / name
    spec, result = _run(case)
    root = entangle_dumps_root(spec)
    other = check(root / spec["seq"], [root / r for r in spec["ranks"]], relations=case / spec["spec"], engine="clingo")
    assert result.engine == "seminaive" and other.engine == "clingo"
    assert result.derivation.derived == other.derivation.derived
    assert result.derivation.derived["Piece"]  # not two empty answers
    assert [d.message for d in result.verdict_.discrepancies] == [d.message for d in other.verdict_.discrepancies]
