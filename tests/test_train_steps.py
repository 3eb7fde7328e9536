"""Whole training steps (forward, loss, backward, gradient all-reduce, optimizer update) of
Hugging Face Llama under data parallelism and under tensor (+ sequence) parallelism with
PyTorch's parallelize_module, produced by scripts/export_train_step.py: the correct steps are
verified (every updated parameter and optimizer state in the layout its parameter has:
Replicate under data parallelism, the plan's Shard or Replicate under tensor parallelism) and
confirmed on numbers; each bug variant is flagged where it breaks, with a hint naming the fix,
and the numeric witness shows the error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import smoke_or_slow

from analyzer import check
from analyzer.layout import Layout
from analyzer.witness.check import confirm_relations
from analyzer.witness.simulate import run_ranks

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CORRECT = [
    "llama_dp2_sgd",
    "llama_dp2_adamw_clip",
    "llama_dp2_sgd_accum2",
    "llama_tp2_sgd",
    "llama_tp2_sp_sgd",
    "llama_tp2_adamw_clip",
    "mixtral_ep2_sgd",
    "mixtral_ep2_adamw",
    # resumed from a full optimizer checkpoint: the state Replicate, narrowed to the parameter's piece
    "llama_tp2_adamw_full_state",
    # the Hugging Face Trainer's form: count gathered, loss times N, DDP's average (grad / N, sum)
    "llama_dp2_trainer",
    "qwen2_dp2_trainer",
]
BUGS = {
    "llama_dp2_sgd_bug_missing_grad_allreduce": ("grad-not-reduced", "updated.model.layers.1.mlp.down_proj.weight"),
    "llama_dp2_sgd_bug_local_token_count": ("local-normalizer", "loss"),
    "llama_dp2_sgd_bug_double_scale": ("extra-scaling", "updated.model.embed_tokens.weight"),
    # gradient accumulation: each micro-batch its own token mean, the means averaged
    "llama_dp2_sgd_accum2_bug_mean_of_means": ("micro-batch-mean", "loss"),
    # sequence parallelism: the norm weights' gradients are Partial (each rank saw its tokens)
    "llama_tp2_sp_sgd_bug_local_update": ("grad-not-reduced", "updated.model.norm.weight"),
    # expert parallelism: the routing weights' gradient covers only each rank's own experts' routes
    "mixtral_ep2_sgd_bug_router_grad_not_reduced": (
        "expert-grad-not-reduced", "updated.model.layers.1.mlp.gate.weight"
    ),
    # the loss times N (the Hugging Face Trainer's compensation for DDP's average), gradients summed
    "llama_dp2_sgd_bug_missing_inv_world": ("missing-average", "updated.model.embed_tokens.weight"),
    # the Trainer's loss *= num_processes dropped, DDP still averages: every gradient 1/N
    "llama_dp2_trainer_bug_missing_loss_scale": ("missing-loss-scale", "updated.model.embed_tokens.weight"),
    # the Trainer's gather of the token count dropped: each rank divides by its own count
    "llama_dp2_trainer_bug_count_not_reduced": ("local-normalizer", "loss"),
    # the full optimizer state narrowed at offset 0 on every rank: rank 1 continues from rank 0's moments
    "llama_tp2_adamw_full_state_bug_state_offset": (
        "optimizer-state-layout", "updated.model.layers.0.self_attn.q_proj.weight"
    ),
}
# Tensor parallelism: the local squares are all-reduced, so the norm weights' gradients count
# twice. They are 320 of ~90k gradient elements, so the clipping scale moves little: the witness
# is compared with the float32 round-off of the same output in the correct step instead of 1e-3.
# Data parallelism: the squares of the already all-reduced gradients are all-reduced again, so the
# norm counts every replica and the clipping scale moves; AdamW's step is invariant to the
# gradients' scale, so the wrong clipping shows in its state only (about 1e-3 with the witness's
# labels drawn over the whole vocabulary).
SMALL_EFFECT_BUGS = {
    "llama_dp2_adamw_clip_bug_norm_counts_replicas": (
        "extra-allreduce", "updated.state.exp_avg.lm_head.weight", "llama_dp2_adamw_clip"
    ),
    "llama_tp2_adamw_clip_bug_norm_counts_replicas": (
        "bias-before-reduce", "updated.state.exp_avg.lm_head.weight", "llama_tp2_adamw_clip"
    ),
}


def _parameter_of(output: str) -> str:
    """updated.<param> and updated.state.<kind>.<param> -> <param>."""
    name = output.removeprefix("updated.")
    return name.split(".", 2)[2] if name.startswith("state.") else name


def _check(case: str):
    folder = EXAMPLES / case
    spec = yaml.safe_load((folder / "case.yaml").read_text())
    ranks = [folder / r for r in spec["files"]["ranks"]]
    return spec, check(folder / spec["files"]["seq"], ranks, numeric=True)


@pytest.mark.parametrize("case", smoke_or_slow(CORRECT))
def test_correct_training_step_is_verified_on_rules_and_numbers(case):
    spec, result = _check(case)
    assert spec["expected"] == "verified"
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    updated = [o for o in result.verdict_.outputs if o.name.startswith("updated.")]
    # each updated parameter (and its optimizer state) in its parameter's layout
    given = {r.seq_value: str(r.layout) for r in result.inputs.relations}
    param = {o.name: _parameter_of(o.name) for o in updated}
    assert updated and all(o.relation == given[param[o.name]] for o in updated), [
        (o.name, o.relation, given.get(param[o.name])) for o in updated if o.relation != given.get(param[o.name])
    ]
    if spec["training_step"]["parallel"] == "data":
        assert all(o.relation == "Replicate" for o in updated)
    elif spec["training_step"]["parallel"] == "expert":  # stacked expert weights Shard(0), the rest Replicate
        assert {o.relation for o in updated} == {"Shard(0)", "Replicate"}
        assert all((o.relation == "Shard(0)") == (".experts." in o.name) for o in updated)
    else:  # tensor parallel: the plan shards the linears and keeps the norms replicated
        assert {o.relation for o in updated} >= {"Shard(0)", "Shard(1)", "Replicate"}
    # the witness divides the summed token losses by a random count, so the loss is large (around
    # 1e3): one float32 ulp there is 1.2e-4. Every updated parameter and state must match to 1e-4.
    assert result.numeric["loss"] < 1e-3
    assert max(v for k, v in result.numeric.items() if k.startswith("updated.")) < 1e-4


@pytest.mark.parametrize("case", smoke_or_slow(sorted(BUGS)))
def test_training_step_bug_is_flagged_with_its_fix(case):
    hint, broken_output = BUGS[case]
    spec, result = _check(case)
    assert spec["expected"] == "discrepancy"
    assert result.verdict == "discrepancy"
    assert any(hint in d.hint_ids for d in result.verdict_.discrepancies), [
        (d.node, d.hint_ids) for d in result.verdict_.discrepancies
    ]
    assert result.numeric[broken_output] > 1e-3


@pytest.mark.parametrize("case", smoke_or_slow(sorted(SMALL_EFFECT_BUGS)))
def test_small_effect_training_step_bug_is_flagged_and_above_round_off(case):
    hint, broken_output, correct_case = SMALL_EFFECT_BUGS[case]
    spec, result = _check(case)
    assert spec["expected"] == result.verdict == "discrepancy"
    assert any(hint in d.hint_ids for d in result.verdict_.discrepancies), [
        (d.node, d.hint_ids) for d in result.verdict_.discrepancies
    ]
    _, correct = _check(correct_case)
    assert correct.verdict == "verified"
    assert result.numeric[broken_output] > 20 * max(correct.numeric[broken_output], 1e-7)


@pytest.mark.slow
def test_missing_average_is_flagged_at_the_gradients_seed():
    """The loss times N changes the backward's seed (d loss / d token-loss sum: N / count on the
    ranks, 1 / count in the sequential step): the first gradient value is the frontier, and each
    gradient N times too large is no relation (the witness shows every updated parameter off)."""
    _, result = _check("llama_dp2_sgd_bug_missing_inv_world")
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Div" and "missing-average" in first.hint_ids, (first.node, first.hint_ids)
    assert "num_items_in_batch" in [i.name for i in first.inputs]
    updated = [o for o in result.verdict_.outputs if o.name.startswith("updated.")]
    assert all(o.relation is None and result.numeric[o.name] > 1e-2 for o in updated)
    assert result.numeric["loss"] < 1e-3  # the logged loss is not scaled


@pytest.mark.slow
def test_state_offset_is_flagged_at_the_state_of_every_sharded_parameter():
    """Every optimizer state of a sharded parameter is narrowed to rank 0's chunk on rank 1: the
    frontier is each such state's first use, with the hint; replicated parameters (the norms) keep
    the full state and stay verified."""
    _, result = _check("llama_tp2_adamw_full_state_bug_state_offset")
    given = {r.seq_value: r.layout.kind for r in result.inputs.relations}
    sharded = {p for p, kind in given.items() if kind == "Shard"}  # the states enter in full (Replicate)
    assert len(sharded) == 16, sorted(sharded)
    flagged = {
        i.name
        for d in result.verdict_.discrepancies
        if "optimizer-state-layout" in d.hint_ids
        for i in d.inputs
        if i.name.startswith("state.")
    }
    assert flagged == {f"state.{kind}.{p}" for kind in ("exp_avg", "exp_avg_sq") for p in sharded}
    outputs = {o.name: o for o in result.verdict_.outputs}
    for p in sharded:
        assert outputs[f"updated.{p}"].relation is None and result.numeric[f"updated.{p}"] > 1e-3
    for p in {p for p, kind in given.items() if kind == "Replicate" and p.endswith("norm.weight")}:
        assert outputs[f"updated.{p}"].relation == "Replicate" and result.numeric[f"updated.{p}"] < 1e-4


@pytest.mark.slow
def test_accumulated_step_relations_hold_on_numbers():
    """Gradient accumulation (2 micro-batches per rank): the rank's slices are micro-batch shards
    of the batch, each micro-batch's weight gradients are its terms of the sum, the accumulated
    gradients are Partial(sum) before the all-reduce, and every derived relation (micro-batch
    Partials checked together, analyzer/witness/check.py) holds on numbers."""
    spec, result = _check("llama_dp2_sgd_accum2")
    assert spec["training_step"]["micro_batches"] == 2
    derived, decls = result.derivation.derived, result.derivation.decls
    cols = list(decls["Piece"].column_names)
    layouts = {}
    for row in derived["Piece"]:
        p = dict(zip(cols, row))
        layouts.setdefault(p["s"], set()).add((p["r"], str(Layout.from_row(p["kind"], p["axis"], p["param"]))))
    for r in range(2):
        assert {(r, "Shard(0, micro=0/2)"), (r, "Shard(0, micro=1/2)")} <= layouts["input_ids"]
    # some weight gradient: micro-batch terms, their sum, the all-reduced sum
    grads = [s for s, ls in layouts.items() if {(0, "Partial(sum, micro=0/2)"), (0, "Partial(sum, micro=1/2)"),
                                                 (0, "Partial(sum)"), (0, "Replicate")} <= ls]
    assert grads
    # the random count (about -0.16) makes the backward's values reach about 1e3, where a float32
    # ulp is 6e-5: the default tolerance 1e-4 is 2 ulps, summation order alone moves a few
    checked, refuted = confirm_relations(result.inputs, derived, decls, tol=1e-3)
    assert checked > 1000, checked
    assert refuted == [], refuted[:5]


@pytest.mark.slow
def test_expert_parallel_step_relations_hold_on_numbers():
    """Expert parallelism (HF AllReduceEP): every derived relation of the step holds on numbers,
    and every RoutedZero(s, r, d, xs, e) row does: rank r's d equals seq s on the rows of the
    pairs routed to rank r's experts and is exactly 0 on the others (the gradients that come
    back through each rank's own experts, rules/parallel/expert_backward.dl)."""
    spec, result = _check("mixtral_ep2_sgd")
    assert spec["training_step"]["parallel"] == "expert"
    derived, decls = result.derivation.derived, result.derivation.decls
    checked, refuted = confirm_relations(result.inputs, derived, decls)
    assert checked > 500, checked
    assert refuted == [], refuted[:5]
    cols = list(decls["RoutedZero"].column_names)
    rows = [dict(zip(cols, row)) for row in derived["RoutedZero"]]
    assert len({row["s"] for row in rows}) >= 2 * 15  # both layers: expert, routing-weight and input gradients
    inp = result.inputs
    sim = run_ranks(inp.canonical_seq or inp.seq, inp.canonical_ranks or inp.ranks, {}, keep_intermediates=True)
    n = inp.world_size
    kept = dropped = 0
    for row in rows:
        ids = np.asarray(sim.seq[row["xs"]]).reshape(-1)
        block = row["e"] // n
        mine = (ids >= row["r"] * block) & (ids < (row["r"] + 1) * block)
        s, d = np.asarray(sim.seq[row["s"]]), np.asarray(sim.ranks[row["r"]][row["d"]])
        assert s.shape == d.shape and s.shape[0] == ids.size, row
        assert np.max(np.abs(s[mine] - d[mine]), initial=0.0) < 1e-4, row
        assert np.all(d[~mine] == 0.0), row
        kept, dropped = kept + int(mine.sum()), dropped + int((~mine).sum())
    assert kept > 0 and dropped > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", ["mixtral_ep2_adamw", "mixtral_ep2_sgd_bug_router_grad_not_reduced"])
