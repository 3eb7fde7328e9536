"""Export whole training steps of a small Hugging Face model, sequential and per rank.

One step = forward, loss, backward (``torch.autograd.grad``), gradient synchronization,
optimizer update; its outputs are the loss and every updated parameter (``updated.<name>``).
The model is unmodified Hugging Face code (the same tiny configs as scripts/export_hf_tp.py);
the step is traced with ``make_fx`` on each rank under PyTorch's ``fake`` process group and
exported with the same ONNX pipeline (collectives become ``com.microsoft`` ops).

Data parallelism (``llama_dp2_*``): rank r gets rows ``[r*B/N, (r+1)*B/N)`` of the batch.
The loss is normalized by the number of target tokens of the *whole* batch, passed in as
``num_items_in_batch`` (Hugging Face's ``ForCausalLMLoss`` then sums and divides by it, as
its Trainer does across devices), so each rank's loss and gradients are partial sums of the
sequential ones; the gradients are then summed with an all-reduce (DDP's bucketed all-reduce,
without bucketing) before the update.

Tensor parallelism (``llama_tp2_*``): every rank gets the whole batch and the model is
parallelized with ``parallelize_module`` and the same plans as the forward examples
(``scripts/export_hf_tp.py``: Megatron-style column/row-parallel linears, ``_sp`` adds
sequence parallelism around the norms); DTensor's autograd makes the backward's collectives
and SGD updates each DTensor in place, as ``torch.optim.SGD`` does (``param.add_(grad,
alpha=-lr)``), so a Partial gradient of a replicated parameter is all-reduced first. Each
updated parameter leaves as the rank's local tensor.

Expert parallelism (``mixtral_ep2_*``): the tiny Hugging Face Mixtral of scripts/export_moe.py
(4 experts, top-2) under the same expert parallelism as ``mixtral_ep2``: the model's
``base_model_ep_plan`` applied by ``apply_expert_parallelism`` with ``AllReduceEP`` (stacked
expert weights ``Shard(0)``, router and everything else replicated, every rank gets the whole
batch). ``AllReduceEP`` wraps the experts' hidden states and routing weights in
``_AllReduceBackward`` (identity forward, all-reduce backward) and the combine in
``_AllReduceForward`` (all-reduce forward, identity backward), so torch.autograd's gradients
come out complete on every rank: each rank's expert-weight gradients are exactly its experts'
(every token seen), the other gradients are replicated, and the step needs no gradient
synchronization of its own; each update keeps its parameter's layout (the experts' DTensors
leave as local tensors). HF's default ``AutoEP`` would pick ``AllToAllEP`` in training (split
sizes read back from the data: not exportable with static shapes), so ``all_reduce`` is named.

The Hugging Face Trainer's form (``form`` ``trainer``, ``llama_dp2_trainer*``), data parallelism
with ``average_tokens_across_devices`` (transformers ``trainer.py``: ``_get_num_items_in_batch``,
``compute_loss``, ``training_step``): the step takes only ``input_ids`` and ``labels``; each rank
counts its target tokens (``labels[..., 1:].ne(-100).sum()``), gathers the counts with
accelerate's ``gather`` (``all_gather_into_tensor`` of the 0-d count unsqueezed, then ``.sum()``),
divides by ``tp * cp * sp = 1``, passes the count as ``num_items_in_batch``, multiplies the loss
by the number of processes (``loss *= num_processes // tp_size``), and DDP's default
communication hook averages the gradients (``allreduce_hook``: ``grad / world_size``, then
all-reduce). The logged loss is ``nested_gather(loss).mean()``. On one process: no gather,
``loss *= 1``, no DDP.

Micro-batch gradient accumulation (``accum`` M, data parallelism): each rank processes its rows
in M micro-batches of ``B / (N * M)`` rows inside the step (a forward and ``torch.autograd.grad``
per micro-batch, gradients summed), then all-reduces the sums and updates once. Every
micro-batch's loss is normalized by the token count of the whole global batch
(``num_items_in_batch``, as the Hugging Face Trainer does under gradient accumulation), so the
summed gradients are the full-batch gradients.

Optimizers: SGD (``p - lr * g``; in place under tensor parallelism) and AdamW through
``torch.optim._functional.adamw``, the
function ``torch.optim.AdamW.step`` calls; gradient-norm clipping through
``torch.nn.utils.clip_grads_with_norm_`` semantics written out (norm of all gradients, one
scale). Optimizer state (AdamW's ``exp_avg``/``exp_avg_sq``) enters as graph inputs named
``state.<kind>.<param>`` and leaves updated.

Bug variants (``--bug``), each a one-line change of the correct step:
- ``missing-grad-allreduce``: the gradient of one parameter is not all-reduced.
- ``local-token-count``: the loss is normalized by the rank's own token count (HF's default
  ``mean``) while the gradients are still summed.
- ``double-scale``: the summed gradients are also divided by the world size (DDP's average on
  top of a globally normalized loss).
- ``norm-counts-replicas``: the clipping norm is all-reduced although every rank already holds
  the full gradients (each parameter counted N times).
- ``mean-of-means`` (with ``accum``): each micro-batch's loss is its own mean (HF's default, no
  ``num_items_in_batch``), divided by the number of micro-batches, and the summed gradients are
  averaged over ranks (DDP): a mean of micro-batch means, the Hugging Face Trainer's gradient
  accumulation bug before transformers 4.46, wrong whenever token counts differ.
- ``router-grad-not-reduced`` (expert parallel): layer 1's ``AllReduceEP.__call__`` without
  ``top_k_weights = _AllReduceBackward.apply(top_k_weights, ep_group)``: each rank's gradient
  of the routing weights covers its own experts' routes only, so the router's gradient (and the
  hidden-state gradient it adds to) is a partial sum used as complete.
- ``local-update`` (tensor + sequence parallel): the replicated parameters are updated on
  their local tensors (``p.to_local().add_(g.to_local(), alpha=-lr)``), so the norm weights'
  Partial gradients (each rank saw its own tokens) are never all-reduced: Megatron's
  "all-reduce layer-norm gradients under sequence parallelism" bug class.
- ``missing-inv-world`` (data parallel): the loss is multiplied by the world size, as the Hugging
  Face Trainer does when it normalizes by the global token count (``average_tokens_across_devices``:
  ``loss *= num_processes``, to cancel DDP's average), but the gradients are synchronized by a
  plain sum (a DDP communication hook or hand-written loop with ``dist.all_reduce(grad)`` and no
  ``grad / world_size``, the division PyTorch's default ``allreduce_hook`` does): every gradient
  is N times too large. It is a one-line change of the Trainer's form (loss times N, gradients
  averaged), not of this script's correct step (global normalizer, gradients summed), which has
  no factor N to cancel.
- ``missing-loss-scale`` (Trainer form): ``loss *= num_processes`` dropped while DDP still
  averages: every gradient is 1/N of the sequential one.
- ``count-not-reduced`` (Trainer form): the ``accelerator.gather(num_items_in_batch).sum()`` line
  dropped: each rank normalizes by its own token count, still times N and averaged.
- ``state-offset`` (tensor parallel, AdamW, ``state`` ``full``): resuming from a consolidated
  optimizer checkpoint, every rank holds each optimizer state in full (``Replicate``, what
  ``torch.load`` of a full optimizer state dict gives every rank) and must keep the piece its
  sharded parameter holds: ``full.narrow(dim, rank * size, size)``. The bug narrows at offset 0
  (``full.narrow(dim, 0, p.to_local().shape[dim])``): the shape fits on every rank, but every
  rank continues from rank 0's moments, so the sharded parameters of rank 1 take the wrong step.

Optimizer state layout (``state``): ``local`` (default) passes each rank its parameter's piece of
the state as the step's input; ``full`` passes the whole state to every rank and the step narrows
it to the parameter's piece (the first step after resuming from a consolidated checkpoint).

Usage: ``python scripts/export_train_step.py --case llama_dp2_sgd`` (writes examples/<case>/;
``--out`` another folder).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402
import export_moe as moe  # noqa: E402  (the MoE model and Hugging Face's expert-parallel plan)

# the step's tracing and export live in the package (analyzer/export/train.py)
from analyzer.export.train import (  # noqa: E402
    export_step,
    like,
    local,
    local_chunk,
    make_fx_step,
    step_constant_names,
)

_like, _local, _local_chunk, _constant_names = like, local, local_chunk, step_constant_names  # this script's names

REPO = Path(__file__).resolve().parents[1]
BATCH = 4
LR = 0.05
CLIP = 1.0
STEPS_DONE = 3
BUGS = {
    "missing-grad-allreduce": "gradient of {m} not all-reduced",
    "local-token-count": "loss normalized by the rank's own token count",
    "double-scale": "summed gradients divided by the world size again",
    "norm-counts-replicas": "gradient norm all-reduced although the gradients are replicated",
    "mean-of-means": "each micro-batch's loss is its own token mean, divided by the number of micro-batches, "
    "and the gradients averaged over ranks: a mean of micro-batch means",
    "router-grad-not-reduced": "{m} (AllReduceEP.__call__) drops top_k_weights = "
    "_AllReduceBackward.apply(top_k_weights, ep_group): each rank's gradient of the routing weights covers only "
    "the routes to its own experts (Partial), "
    "and the router's gradient and update use it as complete",
    "local-update": "SGD applied to the DTensors' local tensors (p.to_local().add_(g.to_local(), alpha=-lr)): the "
    "Partial gradients of the replicated norm weights (sequence parallelism) are never all-reduced",
    "missing-inv-world": "loss multiplied by the world size (the Hugging Face Trainer's compensation for DDP's "
    "average) but the gradients all-reduced with a plain sum: the 1/N of the average is missing",
    "missing-loss-scale": "the Trainer's loss *= num_processes dropped while DDP still averages the gradients "
    "(allreduce_hook: grad / world_size, all-reduce): every gradient 1/N of the sequential one",
    "count-not-reduced": "num_items_in_batch is the rank's own count of target tokens (the "
    "accelerator.gather(num_items_in_batch).sum() of average_tokens_across_devices dropped), the loss still "
    "multiplied by num_processes and the gradients averaged",
    "state-offset": "each optimizer state narrowed from the full (replicated) checkpoint tensor at offset 0 "
    "instead of rank * size: every rank keeps rank 0's moments while its parameter is its own shard",
}
BUG_PARAM = "model.layers.1.mlp.down_proj.weight"
#: bugs inside the expert-parallel layer (an EPImplementation of layer 1), not in the step
EP_BUGS = {"router-grad-not-reduced"}
EP_BUG_MODULE = "model.layers.1.mlp.experts"
PRESETS = {
    "llama_dp2_sgd": {"optimizer": "sgd"},
    "llama_dp2_adamw_clip": {"optimizer": "adamw", "clip": True},
    "llama_dp2_sgd_bug_missing_grad_allreduce": {"optimizer": "sgd", "bug": "missing-grad-allreduce"},
    "llama_dp2_sgd_bug_local_token_count": {"optimizer": "sgd", "bug": "local-token-count"},
    "llama_dp2_sgd_bug_double_scale": {"optimizer": "sgd", "bug": "double-scale"},
    "llama_dp2_sgd_accum2": {"optimizer": "sgd", "accum": 2},
    "llama_dp2_sgd_accum2_bug_mean_of_means": {"optimizer": "sgd", "accum": 2, "bug": "mean-of-means"},
    "llama_tp2_sgd": {"optimizer": "sgd", "parallel": "tensor"},
    "llama_tp2_sp_sgd": {"optimizer": "sgd", "parallel": "tensor", "form": "sp"},
    "llama_tp2_adamw_clip": {"optimizer": "adamw", "clip": True, "parallel": "tensor"},
    "llama_tp2_adamw_clip_bug_norm_counts_replicas": {
        "optimizer": "adamw", "clip": True, "parallel": "tensor", "bug": "norm-counts-replicas",
    },
    "llama_tp2_sp_sgd_bug_local_update": {
        "optimizer": "sgd", "parallel": "tensor", "form": "sp", "bug": "local-update",
    },
    "llama_dp2_adamw_clip_bug_norm_counts_replicas": {
        "optimizer": "adamw",
        "clip": True,
        "bug": "norm-counts-replicas",
    },
    "mixtral_ep2_sgd": {"optimizer": "sgd", "parallel": "expert", "model": "mixtral"},
    "mixtral_ep2_adamw": {"optimizer": "adamw", "parallel": "expert", "model": "mixtral"},
    "mixtral_ep2_sgd_bug_router_grad_not_reduced": {
        "optimizer": "sgd", "parallel": "expert", "model": "mixtral", "bug": "router-grad-not-reduced",
    },
    "llama_dp2_sgd_bug_missing_inv_world": {"optimizer": "sgd", "bug": "missing-inv-world"},
    "llama_dp2_trainer": {"optimizer": "sgd", "form": "trainer"},
    "llama_dp2_trainer_bug_missing_loss_scale": {"optimizer": "sgd", "form": "trainer", "bug": "missing-loss-scale"},
    "llama_dp2_trainer_bug_count_not_reduced": {"optimizer": "sgd", "form": "trainer", "bug": "count-not-reduced"},
    # the same Trainer form on Qwen2 (q/k/v biases)
    "qwen2_dp2_trainer": {"optimizer": "sgd", "form": "trainer", "model": "qwen2"},
    "llama_tp2_adamw_full_state": {"optimizer": "adamw", "parallel": "tensor", "state": "full"},
    "llama_tp2_adamw_full_state_bug_state_offset": {
        "optimizer": "adamw", "parallel": "tensor", "state": "full", "bug": "state-offset",
    },
}


def batch(args, cfg):
    """Token ids and labels [BATCH, SEQ_LEN]; some labels are -100 (ignored) so token counts
    differ between the rows of the batch, as with padding."""
    import torch

    g = torch.Generator().manual_seed(args.seed + 7)
    ids = torch.randint(0, cfg.vocab_size, (BATCH, hf.SEQ_LEN), generator=g, dtype=torch.int64)
    labels = ids.clone()
    labels[0, :3] = -100
    labels[2, :1] = -100
    return ids, labels


def step_fn(model, args, world_size: int):
    """The traced training step: (input_ids, labels, num_items_in_batch, *state) -> outputs."""
    import torch
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.tensor import DTensor, Replicate
    from torch.optim._functional import adamw

    names = [n for n, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    dist = world_size > 1 and args.parallel == "data"

    def all_reduce(x):
        return funcol.all_reduce(x, "sum", torch.distributed.group.WORLD) if dist else x

    micro = args.accum if dist else 1

    def gather_sum(x, mean=False):
        """accelerate's ``Accelerator.gather`` of a 0-d tensor (``_gpu_gather_one``: ``x[None]``,
        ``all_gather_into_tensor``), then ``.sum()`` (or ``.mean()``, the Trainer's logged loss);
        one process: ``x`` itself."""
        if not dist:
            return x
        g = funcol.all_gather_tensor(x[None], 0, torch.distributed.group.WORLD)
        return g.mean() if mean else g.sum()

    def trainer_step(input_ids, labels):
        # Trainer._get_num_items_in_batch (transformers 5.x trainer.py), average_tokens_across_devices
        num_items = labels[..., 1:].ne(-100).sum()
        if dist and args.bug != "count-not-reduced":  # BUG (count-not-reduced): this line is dropped
            num_items = gather_sum(num_items)  # accelerator.gather(num_items_in_batch).sum()
        num_items = num_items / 1  # / (tp_size * cp_size * sp_size)
        # Trainer.compute_loss: the model's loss normalized by num_items_in_batch, then
        # loss *= num_processes // tp_size (n_gpu <= 1)
        loss = model(input_ids=input_ids, labels=labels, num_items_in_batch=num_items, use_cache=False).loss
        if args.bug != "missing-loss-scale":  # BUG (missing-loss-scale): this line is dropped
            loss *= world_size
        grads = list(torch.autograd.grad(loss, params))  # accelerator.backward(loss)
        if dist:  # DDP's default comm hook (allreduce_hook): bucket.buffer().div_(world_size), all_reduce
            grads = [all_reduce(g / world_size) for g in grads]
        # the logged loss: training_step returns loss.detach(), logging takes nested_gather(tr_loss).mean()
        logged = gather_sum(loss.detach(), mean=True)
        return [logged] + [p.detach() - LR * g for p, g in zip(params, grads)]

    if args.form == "trainer":
        return trainer_step, names

    def step(input_ids, labels, num_items, *state):
        if args.accum > 1:  # on one device (the sequential step) one micro-batch: the whole batch
            # gradient accumulation: one forward and backward per micro-batch of the rank's rows
            b = input_ids.shape[0] // micro
            loss, grads = None, None
            for k in range(micro):
                ids_k, labels_k = input_ids[k * b : (k + 1) * b], labels[k * b : (k + 1) * b]
                if args.bug == "mean-of-means":  # BUG: the micro-batch's own token mean, averaged
                    out = model(input_ids=ids_k, labels=labels_k, use_cache=False)
                    part = out.loss / micro if micro > 1 else out.loss
                else:
                    out = model(input_ids=ids_k, labels=labels_k, num_items_in_batch=num_items, use_cache=False)
                    part = out.loss
                g_k = torch.autograd.grad(part, params)
                grads = list(g_k) if grads is None else [a + g for a, g in zip(grads, g_k)]
                loss = part.detach() if loss is None else loss + part.detach()
            grads = [all_reduce(g) for g in grads]
            loss = all_reduce(loss)
            if args.bug == "mean-of-means" and world_size > 1:  # DDP averages the gradients over ranks
                grads = [g / world_size for g in grads]
                loss = loss / world_size
            return [loss] + [p.detach() - LR * g for p, g in zip(params, grads)]
        if args.bug == "local-token-count":
            out = model(input_ids=input_ids, labels=labels, use_cache=False)
        else:
            out = model(input_ids=input_ids, labels=labels, num_items_in_batch=num_items, use_cache=False)
        objective = out.loss
        if args.bug == "missing-inv-world" and world_size > 1:
            objective = out.loss * world_size  # the Trainer's loss *= num_processes (for DDP's average)
        grads = list(torch.autograd.grad(objective, params))
        for i, name in enumerate(names):
            if not (args.bug == "missing-grad-allreduce" and name == BUG_PARAM):
                grads[i] = all_reduce(grads[i])
            if args.bug == "double-scale":
                grads[i] = grads[i] / world_size
        loss = all_reduce(out.loss.detach())
        if args.clip and args.parallel == "tensor" and args.bug == "norm-counts-replicas" and world_size > 1:
            # BUG: the norm of the local tensors, all-reduced over the TP group: every replicated
            # parameter's gradient is counted once per rank
            local = sum((_local(g) * _local(g)).sum() for g in grads)
            sq = funcol.all_reduce(local, "sum", torch.distributed.group.WORLD)
            scale = torch.clamp(CLIP / (sq.sqrt() + 1e-6), max=1.0)
            mesh = next(p.device_mesh for p in params if hasattr(p, "device_mesh"))
            placed = DTensor.from_local(scale, mesh, [Replicate()], run_check=False)
            grads = [g * (placed if hasattr(g, "placements") else scale) for g in grads]
        elif args.clip:
            sq = sum((g * g).sum() for g in grads)
            if args.bug == "norm-counts-replicas" and args.parallel == "data":
                sq = all_reduce(sq)
            total = sq.sqrt()
            scale = torch.clamp(CLIP / (total + 1e-6), max=1.0)
            # parameters outside the plan (the norms under plain TP) are plain tensors
            grads = [g * (scale if hasattr(g, "placements") else _local(scale)) for g in grads]
        if args.optimizer == "sgd" and args.parallel == "tensor":
            # in place, as torch.optim.SGD does (param.add_(grad, alpha=-lr)): a DTensor keeps its
            # placement, so a Partial gradient of a Replicate parameter is all-reduced first
            new = []
            for p, g in zip(params, grads):
                if args.bug == "local-update" and _replicated(p):
                    new.append(_local(p.detach()).clone().add_(_local(g), alpha=-LR))  # BUG: local tensors
                else:
                    new.append(_local(p.detach().clone().add_(g, alpha=-LR)))
            return [loss] + new
        if args.optimizer == "sgd":  # expert parallel: the experts' DTensors leave as local tensors
            return [loss] + [_local(p.detach() - LR * g) for p, g in zip(params, grads)]
        n = len(params)
        if args.state == "full":  # the full checkpoint tensors: keep the parameter's piece
            state = [_state_piece(s, p, args.bug == "state-offset") for s, p in zip(state, params * 2)]
        exp_avg = [_like(p, s).clone() for p, s in zip(params, state[:n])]
        exp_avg_sq = [_like(p, s).clone() for p, s in zip(params, state[n : 2 * n])]
        new = [p.detach().clone() for p in params]
        # AdamW reads the step count with .item(): a real (untraced) tensor, the step after `steps_done`
        steps = [torch.tensor(float(STEPS_DONE)) for _ in params]
        adamw(new, grads, exp_avg, exp_avg_sq, [], steps, foreach=False, capturable=False,
              amsgrad=False, beta1=0.9, beta2=0.999, lr=LR, weight_decay=0.01, eps=1e-8, maximize=False)
        return [loss] + [_local(t) for t in [*new, *exp_avg, *exp_avg_sq]]

    step._orig_mod = model
    return step, names





def _state_piece(full, param, from_zero: bool):
    """The piece of a full optimizer state that the DTensor ``param``'s rank holds, by ``narrow``
    (rank * size, size) along the shard axis; ``from_zero`` is the bug ``state-offset`` (offset 0)."""
    from torch.distributed.tensor import Shard

    if not hasattr(param, "placements"):
        return full
    (placement,) = param.placements
    if not isinstance(placement, Shard):
        return full
    size = param.to_local().shape[placement.dim]
    start = 0 if from_zero else param.device_mesh.get_local_rank() * size  # BUG (state-offset): 0
    return full.narrow(placement.dim, start, size)


def _replicated(t) -> bool:
    """A DTensor replicated on every mesh dimension."""
    from torch.distributed.tensor import Replicate

    return hasattr(t, "placements") and all(isinstance(p, Replicate) for p in t.placements)


def _family(args):
    """The producer module that builds the model: export_moe for MoE models, else export_hf_tp."""
    return moe if args.model in moe.FAMILIES else hf


def expert_parallelize(model, cfg, args, world: int) -> dict:
    """Apply Hugging Face's expert parallelism to ``model`` as scripts/export_moe.py does for
    ``mixtral_ep2`` (``base_model_ep_plan`` by ``apply_expert_parallelism``, ``AllReduceEP``),
    with the step's bug (if any) as its own ``EPImplementation`` in layer 1. Returns the plan
    ({fqn: style}) for case.yaml."""
    from torch.distributed.device_mesh import DeviceMesh
    from transformers.distributed.expert_parallel import EPImplementationInterface, apply_expert_parallelism

    mesh = DeviceMesh("cpu", list(range(world)))
    plans, impls, desc = moe.ep_plan(cfg, argparse.Namespace(bug=None))
    if args.bug in EP_BUGS:
        EPImplementationInterface.register(f"shardlog_step_bug_{args.bug}", _buggy_ep(args.bug))
        layer = int(EP_BUG_MODULE.split(".")[2])
        impls[layer] = f"shardlog_step_bug_{args.bug}"
        desc[EP_BUG_MODULE] = f"ep_dispatch_experts (ep_implementation={impls[layer]!r})  # BUG"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, plan in plans.items():
            apply_expert_parallelism(model, mesh, mesh, plan, ep_implementation=impls[i])
    return desc


def _buggy_ep(bug):
    """Hugging Face's ``AllReduceEP`` (transformers 5.x, ``expert_parallel.py``) with one line changed."""
    import torch
    from transformers.distributed.expert_parallel import AllReduceEP
    from transformers.distributed.parallel_utils import _AllReduceBackward, _AllReduceForward

    class BuggyAllReduceEP(AllReduceEP):
        def __call__(self, hidden_states, top_k_index, top_k_weights):
            ep_group = self.ep_mesh.get_group()
            hidden_states = _AllReduceBackward.apply(hidden_states, ep_group)
            if bug != "router-grad-not-reduced":  # BUG (one line): this line is dropped
                top_k_weights = _AllReduceBackward.apply(top_k_weights, ep_group)
            off_rank = (top_k_index // self.num_local_experts) != self.ep_mesh.get_local_rank()
            local_index = torch.where(off_rank, self.num_local_experts, top_k_index % self.num_local_experts)
            expert_output = self.experts_forward(hidden_states, local_index, top_k_weights.masked_fill(off_rank, 0.0))
            return _AllReduceForward.apply(expert_output, ep_group)

    return BuggyAllReduceEP


def trace_step(model, args, world_size, inputs):
    for p in model.parameters():
        p.requires_grad_(True)
    step, names = step_fn(model, args, world_size)
    return make_fx_step(step, model, inputs), names





def produce(args):
    import onnx
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    cfg, sd, _, _ = _family(args).build_base_state(args)
    ids, labels = batch(args, cfg)
    num_items = torch.tensor(float((labels[:, 1:] != -100).sum()))
    model = _family(args).fresh_model(args, cfg, sd)
    state_names = []
    state = []
    if args.optimizer == "adamw":
        g = torch.Generator().manual_seed(args.seed + 11)
        for kind in ("exp_avg", "exp_avg_sq"):
            for name, p in model.named_parameters():
                state_names.append(f"state.{kind}.{name}")
                state.append(torch.rand(p.shape, generator=g) * (0.01 if kind == "exp_avg" else 1e-4))
    input_names = ["input_ids", "labels", *([] if args.form == "trainer" else ["num_items_in_batch"]), *state_names]
    param_names = [name for name, _ in model.named_parameters()]
    output_names = ["loss", *[f"updated.{p}" for p in param_names], *[f"updated.{s}" for s in state_names]]
    case = getattr(args, "case", None) or out.name
    meta = {"model": _family(args).FAMILIES[args.model][1], "case": case}

    ep_desc = {}

    def one(rank, world):
        data = world > 1 and args.parallel == "data"
        rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world) if data else slice(None)
        model = _family(args).fresh_model(args, cfg, sd)
        local_state = state
        if world > 1 and args.parallel == "tensor":
            hf.reset_dtensor_caches()
            from torch.distributed.device_mesh import DeviceMesh
            from torch.distributed.tensor.parallel import parallelize_module

            # the plan is always the correct one: the step's bugs are in the step, not the plan
            mesh = DeviceMesh("cpu", list(range(world)))
            plan, _ = hf.tp_plan(argparse.Namespace(**{**vars(args), "bug": None}), cfg, mesh)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parallelize_module(model, mesh, plan, src_data_rank=None)
            params = [p for _, p in model.named_parameters()] * 2  # exp_avg, exp_avg_sq
            if args.state != "full":  # "full": every rank gets the whole state (the step narrows it)
                local_state = [_local_chunk(s, p) for s, p in zip(state, params)]
        expert = world > 1 and args.parallel == "expert"
        if expert:
            ep_desc.update(expert_parallelize(model, cfg, args, world))
            params = [p for _, p in model.named_parameters()] * 2  # exp_avg, exp_avg_sq: the experts' Shard(0)
            local_state = [_local_chunk(s, p) for s, p in zip(state, params)]
        inputs = [ids[rows], labels[rows], *([] if args.form == "trainer" else [num_items]), *local_state]
        # HF's combine and its backward call the in-place dist.all_reduce: traced as the functional one
        with moe.functional_all_reduce() if expert else contextlib.nullcontext():
            gm, _ = trace_step(model, args, world, inputs)
        names = _constant_names(gm, model)
        kind = "expert-parallel" if expert else "data-parallel"
        doc = f"training step, {'sequential' if world == 1 else f'{kind} rank {rank}/{world}'}"
        return export_step(gm, inputs, input_names, output_names, names, rank=rank, world_size=world,
                           meta={**meta, "doc": doc}), inputs

    if dist.is_initialized():
        dist.destroy_process_group()
    seq, seq_inputs = one(-1, 1)
    onnx.save(seq, out / "seq.onnx")
    ranks = []
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            proto, _ = one(r, n)
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)

    import onnxruntime as ort

    feeds = {k: v.numpy() for k, v in zip(input_names, seq_inputs)}
    seq_loss = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    with torch.no_grad():
        eager_model = _family(args).fresh_model(args, cfg, sd)
        eager = eager_model(input_ids=ids, labels=labels, num_items_in_batch=num_items).loss
    err = float(np.max(np.abs(np.asarray(seq_loss) - eager.numpy())))
    print(f"  sequential step's loss (onnxruntime) vs eager torch: {err:.3g}")
    parallel = args.parallel if args.form in ("tp", "trainer") else f"{args.parallel}+{args.form}"
    hf.write_yaml(out / "case.yaml", {
        "model": {"hf_class": meta["model"], "config": _family(args).config_summary(cfg, args),
                  "batch": BATCH, "seq_len": hf.SEQ_LEN},
        "training_step": {"parallel": parallel, "optimizer": args.optimizer, "clip": bool(args.clip), "lr": LR,
                          **({"micro_batches": args.accum} if args.accum > 1 else {}),
                          **({"loss": "Hugging Face Trainer, average_tokens_across_devices: token count gathered "
                                      "and summed, loss *= world size, DDP's average (grad / N, all-reduce)"}
                             if args.form == "trainer" else {}),
                          **({"optimizer_state": "full, narrowed in the step"} if args.state == "full" else {})},
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug].format(m=EP_BUG_MODULE if args.bug in EP_BUGS else BUG_PARAM) if args.bug else None,
        "bug_module": BUG_PARAM.rsplit(".", 1)[0] if args.bug == "missing-grad-allreduce"
        else EP_BUG_MODULE if args.bug in EP_BUGS else None,
        **({"ep_plan": ep_desc} if ep_desc else {}),
        "seq_loss_vs_torch_max_abs_error": err,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": f"python scripts/export_train_step.py --case {case}",
    })


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(PRESETS), required=True)
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--out", default=None, help="output folder (default examples/<case>)")
    args_in = p.parse_args(argv)
    preset = PRESETS[args_in.case]
    args = (moe.parse if preset.get("model") in moe.FAMILIES else hf.parse)([])
    args.world_size = args_in.world_size
    args.optimizer, args.clip, args.bug, args.parallel, args.form = "sgd", False, None, "data", "tp"
    args.accum = 1
    args.state = "local"
    for k, v in preset.items():
        setattr(args, k, v)
    args.out = args_in.out or str(REPO / "examples" / args_in.case)
    args.case = args_in.case  # case.yaml names the preset, also when --out writes elsewhere
    produce(args)


if __name__ == "__main__":
    main()
