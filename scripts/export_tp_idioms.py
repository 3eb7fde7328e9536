#!/usr/bin/env python
"""Export tensor-parallel programs written by hand the way Megatron-LM and vLLM write them:
the distributed code computes a sequential value by another route than op for op.

The models are UNMODIFIED Hugging Face ``transformers`` code, parallelized with PyTorch's
``parallelize_module`` (``export_hf_tp.py``'s pipeline: ``make_fx``, ``torch.onnx.export`` with
collectives as ``com.microsoft`` ops, weights renamed to their module paths, its simulator);
what each idiom adds is written with ``torch.distributed._functional_collectives`` on the
rank's local tensors:

* ``vocab_softmax`` (Qwen3): the model's output is the next-token distribution
  ``softmax(logits, -1)`` (a module ``probs`` this script adds after ``lm_head``). The ranks
  keep ``lm_head``'s logits sharded on the vocab (``ColwiseParallel(use_local_output=True)``)
  and normalize them as Megatron-LM's
  ``vocab_parallel_cross_entropy`` does: the row max all-reduced with ``MAX``, exponentials of
  the shifted logits, their row sums all-reduced, a division; each rank returns its vocab
  chunk of the probabilities. Bug ``local_max``: the row max is not all-reduced (one line), so
  each rank shifts by its own max and the chunks are normalized inconsistently.
* ``vocab_ce`` (Qwen3): the model's output is the per-token loss
  ``torch.nn.functional.cross_entropy(logits, labels, reduction="none")`` (a module ``loss``
  this script adds after ``lm_head``; ``labels`` is a graph input). The ranks keep the logits
  vocab-sharded and compute the loss as Megatron-LM's ``vocab_parallel_cross_entropy``
  (megatron/core/tensor_parallel/cross_entropy.py): the row max all-reduced with ``MAX`` and
  subtracted, the targets masked to the rank's range ``[r*V/N, (r+1)*V/N)`` (ids outside -> 0
  and their predicted logit zeroed), the predicted logit all-reduced, the row sums of the
  exponentials all-reduced, ``loss = log(sum_exp) - predicted``, then zeroed where the label
  is ``-100`` (the caller's loss mask: cross_entropy's ``ignore_index``). The predicted logit is picked
  with ``gather`` on the 2-D view (Megatron indexes ``logits_2d[arange, masked_target]``; the
  value is the same). Bugs (one line each): ``mask_end`` — the range end taken inclusive
  (``vocab_end = start + V/N - 1`` with the ``>=`` test kept), so each range's last id is
  masked on every rank; ``predicted_not_reduced`` — the all-reduce of the predicted logit
  dropped.
* ``vocab_argmax`` (Qwen3): the model's output is the greedy next token at every position,
  ``logits.argmax(-1)`` (a module ``next_tokens`` after ``lm_head``). The ranks keep the logits
  vocab-sharded and decode as a vocab-parallel sampler does (Megatron-LM's and vLLM's greedy
  decoding without gathering the logits): each rank's row max and its argmax, the index offset
  by the rank's vocab start ``r*V/N``, both all-gathered, the winner the rank with the largest
  max (the first one on a tie, as ``argmax`` picks the first index). Bug ``rank_offset``: the
  offset by the rank's vocab start missing (one line).
* ``vocab_topk`` (Qwen3): the model's output is the ids of the ``k = 4`` most likely next tokens
  at every position, ``logits.topk(4, -1).indices`` (a module ``topk_ids``). Each rank's top k
  and their ids offset by the rank's vocab start, both all-gathered, laid out rank-major along
  the last axis (``permute`` + ``reshape``), the top k of those and their ids. Bug
  ``rank_offset``: the offset missing.
* ``qknorm_allreduce`` (OLMo2): OLMo2 normalizes the whole query and key projections
  (``q_norm``/``k_norm`` over all heads). HF's plan gathers q and k before the norm; here the
  projections stay column-parallel and the norm is tensor-parallel, as vLLM's
  ``MiniMaxText01RMSNormTP`` computes it: the local mean of squares all-reduced and divided by
  the world size, the rank's chunk of the norm weight. Bug ``norm_not_averaged``: the all-reduced
  mean of squares is not divided by the world size (one line).
* ``qknorm_prescaled`` (OLMo2): the same norm with the scale before the reduction: each rank's
  local mean of squares divided by the world size, then all-reduced (a mean over a sharded axis
  as local mean * 1/N on every rank, then sum; Megatron DDP's ``gradient_scaling_factor = 1/dp``
  before its all-reduce is the same form). Bug ``prescale_dropped``: the division dropped (one
  line; the program is then ``qknorm_allreduce``'s bug). Bug ``divided_twice``: the all-reduced
  mean divided by the world size again (one line), as vLLM's divide-after form on top of this one.
* ``qknorm_avg`` (OLMo2): the same norm in DTensor's spelling: the local mean of squares
  declared ``Partial("avg")`` (``DTensor.from_local``) and redistributed to ``Replicate()``,
  which emits ``all_reduce(x, "avg", group)``, exported as
  ``com.microsoft::AllReduce(reduction="avg")``. Bug ``avg_as_sum``: ``Partial("sum")``
  instead of ``Partial("avg")`` (one line): the local means are summed.
* ``rank0_residual`` (Llama): the decoder layer's MLP ends in a hand-written row-parallel
  ``down_proj`` without its all-reduce (vLLM's ``RowParallelLinear(reduce_results=False)``);
  the replicated residual is added to the partial sum on rank 0 only, then all-reduced (as
  vLLM's ``RowParallelLinear`` adds its bias: ``bias_ = None if self.tp_rank > 0 else
  self.bias``). Bug ``residual_every_rank``: the ``rank == 0`` guard dropped (one line).
* ``rank0_bias`` (Llama with ``mlp_bias=True``): every layer's ``mlp.down_proj`` is vLLM's
  ``RowParallelLinear`` with its bias (vllm/model_executor/layers/linear.py): the rank's chunk
  of the weight along the input axis, ``F.linear(x, W_r, bias_)`` with ``bias_ = None if
  tp_rank > 0 else bias``, then the all-reduce: the bias counted once in the sum. Rank 1's file
  does not hold the bias at all (it never uses it; the checker relates it as ``Replicate`` on
  rank 0 only, from its values) and computes a bias-free ``MatMul`` where rank 0 and the
  sequential model compute ``Gemm(x, W^T, b)`` (``aten.addmm``; expanded to ``MatMul + Add``
  through ``rules/functions/Gemm.onnxtxt``). Bug ``bias_every_rank``: the ``tp_rank > 0`` test
  dropped (``bias_ = self.bias``, one line): the bias is summed N times.
* ``scaled_residual`` (Llama): the same, with ``residual / N`` added on every rank before the
  all-reduce. Bug ``scale_dropped``: the division dropped (one line).
* ``hand_reduce_scatter`` (Llama): the same MLP, its partial sum all-reduced and narrowed to the
  rank's chunk of the sequence (``narrow(1, rank * S/N, S/N)``: a reduce-scatter written by
  hand, sequence-parallel code that does not call ``reduce_scatter_tensor``), the rank's chunk
  of the residual added, the chunks all-gathered on the sequence axis. Bug ``scatter_offset``:
  the slice starts at ``rank`` instead of ``rank * S/N`` (one line).

* ``linear_from_conv1d`` (GPT-2, ``GPT2LMHeadModel`` with ``n_inner`` 2x ``n_embd``): GPT-2's
  ``Conv1D`` layers (transformers/pytorch_utils.py) store their weights ``[in, out]`` and compute
  ``addmm(b, x, W)``. The ranks convert every ``Conv1D`` of every block (``attn.c_attn``,
  ``attn.c_proj``, ``mlp.c_fc``, ``mlp.c_proj``) to an ``nn.Linear`` holding ``W.T`` ``[out, in]``
  and the same bias, as checkpoint converters to Megatron-LM and vLLM do, then
  ``parallelize_module`` shards the MLP only (``mlp.c_fc`` ``ColwiseParallel()``, ``mlp.c_proj``
  ``RowwiseParallel()``); attention (the fused q|k|v of ``c_attn`` that GPT-2 splits by
  ``split_size``) and the embeddings stay replicated; ``lm_head`` (an ``nn.Linear`` in GPT-2
  too) is column-parallel with its logits gathered. So each rank stores the
  transpose of its piece of the sequential weight (``[out/N, in]`` against ``[in, out]``) and
  reads it through ``F.linear``'s ``Transpose``; no spec. Bug ``transpose_dropped``: layer 0's
  ``attn.c_proj`` (square, so the shapes fit) copied without the ``.T`` (one line).

The bugs of the three decoder-layer idioms are in layer 0 (``model.layers.0``); the other
layers are correct.

Usage::

    python scripts/export_tp_idioms.py --case qwen3_tp2_vocab_softmax
    python scripts/export_tp_idioms.py --case gpt2_tp2_linear_from_conv1d
    python scripts/export_tp_idioms.py --all
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_families  # noqa: E402
import export_hf_tp as hf  # noqa: E402

BUGS = {
    "local_max": "the vocab-parallel softmax shifts each rank's logits by its own row max: "
    "m = logits.max(-1) is not all-reduced with MAX (all_reduce(m, 'max', group) dropped), so the "
    "ranks' exponentials are scaled differently and their all-reduced row sums mix them",
    "mask_end": "the vocab-parallel cross-entropy takes the rank's vocab range end as inclusive "
    "(vocab_end = vocab_start + V/N - 1, the mask test target >= vocab_end kept): the last id of each "
    "rank's range is masked on every rank, so its predicted logit is 0 and its loss wrong",
    "predicted_not_reduced": "the vocab-parallel cross-entropy does not all-reduce the predicted logit "
    "(all_reduce(predicted_logits, SUM) dropped): a rank whose range does not hold the target "
    "subtracts 0 instead of the target's logit",
    "rank_offset": "the vocab-parallel greedy decoding does not offset a rank's local argmax by the "
    "rank's vocab start (local_idx + rank * V/N dropped): a token won on rank r > 0 is returned as "
    "its index within the rank's chunk",
    "norm_not_averaged": "the tensor-parallel q/k RMSNorm all-reduces the local mean of squares but does "
    "not divide it by the world size (variance = all_reduce(variance) instead of all_reduce(variance) / N): "
    "the variance is N times too large",
    "residual_every_rank": "the row-parallel MLP adds the replicated residual to its partial sum on every rank "
    "before the all-reduce (the `if rank == 0` guard dropped): the residual is summed world_size times",
    "scale_dropped": "the row-parallel MLP adds the replicated residual to its partial sum on every rank without "
    "scaling it by 1/N first (residual / world_size -> residual): the all-reduce sums it world_size times",
    "divided_twice": "the tensor-parallel q/k RMSNorm divides the local mean of squares by the world size before "
    "the all-reduce and the all-reduced mean again after it (all_reduce(variance / N) / N): the variance is N times "
    "too small",
    "prescale_dropped": "the tensor-parallel q/k RMSNorm all-reduces the local mean of squares without dividing "
    "it by the world size first (all_reduce(variance / N) -> all_reduce(variance)): the variance is N times too large",
    "avg_as_sum": "the tensor-parallel q/k RMSNorm declares the local mean of squares Partial('sum') instead of "
    "Partial('avg') before redistributing it to Replicate: the all-reduce sums the N local means (N times the mean)",
    "bias_every_rank": "vLLM's RowParallelLinear (mlp.down_proj, mlp_bias=True) adds its full bias on every rank "
    "before the all-reduce (bias_ = None if tp_rank > 0 else bias -> bias_ = bias): the bias is summed "
    "world_size times",
    "transpose_dropped": "the checkpoint converter copies GPT-2's Conv1D weight [in, out] into the nn.Linear of "
    "layer 0's attn.c_proj without transposing it (linear.weight = conv.weight instead of conv.weight.T; the "
    "projection is square, so the shapes fit): the Linear computes x @ W.T where GPT-2 computes x @ W",
    "scatter_offset": "the hand-written reduce-scatter keeps the slice at offset `rank` instead of `rank * S/N` "
    "(x.narrow(1, rank, S/N) after the all-reduce): rank r > 0 keeps rows that overlap another rank's chunk",
}
_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2, layers=2)
# probabilities are at most 1: the softmax cases compare them with a tolerance ten times finer
# (a correct case within 1e-5, a bug above 1e-2), on weights twice as large as the others' so
# the logits spread over a few units and a wrong shift shows
_SOFTMAX = dict(model="qwen3", idiom="vocab_softmax", init_range=0.2, tol=1e-5, **_SMALL)
# the loss: weights twice as large too, so that a target logit that is dropped shows
_CE = dict(model="qwen3", idiom="vocab_ce", init_range=0.2, **_SMALL)
# the hand-written decoder-layer tails (llama): q/k/v/gate/up colwise, o_proj rowwise, down_proj
# a hand-written row-parallel linear without its all-reduce (vLLM's reduce_results=False)
_TAIL = dict(model="llama", **_SMALL)
_QK = dict(model="olmo2", **{**_SMALL, "kv_heads": 4})
_QK_BUG = "model.layers.0.self_attn.q_norm"
# GPT-2 (Conv1D weights [in, out]) converted to nn.Linear ([out, in]) on the ranks; MLP 2x wide
_GPT2 = dict(model="gpt2", idiom="linear_from_conv1d", hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=4,
             layers=2)
PRESETS = {
    "gpt2_tp2_linear_from_conv1d": dict(_GPT2),
    "gpt2_tp2_linear_from_conv1d_bug_transpose_dropped": dict(
        _GPT2, bug="transpose_dropped", bug_module="transformer.h.0.attn.c_proj"),
    "llama_tp2_rank0_residual": dict(_TAIL, idiom="rank0_residual"),
    "llama_tp2_rank0_residual_bug_residual_every_rank": dict(
        _TAIL, idiom="rank0_residual", bug="residual_every_rank", bug_module="model.layers.0"),
    "llama_tp2_rank0_bias": dict(_TAIL, idiom="rank0_bias", mlp_bias=True),
    "llama_tp2_rank0_bias_bug_bias_every_rank": dict(
        _TAIL, idiom="rank0_bias", mlp_bias=True, bug="bias_every_rank", bug_module="model.layers.0.mlp.down_proj"),
    "llama_tp2_scaled_residual": dict(_TAIL, idiom="scaled_residual"),
    "llama_tp2_scaled_residual_bug_scale_dropped": dict(
        _TAIL, idiom="scaled_residual", bug="scale_dropped", bug_module="model.layers.0"),
    "llama_tp2_hand_reduce_scatter": dict(_TAIL, idiom="hand_reduce_scatter"),
    "llama_tp2_hand_reduce_scatter_bug_scatter_offset": dict(
        _TAIL, idiom="hand_reduce_scatter", bug="scatter_offset", bug_module="model.layers.0"),
    "olmo2_tp2_qknorm_prescaled": dict(_QK, idiom="qknorm_prescaled"),
    "olmo2_tp2_qknorm_prescaled_bug_prescale_dropped": dict(
        _QK, idiom="qknorm_prescaled", bug="prescale_dropped", bug_module=_QK_BUG),
    "olmo2_tp2_qknorm_prescaled_bug_divided_twice": dict(
        _QK, idiom="qknorm_prescaled", bug="divided_twice", bug_module=_QK_BUG),
    "olmo2_tp2_qknorm_avg": dict(_QK, idiom="qknorm_avg"),
    "olmo2_tp2_qknorm_avg_bug_avg_as_sum": dict(_QK, idiom="qknorm_avg", bug="avg_as_sum", bug_module=_QK_BUG),
    "qwen3_tp2_vocab_ce": dict(_CE),
    "qwen3_tp2_vocab_ce_bug_mask_end": dict(_CE, bug="mask_end", bug_module="loss"),
    "qwen3_tp2_vocab_ce_bug_predicted_not_reduced": dict(_CE, bug="predicted_not_reduced", bug_module="loss"),
    "qwen3_tp2_vocab_argmax": dict(_CE, idiom="vocab_argmax"),
    "qwen3_tp2_vocab_argmax_bug_rank_offset": dict(_CE, idiom="vocab_argmax", bug="rank_offset",
                                                   bug_module="next_tokens"),
    "qwen3_tp2_vocab_topk": dict(_CE, idiom="vocab_topk"),
    "qwen3_tp2_vocab_topk_bug_rank_offset": dict(_CE, idiom="vocab_topk", bug="rank_offset", bug_module="topk_ids"),
    "qwen3_tp2_vocab_softmax": dict(_SOFTMAX),
    "qwen3_tp2_vocab_softmax_bug_local_max": dict(_SOFTMAX, bug="local_max", bug_module="probs"),
    "olmo2_tp2_qknorm_allreduce": dict(model="olmo2", idiom="qknorm_allreduce", **{**_SMALL, "kv_heads": 4}),
    "olmo2_tp2_qknorm_allreduce_bug_norm_not_averaged": dict(
        model="olmo2", idiom="qknorm_allreduce", bug="norm_not_averaged",
        bug_module="model.layers.0.self_attn.q_norm", **{**_SMALL, "kv_heads": 4},
    ),
}
OUTPUT = {
    "vocab_softmax": "probs",
    "vocab_ce": "loss",
    "vocab_argmax": "next_tokens",
    "vocab_topk": "topk_ids",
    "qknorm_allreduce": "logits",
    "qknorm_prescaled": "logits",
    "qknorm_avg": "logits",
    "rank0_residual": "logits",
    "rank0_bias": "logits",
    "scaled_residual": "logits",
    "hand_reduce_scatter": "logits",
    "linear_from_conv1d": "logits",
}
#: the idioms that replace OLMo2's q/k norms by a tensor-parallel RMSNorm (tp_rms_norm's form)
QKNORM = {"qknorm_allreduce": "after", "qknorm_prescaled": "before", "qknorm_avg": "avg"}
#: the idioms that write the decoder layer's MLP tail by hand (mlp_tail's form)
TAIL = ("rank0_residual", "scaled_residual", "hand_reduce_scatter")
#: the idioms on vocab-sharded logits (lm_head ColwiseParallel() with its local output) and the
#: module each adds after lm_head
HEAD = {"vocab_softmax": "probs", "vocab_ce": "loss", "vocab_argmax": "next_tokens", "vocab_topk": "topk_ids"}
TOPK = 4
# the source file of the first discrepancy: the sequential softmax this script adds; HF's
# Olmo2RMSNorm whose mean the ranks compute by hand
BUG_SOURCE = {
    "local_max": "scripts/export_tp_idioms.py",
    "mask_end": "scripts/export_tp_idioms.py",
    "predicted_not_reduced": "scripts/export_tp_idioms.py",
    "rank_offset": "scripts/export_tp_idioms.py",
    "norm_not_averaged": "transformers/models/olmo2/",
    "prescale_dropped": "transformers/models/olmo2/",
    "divided_twice": "transformers/models/olmo2/",
    "avg_as_sum": "transformers/models/olmo2/",
    # the decoder layer's residual add of HF's LlamaDecoderLayer, which the ranks fold into the MLP
    "residual_every_rank": "transformers/models/llama/",
    "scale_dropped": "transformers/models/llama/",
    "scatter_offset": "transformers/models/llama/",
    "bias_every_rank": "transformers/models/llama/",
    # GPT-2's Conv1D.forward (addmm of x and its [in, out] weight), which the converted Linear replaces
    "transpose_dropped": "transformers/pytorch_utils.py",
}
#: GPT-2's Conv1D modules in every block, which the checkpoint converter turns into nn.Linear
CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def vocab_softmax(logits, group, bug: str | None):
    """softmax(logits, -1) of vocab-sharded logits (Megatron-LM's vocab-parallel normalization)."""
    import torch
    from torch.distributed._functional_collectives import all_reduce

    m = logits.max(dim=-1, keepdim=True).values
    if bug != "local_max":
        m = all_reduce(m, "max", group)  # BUG local_max (one line): this all-reduce dropped
    e = torch.exp(logits - m)
    s = all_reduce(e.sum(dim=-1, keepdim=True), "sum", group)
    return e / s


def softmax_head(group=None, bug: str | None = None):
    """The module ``probs`` that turns logits into the next-token distribution: ``softmax(logits,
    -1)`` sequentially, :func:`vocab_softmax` on a rank (``group`` given)."""
    import torch

    class VocabSoftmax(torch.nn.Module):
        def forward(self, logits):
            if group is None:
                return torch.softmax(logits, -1)
            return vocab_softmax(logits, group, bug)

    return VocabSoftmax()


#: the label cross_entropy ignores (its default; HF's ForCausalLMLoss pads labels with it)
IGNORE_INDEX = -100


def vocab_parallel_cross_entropy(logits, target, rank: int, group, bug: str | None):
    """Per-token cross-entropy of vocab-sharded ``logits`` [..., V/N] against ``target`` [...]
    (ids in [0, V)), as Megatron-LM's ``_VocabParallelCrossEntropy.forward`` computes it
    (megatron/core/tensor_parallel/cross_entropy.py); returns the loss [...] on every rank."""
    import torch
    from torch.distributed._functional_collectives import all_reduce

    logits_max = logits.max(dim=-1).values
    logits_max = all_reduce(logits_max, "max", group)
    logits = logits - logits_max.unsqueeze(-1)
    partition = logits.size(-1)
    vocab_start = rank * partition
    vocab_end = vocab_start + partition
    if bug == "mask_end":
        vocab_end = vocab_start + partition - 1  # BUG mask_end (one line): the end taken inclusive
    target_mask = (target < vocab_start) | (target >= vocab_end)
    masked_target = (target - vocab_start).masked_fill(target_mask, 0)
    logits_2d = logits.view(-1, partition)
    predicted = logits_2d.gather(1, masked_target.view(-1, 1)).view_as(target)
    predicted = predicted.masked_fill(target_mask, 0.0)
    if bug != "predicted_not_reduced":
        predicted = all_reduce(predicted, "sum", group)  # BUG predicted_not_reduced: this line dropped
    sum_exp = all_reduce(torch.exp(logits).sum(dim=-1), "sum", group)
    return torch.log(sum_exp) - predicted


def ce_head(rank: int = 0, group=None, bug: str | None = None):
    """The module ``loss``: the per-token ``cross_entropy(logits, labels, reduction="none")``
    sequentially, :func:`vocab_parallel_cross_entropy` on a rank (``group`` given)."""
    import torch

    class VocabCrossEntropy(torch.nn.Module):
        def forward(self, logits, labels):
            # [B*S, V] (or [B*S, V/N]) and [B*S], as HF's ForCausalLMLoss flattens them
            flat, target = logits.view(-1, logits.size(-1)), labels.view(-1)
            if group is None:
                loss = torch.nn.functional.cross_entropy(flat, target, reduction="none")
            else:
                loss = vocab_parallel_cross_entropy(flat, target, rank, group, bug)
                # the caller's loss mask (Megatron's loss_mask; HF's labels -100, cross_entropy's
                # ignore_index): Megatron's function gives an ignored label a finite loss
                loss = loss.masked_fill(target == IGNORE_INDEX, 0.0)
            return loss.view_as(labels)

    return VocabCrossEntropy()


def vocab_parallel_argmax(logits, rank: int, world: int, group, bug: str | None):
    """``logits.argmax(-1)`` of vocab-sharded ``logits`` [B, S, V/N]: the rank's row max and
    argmax, the index offset by the rank's vocab start, both all-gathered (rank order on axis
    0), the index of the rank with the largest max taken (the first such rank on a tie, as
    ``argmax`` keeps the first index); returns the token ids [B, S] on every rank."""
    from torch.distributed._functional_collectives import all_gather_tensor

    local_max, local_idx = logits.max(dim=-1)
    if bug != "rank_offset":
        local_idx = local_idx + rank * logits.size(-1)  # BUG rank_offset (one line): this line dropped
    maxes = all_gather_tensor(local_max, 0, group).view(world, *local_max.shape)
    ids = all_gather_tensor(local_idx, 0, group).view(world, *local_idx.shape)
    winner = maxes.argmax(dim=0, keepdim=True)
    return ids.gather(0, winner).squeeze(0)


def argmax_head(rank: int = 0, world: int = 1, group=None, bug: str | None = None):
    """The module ``next_tokens``: ``logits.argmax(-1)`` sequentially,
    :func:`vocab_parallel_argmax` on a rank (``group`` given)."""
    import torch

    class VocabArgmax(torch.nn.Module):
        def forward(self, logits):
            if group is None:
                return logits.argmax(dim=-1)
            return vocab_parallel_argmax(logits, rank, world, group, bug)

    return VocabArgmax()


def vocab_parallel_topk(logits, k: int, rank: int, world: int, group, bug: str | None):
    """The ids of the ``k`` largest of vocab-sharded ``logits`` [B, S, V/N] (``topk(k, -1)``):
    each rank's top k and their ids offset by the rank's vocab start, both all-gathered and laid
    out rank-major along the last axis [B, S, N*k], the top k of those; returns the ids
    [B, S, k] on every rank (ties keep the lower id first: lower ranks come first)."""
    from torch.distributed._functional_collectives import all_gather_tensor

    vals, ids = logits.topk(k, dim=-1)
    if bug != "rank_offset":
        ids = ids + rank * logits.size(-1)  # BUG rank_offset (one line): this line dropped
    shape = (*vals.shape[:-1], world * k)
    gv = all_gather_tensor(vals, 0, group).view(world, *vals.shape).permute(1, 2, 0, 3).reshape(shape)
    gi = all_gather_tensor(ids, 0, group).view(world, *ids.shape).permute(1, 2, 0, 3).reshape(shape)
    pos = gv.topk(k, dim=-1).indices
    return gi.gather(gi.dim() - 1, pos)  # a positive axis: onnx.reference mishandles GatherElements(axis=-1)


def topk_head(rank: int = 0, world: int = 1, group=None, bug: str | None = None):
    """The module ``topk_ids``: ``logits.topk(TOPK, -1).indices`` sequentially,
    :func:`vocab_parallel_topk` on a rank (``group`` given)."""
    import torch

    class VocabTopk(torch.nn.Module):
        def forward(self, logits):
            if group is None:
                return logits.topk(TOPK, dim=-1).indices
            return vocab_parallel_topk(logits, TOPK, rank, world, group, bug)

    return VocabTopk()


def tp_rms_norm(norm, rank: int, world: int, group, bug: str | None, form: str = "after", mesh=None):
    """A tensor-parallel RMSNorm over a column-parallel projection (vLLM's
    MiniMaxText01RMSNormTP): the mean of squares over the whole (sharded) hidden axis from the
    ranks' local means, times the rank's chunk of ``norm``'s weight. ``form`` says how the local
    means become the global one: ``"after"`` all-reduced (sum) then divided by the world size
    (vLLM), ``"before"`` each divided by the world size, then all-reduced (sum), ``"avg"`` declared
    ``Partial("avg")`` on ``mesh`` and redistributed to ``Replicate()`` (DTensor: an all-reduce
    with reduce op avg)."""
    import torch
    from torch.distributed._functional_collectives import all_reduce
    from torch.distributed.tensor import DTensor, Partial, Replicate

    weight = norm.weight.detach().chunk(world, dim=0)[rank].clone()
    eps = norm.variance_epsilon

    class TPRMSNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(weight, requires_grad=False)

        def forward(self, x):
            variance = x.pow(2).mean(-1, keepdim=True)
            if form == "avg":
                placement = Partial("sum") if bug == "avg_as_sum" else Partial("avg")  # BUG avg_as_sum: "sum"
                variance = DTensor.from_local(variance, mesh, [placement], run_check=False)
                variance = variance.redistribute(mesh, [Replicate()]).to_local()
            elif form == "before":
                share = variance if bug == "prescale_dropped" else variance / world  # BUG prescale_dropped: no / N
                variance = all_reduce(share, "sum", group)
                if bug == "divided_twice":
                    variance = variance / world  # BUG divided_twice (one line): divided by N again
            else:
                variance = all_reduce(variance, "sum", group)
                if bug != "norm_not_averaged":
                    variance = variance / world  # BUG norm_not_averaged (one line): this division dropped
            return self.weight * (x * torch.rsqrt(variance + eps))

    return TPRMSNorm()


def row_parallel_linear(linear, rank: int, world: int, group=None, bug: str | None = None):
    """vLLM's ``RowParallelLinear`` (vllm/model_executor/layers/linear.py): the rank's chunk of
    ``linear``'s weight along the input axis and the local product, a partial sum. Without
    ``group`` (``reduce_results=False``) the caller reduces it (and ``linear`` has no bias);
    with ``group`` the full bias is added on rank 0 only (``bias_ = None if self.tp_rank > 0
    else self.bias``) and the sum all-reduced."""
    import torch
    from torch.distributed._functional_collectives import all_reduce

    weight = linear.weight.detach().chunk(world, dim=1)[rank].clone()
    bias = None if linear.bias is None else linear.bias.detach().clone()

    class RowParallelLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(weight, requires_grad=False)
            self.bias = None if bias is None else torch.nn.Parameter(bias, requires_grad=False)

        def forward(self, x):
            if group is None:
                return torch.nn.functional.linear(x, self.weight)
            # BUG bias_every_rank: the `tp_rank > 0` test dropped (bias_ = self.bias on every rank)
            bias_ = None if rank > 0 and bug != "bias_every_rank" else self.bias
            return all_reduce(torch.nn.functional.linear(x, self.weight, bias_), "sum", group)

    return RowParallelLinear()


def mlp_tail(layer, form: str, rank: int, world: int, group, bug: str | None):
    """The forward of a decoder layer (HF's ``LlamaDecoderLayer.forward``) whose MLP ends in a
    row-parallel ``down_proj`` without its all-reduce (:func:`row_parallel_linear`); the residual
    is folded in before the reduction, by ``form``:

    * ``"rank0_residual"``: added on rank 0 only, then all-reduced (vLLM's ``RowParallelLinear``
      adds its bias this way: ``bias_ = None if self.tp_rank > 0 else self.bias``);
    * ``"scaled_residual"``: ``residual / N`` added on every rank, then all-reduced;
    * ``"hand_reduce_scatter"``: all-reduced, each rank keeps its chunk of the sequence
      (``narrow(1, rank * S/N, S/N)``: a reduce-scatter written by hand, sequence-parallel style),
      adds its chunk of the residual, and the chunks are all-gathered on the sequence axis.

    Returns the function to bind as the layer's ``forward``."""
    from torch.distributed._functional_collectives import all_gather_tensor, all_reduce

    def forward(hidden_states, attention_mask=None, position_embeddings=None, **kwargs):
        residual = hidden_states
        hidden_states = layer.input_layernorm(hidden_states)
        hidden_states, _ = layer.self_attn(hidden_states=hidden_states, attention_mask=attention_mask,
                                           position_embeddings=position_embeddings, **kwargs)
        hidden_states = residual + hidden_states
        residual = hidden_states
        partial = layer.mlp(layer.post_attention_layernorm(hidden_states))  # a partial sum
        if form == "rank0_residual":
            if rank == 0 or bug == "residual_every_rank":  # BUG residual_every_rank: `if True`
                partial = residual + partial
            return all_reduce(partial, "sum", group)
        if form == "scaled_residual":
            share = residual if bug == "scale_dropped" else residual / world  # BUG scale_dropped: no / N
            return all_reduce(share + partial, "sum", group)
        size = partial.size(1) // world
        start = rank if bug == "scatter_offset" else rank * size  # BUG scatter_offset: rank, not rank * size
        out = all_reduce(partial, "sum", group).narrow(1, start, size)
        out = residual.narrow(1, start, size) + out
        return all_gather_tensor(out, 1, group)

    return forward


def linear_from_conv1d(conv, bug: str | None = None):
    """The ``nn.Linear`` a checkpoint converter makes of GPT-2's ``Conv1D`` ``conv``
    (transformers/pytorch_utils.py: ``addmm(bias, x, weight)`` with ``weight`` [in, out]), as
    Megatron-LM's and vLLM's GPT-2 loaders do: ``weight.T`` [out, in] and the same bias, so that
    ``F.linear(x, W.T, b) = x @ W + b``. Bug ``transpose_dropped``: the weight copied as it is
    (only a square ``conv`` fits)."""
    import torch

    n_in, n_out = conv.weight.shape
    linear = torch.nn.Linear(n_in, n_out, bias=conv.bias is not None)
    weight = conv.weight.detach()
    if bug != "transpose_dropped":
        weight = weight.T  # BUG transpose_dropped (one line): this transpose dropped
    with torch.no_grad():
        linear.weight.copy_(weight)
        if conv.bias is not None:
            linear.bias.copy_(conv.bias.detach())
    linear.requires_grad_(False)
    return linear


def convert_conv1d(model, bug: str | None = None) -> None:
    """Replace every ``Conv1D`` of GPT-2's blocks by :func:`linear_from_conv1d` (the bug, if any,
    in layer 0's ``attn.c_proj``)."""
    for i, block in enumerate(model.transformer.h):
        for name in CONV1D:
            parent, attr = name.split(".")
            owner = getattr(block, parent)
            wrong = bug if (i == 0 and name == "attn.c_proj") else None
            setattr(owner, attr, linear_from_conv1d(getattr(owner, attr), wrong))


def _gpt2_plan(args, cfg):
    """GPT-2 after :func:`convert_conv1d`: the MLP tensor-parallel (``c_fc`` colwise, ``c_proj``
    rowwise), ``lm_head`` colwise with its logits gathered; attention (its fused ``c_attn``
    split by ``split_size``) and the embeddings replicated."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan = {"lm_head": ColwiseParallel(output_layouts=Replicate())}
    desc = {"lm_head": "ColwiseParallel(output_layouts=Replicate())"}
    for i in range(cfg.num_hidden_layers):
        pre = f"transformer.h.{i}"
        for name, style in (("mlp.c_fc", ColwiseParallel), ("mlp.c_proj", RowwiseParallel)):
            plan[f"{pre}.{name}"] = style()
            desc[f"{pre}.{name}"] = f"nn.Linear(Conv1D.weight.T), {style.__name__}()"
        for name in ("attn.c_attn", "attn.c_proj"):
            desc[f"{pre}.{name}"] = "nn.Linear(Conv1D.weight.T), replicated" + (
                "  # BUG: Conv1D.weight not transposed" if args.bug and i == 0 and name == "attn.c_proj" else "")
    return plan, desc


def _plan(args, cfg):
    """The rank's plan: the model's column/row-parallel projections (OLMo2's attention without
    HF's gather: plain colwise q/k/v, rowwise o_proj), embeddings gathered, lm_head gathered or
    (vocab_softmax) left vocab-sharded."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan, desc = {}, {}
    for i in range(cfg.num_hidden_layers):
        for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "mlp.gate_proj", "mlp.up_proj"):
            plan[f"model.layers.{i}.{name}"], desc[f"model.layers.{i}.{name}"] = ColwiseParallel(), "ColwiseParallel()"
        for name in ("self_attn.o_proj", "mlp.down_proj"):
            if name == "mlp.down_proj" and args.idiom == "rank0_bias":
                desc[f"model.layers.{i}.{name}"] = (
                    "hand-written vLLM RowParallelLinear: weight chunk r, bias on rank 0 only, all_reduce"
                    + ("  # BUG: bias on every rank" if args.bug and i == 0 else ""))
                continue
            if name == "mlp.down_proj" and args.idiom in TAIL:
                desc[f"model.layers.{i}.{name}"] = (
                    "hand-written RowParallelLinear(reduce_results=False): weight chunk r")
                continue
            plan[f"model.layers.{i}.{name}"], desc[f"model.layers.{i}.{name}"] = RowwiseParallel(), "RowwiseParallel()"
    plan["model.embed_tokens"] = ColwiseParallel(output_layouts=Replicate())
    desc["model.embed_tokens"] = "ColwiseParallel(output_layouts=Replicate())"
    if args.idiom in HEAD:
        plan["lm_head"] = ColwiseParallel()
        desc["lm_head"] = "ColwiseParallel() (vocab-sharded logits, use_local_output=True)"
    if args.idiom == "vocab_softmax":
        desc["probs"] = (
            "vocab-parallel softmax by hand: all_reduce(row max, MAX), exp, all_reduce(row sums), divide"
            + ("  # BUG: the max not all-reduced" if args.bug == "local_max" else "")
        )
    elif args.idiom == "vocab_argmax":
        desc["next_tokens"] = (
            "vocab-parallel greedy decoding: local max and argmax, index + r*V/N, all_gather(max), "
            "all_gather(index), the index of the largest max" + ("  # BUG: + r*V/N dropped" if args.bug else "")
        )
    elif args.idiom == "vocab_topk":
        desc["topk_ids"] = (
            f"vocab-parallel top-{TOPK}: local topk, ids + r*V/N, all_gather both, rank-major along the "
            "last axis, topk of those" + ("  # BUG: + r*V/N dropped" if args.bug else "")
        )
    elif args.idiom == "vocab_ce":
        desc["loss"] = (
            "Megatron-LM vocab_parallel_cross_entropy: all_reduce(row max, MAX), targets masked to "
            "[r*V/N, (r+1)*V/N), all_reduce(predicted logit), all_reduce(sum exp), log(sum_exp) - predicted"
            + {"mask_end": "  # BUG: range end inclusive (start + V/N - 1)",
               "predicted_not_reduced": "  # BUG: predicted logit not all-reduced"}.get(args.bug, "")
        )
    else:
        plan["lm_head"] = ColwiseParallel(output_layouts=Replicate())
        desc["lm_head"] = "ColwiseParallel(output_layouts=Replicate())"
        bug = f"  # BUG: {BUGS[args.bug].split(':')[0]}" if args.bug else ""
        if args.idiom == "qknorm_allreduce":
            desc["q_norm, k_norm"] = "TP RMSNorm: all_reduce(local mean of squares) / N, weight chunk r" + (
                "  # BUG: / N dropped" if args.bug == "norm_not_averaged" else "")
        elif args.idiom == "qknorm_prescaled":
            desc["q_norm, k_norm"] = "TP RMSNorm: all_reduce(local mean of squares / N), weight chunk r" + bug
        elif args.idiom == "qknorm_avg":
            desc["q_norm, k_norm"] = ("TP RMSNorm: DTensor.from_local(local mean of squares, [Partial('avg')])"
                                      ".redistribute([Replicate()]), weight chunk r" + bug)
        elif args.idiom in TAIL:
            desc["layers.*.forward"] = {
                "rank0_residual": "down_proj's partial sum + residual on rank 0 only, all_reduce",
                "scaled_residual": "down_proj's partial sum + residual / N on every rank, all_reduce",
                "hand_reduce_scatter": "all_reduce(down_proj's partial sum).narrow(1, r*S/N, S/N) + residual chunk, "
                "all_gather on the sequence axis",
            }[args.idiom] + bug
    return plan, desc


def _forward(model, args):
    """The program of one side: the (parallelized) model, then the idiom's head, if any."""

    def forward(input_ids, *labels):
        logits = model(input_ids=input_ids, use_cache=False).logits
        if args.idiom == "vocab_softmax":
            return model.probs(logits)
        if args.idiom == "vocab_ce":
            return model.loss(logits, *labels)
        if args.idiom == "vocab_argmax":
            return model.next_tokens(logits)
        if args.idiom == "vocab_topk":
            return model.topk_ids(logits)
        return logits

    forward._orig_mod = model  # lets make_fx record nn_module_stack (module paths)
    return forward


def _trace(fn, inputs):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    with torch.no_grad(), hf.hf_tracing_patches(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(fn, record_module_stack=True, record_stack_traces=True)(*inputs)
    gm.eval()
    return gm


def _labels(ids, vocab: int, world: int):
    """Next-token labels [B, S] (ids shifted by one), with the first and last id of every rank's
    vocab range among them so that a range off by one at either end shows."""
    import torch

    labels = torch.roll(ids, -1, dims=-1).clone()
    chunk = vocab // world
    edges = [e for r in range(world) for e in (r * chunk, (r + 1) * chunk - 1)]
    flat = labels.view(-1)
    flat[: len(edges)] = torch.tensor(edges, dtype=labels.dtype)
    return labels


def produce(args, command: str) -> dict:
    import onnx
    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    output = OUTPUT[args.idiom]
    cfg, sd, ids, ref_logits = hf.build_base_state(args)
    inputs, input_names = (ids,), ("input_ids",)
    if args.idiom == "vocab_ce":
        inputs, input_names = (ids, _labels(ids, cfg.vocab_size, n)), ("input_ids", "labels")
    if args.idiom == "vocab_softmax":
        ref = torch.softmax(ref_logits, -1)
    elif args.idiom == "vocab_ce":
        ref = ce_head()(ref_logits, inputs[1])
    elif args.idiom == "vocab_argmax":
        ref = ref_logits.argmax(-1)
    elif args.idiom == "vocab_topk":
        ref = ref_logits.topk(TOPK, -1).indices
    else:
        ref = ref_logits
    hf_class = hf.FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    model = hf.fresh_model(args, cfg, sd)

    if args.idiom == "vocab_softmax":
        model.probs = softmax_head()
    if args.idiom == "vocab_ce":
        model.loss = ce_head()
    if args.idiom == "vocab_argmax":
        model.next_tokens = argmax_head()
    if args.idiom == "vocab_topk":
        model.topk_ids = topk_head()

    gm = _trace(_forward(model, args), inputs)
    seq = hf.export_onnx(gm, inputs, hf.constant_names(gm, model), rank=-1, world_size=1, input_names=input_names,
                         output_names=(output,),
                         meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    ranks, desc = [], None
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            hf.reset_dtensor_caches()
            mesh = DeviceMesh("cpu", list(range(n)))
            model = hf.fresh_model(args, cfg, sd)
            if args.idiom == "linear_from_conv1d":
                convert_conv1d(model, args.bug)
                plan, desc = _gpt2_plan(args, cfg)
            else:
                plan, desc = _plan(args, cfg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parallelize_module(model, mesh, plan, src_data_rank=None)
            group = dist.group.WORLD
            if args.idiom == "vocab_softmax":
                model.probs = softmax_head(group, args.bug)
            if args.idiom == "vocab_ce":
                model.loss = ce_head(r, group, args.bug)
            if args.idiom == "vocab_argmax":
                model.next_tokens = argmax_head(r, n, group, args.bug)
            if args.idiom == "vocab_topk":
                model.topk_ids = topk_head(r, n, group, args.bug)
            if args.idiom in QKNORM:
                for layer in model.model.layers:
                    attn = layer.self_attn
                    attn.q_norm = tp_rms_norm(attn.q_norm, r, n, group, args.bug, QKNORM[args.idiom], mesh)
                    attn.k_norm = tp_rms_norm(attn.k_norm, r, n, group, None, QKNORM[args.idiom], mesh)
            if args.idiom == "rank0_bias":
                for i, layer in enumerate(model.model.layers):
                    mlp = layer.mlp
                    mlp.down_proj = row_parallel_linear(mlp.down_proj, r, n, group, args.bug if i == 0 else None)
            if args.idiom in TAIL:
                for i, layer in enumerate(model.model.layers):
                    layer.mlp.down_proj = row_parallel_linear(layer.mlp.down_proj, r, n)
                    # the one-line bugs live in layer 0 (bug_module); the other layers are correct
                    layer.forward = mlp_tail(layer, args.idiom, r, n, group, args.bug if i == 0 else None)

            gm = _trace(_forward(model, args), inputs)
            names = hf.constant_names(gm, model)
            doc = f"{hf_class} tensor-parallel rank {r}/{n}, {args.idiom} (shardlog example {out.name})"
            proto = hf.export_onnx(gm, inputs, names, rank=r, world_size=n, input_names=input_names,
                                   output_names=(output,), meta={**meta, "doc": doc})
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
    print(hf.describe(seq, ranks))

    import onnxruntime as ort

    feeds = {name: t.numpy() for name, t in zip(input_names, inputs)}
    sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
    seq_out = sess.run(None, feeds)[0]
    seq_err = float(np.max(np.abs(seq_out - ref.numpy())))
    outs = hf.simulate_ranks(ranks, feeds)
    if args.idiom == "vocab_softmax":  # each rank holds its vocab chunk of the probabilities
        max_err = float(np.max(np.abs(np.concatenate(outs, axis=-1) - seq_out)))
    else:  # every rank holds the logits
        max_err = float(max(np.max(np.abs(o - seq_out)) for o in outs))
    print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")
    layout = "Shard(2): rank r holds vocab chunk r" if args.idiom == "vocab_softmax" else "Replicate"
    shape = {"vocab_ce": list(ids.shape), "vocab_argmax": list(ids.shape),
             "vocab_topk": [*ids.shape, TOPK]}.get(args.idiom, [*ids.shape, cfg.vocab_size])
    dtype = "int64" if args.idiom in ("vocab_argmax", "vocab_topk") else "float32"
    model_data = {
        "hf_class": hf_class,
        "transformers_version": str(transformers.__version__),
        "torch_version": str(torch.__version__),
        "config": {**hf.config_summary(cfg, args), **({"n_inner": cfg.n_inner, "activation_function":
                   cfg.activation_function} if args.model == "gpt2" else {})},
        "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64"},
        "output": {"name": output, "shape": shape, "dtype": dtype, "ranks": layout},
    }
    if args.idiom == "vocab_ce":
        model_data["labels"] = {"name": "labels", "shape": list(ids.shape), "dtype": "int64",
                                "values": "next-token ids with the first and last id of every rank's range"}
    data = {
        "model": model_data,
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug] if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        # where the one-line bug is: the hand-written part of this script, or HF's module it replaces
        "bug_source": BUG_SOURCE[args.bug] if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "tp_plan": desc,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    print(f"  wrote {out} ({sum(f.stat().st_size for f in out.iterdir()) / 1024:.0f} KiB)")
    hf.check_case_errors(args, out, seq_err, max_err, output=output)
    return data


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group(required=True)
    sel.add_argument("--case", choices=sorted(PRESETS))
    sel.add_argument("--all", action="store_true")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3)
    p.add_argument("--out", default=None, help="output folder of one --case (default examples/<case>)")
    return p.parse_args(argv)


def main(argv=None):
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(sys.argv[1:] if argv is None else argv)
    export_hf_families.install()
    hf.FAMILIES["olmo2"] = ("Olmo2Config", "Olmo2ForCausalLM")
    hf.FAMILIES["gpt2"] = ("GPT2Config", "GPT2LMHeadModel")
    base_config = hf.make_config

    def make_config(a):
        cfg = base_config(a)
        if a.model == "gpt2":  # GPT2Config names the MLP width n_inner; ids 0 in a tiny vocab
            cfg.n_inner, cfg.bos_token_id, cfg.eos_token_id = a.intermediate, 0, 0
        return cfg

    hf.make_config = make_config
    hf._OPTS["stack_frames"] = args.stack_frames
    args.verify = True
    for name in list(PRESETS) if args.all else [args.case]:
        a = hf.preset_args(hf.parse, PRESETS, name, args)
        a.tol = PRESETS[name].get("tol", a.tol)
        print(f"== {name}", flush=True)
        produce(a, f"python scripts/export_tp_idioms.py --case {name}")


if __name__ == "__main__":
    main()