def test_expert_parallel_step_derivations_hold_on_numbers(case):
    """What the rules derive for the AdamW step and for the buggy step (the router's Partial
    gradient included) holds on numbers too."""
    _, result = _check(case)
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert checked > 300, checked  # the buggy step: nothing upstream of layer 1's router is related
    assert refuted == [], refuted[:5]


@pytest.mark.slow
def test_trainer_form_verifies_through_its_factor_cancelled():
    """The Trainer's step multiplies the loss by N (the backward's seed is N on the ranks, 1 in the
    sequential step) and DDP divides every gradient by N before the all-reduce: the rewrite
    (analyzer/rewrite/scale.py) cancels the factor on the seed's edge of each rank, and nowhere
    else (the logged loss, N times the rank's share, is gathered and averaged: rules). Without a
    matching division (the bug variants, the gradients summed) nothing is rewritten."""
    import onnx

    from analyzer.rewrite.scale import cancel_divided_factors

    def rewrites(case, f):
        return cancel_divided_factors(onnx.load(EXAMPLES / case / f))

    assert [rewrites("llama_dp2_trainer", f) for f in ("seq.onnx", "rank0.onnx", "rank1.onnx")] == [0, 1, 1]
    for case in ("llama_dp2_trainer_bug_missing_loss_scale", "llama_dp2_sgd_bug_missing_inv_world"):
        assert rewrites(case, "rank0.onnx") == 0, case
    _, result = _check("llama_dp2_trainer")
    given = {r.seq_value: (str(r.layout), r.established) for r in result.inputs.relations}
    assert "num_items_in_batch" not in given  # no count input: the step counts and gathers
    assert given["input_ids"] == given["labels"] == ("Shard(0)", "shapes")


@pytest.mark.slow
def test_missing_loss_scale_is_flagged_at_every_gradient_update():
    """Without the factor N, DDP's average leaves each gradient a half: every parameter's update
    reads a partial sum that the ranks average instead of sum, each with the hint; the logged
    loss, the ranks' shares averaged, is half the loss."""
    _, result = _check("llama_dp2_trainer_bug_missing_loss_scale")
    flagged = [d for d in result.verdict_.discrepancies if "missing-loss-scale" in d.hint_ids]
    updated = [o for o in result.verdict_.outputs if o.name.startswith("updated.")]
    assert len(flagged) == len(updated) == 21
    assert all(o.relation is None and result.numeric[o.name] > 1e-4 for o in updated)
    # the logged loss (each rank's share gathered and averaged) is halved too: it has no relation
    outputs = {o.name: o.relation for o in result.verdict_.outputs}
    assert outputs["loss"] is None and result.numeric["loss"] > 1e-2
