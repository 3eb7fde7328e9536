"""A training step as a traced program: forward, loss, backward, gradient synchronization,
optimizer update; its outputs are the loss and every updated parameter (``updated.<name>``)
and optimizer state (``updated.state.<kind>.<name>``).

One step function (:func:`train_step`) makes the sequential step, a data-parallel replica's,
a tensor-parallel rank's and a TP x DP mesh rank's, so the programs differ only where the
parallelism makes them differ:

- the loss is Hugging Face's ``ForCausalLMLoss`` normalized by the target-token count of the
  *whole* batch, passed in as ``num_items_in_batch`` (as its Trainer does across devices), so
  each data-parallel replica's loss and gradients are partial sums of the sequential ones;
- gradients come from ``torch.autograd.grad``; under data parallelism each is all-reduced over
  the data-parallel group (DDP's bucketed all-reduce without the buckets; on a
  tensor-parallel model, the local gradient summed and placed back with its own placement);
- optional gradient-norm clipping with ``torch.nn.utils.clip_grads_with_norm_`` semantics
  written out (the norm of all gradients, one scale);
- SGD in place as ``torch.optim.SGD`` does (``param.add_(grad, alpha=-lr)``: a DTensor keeps
  its placement, so a Partial gradient of a replicated parameter is all-reduced first), or
  AdamW through ``torch.optim._functional.adamw`` (the function ``torch.optim.AdamW.step``
  calls), its state (``exp_avg``, ``exp_avg_sq``) entering as graph inputs
  ``state.<kind>.<param>`` (each rank its parameter's piece) and leaving updated.

:func:`make_fx_step` traces a step with ``make_fx`` down to ATen ops and gives its backward and
optimizer ops module scopes and source lines (:mod:`analyzer.export.backward_scopes`);
:func:`export_step` turns it into ONNX with :mod:`analyzer.export.pipeline`.

Needs the ``export`` extra (torch, transformers, onnxscript).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = [
    "INPUT_NAMES",
    "TrainOptions",
    "adamw_state",
    "export_step",
    "labelled_batch",
    "like",
    "local",
    "local_chunk",
    "make_fx_step",
    "step_constant_names",
    "step_names",
    "train_step",
]

#: the step's first inputs; AdamW's state follows
INPUT_NAMES = ("input_ids", "labels", "num_items_in_batch")


@dataclass(frozen=True)
class TrainOptions:
    """What the step does after the backward.

    Attributes:
        optimizer: ``"sgd"`` or ``"adamw"`` (betas 0.9, 0.999, weight decay 0.01, eps 1e-8).
        clip: the maximum gradient norm (``clip_grads_with_norm_``); None: no clipping.
        lr: the learning rate.
        steps_done: AdamW's step count before this step (its bias corrections read it).
        seed: seed of AdamW's initial state (:func:`adamw_state`).
    """

    optimizer: str = "sgd"
    clip: float | None = None
    lr: float = 0.05
    steps_done: int = 3
    seed: int = 0


def local(t):
    """A DTensor's local shard, any other tensor itself."""
    return t.to_local() if hasattr(t, "to_local") else t


def like(param, state):
    """An optimizer state input (the rank's local tensor) placed like its DTensor parameter."""
    if not hasattr(param, "placements"):
        return state
    from torch.distributed.tensor import DTensor

    return DTensor.from_local(state, param.device_mesh, param.placements, run_check=False)


def local_chunk(full, param):
    """The rank's local piece of a full tensor laid out like the DTensor ``param`` (one mesh
    dimension: ``Shard(d)`` -> chunk ``rank`` along ``d``; ``Replicate`` -> all of it)."""
    from torch.distributed.tensor import Shard

    if not hasattr(param, "placements"):
        return full
    (placement,) = param.placements
    if isinstance(placement, Shard):
        return full.chunk(param.device_mesh.size(), placement.dim)[param.device_mesh.get_local_rank()].contiguous()
    return full


def labelled_batch(vocab_size: int, batch: int, seq_len: int, seed: int):
    """``(input_ids, labels, num_items_in_batch)`` of a causal-LM step: random token ids
    ``[batch, seq_len]`` (seeded), labels equal to them with the first half of row 0 ignored
    (-100, as padding) so rows hold different token counts, and the count of target tokens of
    the whole batch (labels are shifted by one inside the loss)."""
    import torch

    g = torch.Generator().manual_seed(seed + 7)
    ids = torch.randint(0, vocab_size, (batch, seq_len), generator=g, dtype=torch.int64)
    labels = ids.clone()
    if batch > 1:
        labels[0, : max(1, seq_len // 2)] = -100
    num_items = torch.tensor(float((labels[:, 1:] != -100).sum()))
    return ids, labels, num_items


def adamw_state(model, opts: TrainOptions) -> tuple[list[str], list]:
    """AdamW's state before the step, full size: names ``state.exp_avg.<param>`` then
    ``state.exp_avg_sq.<param>``, and seeded small positive tensors (none for SGD)."""
    import torch

    names, state = [], []
    if opts.optimizer == "adamw":
        g = torch.Generator().manual_seed(opts.seed + 11)
        for kind in ("exp_avg", "exp_avg_sq"):
            for name, p in model.named_parameters():
                names.append(f"state.{kind}.{name}")
                state.append(torch.rand(p.shape, generator=g) * (0.01 if kind == "exp_avg" else 1e-4))
    return names, state


def step_names(model, opts: TrainOptions) -> tuple[list[str], list[str]]:
    """(input names, output names) of the step of ``model``."""
    state_names, _ = adamw_state(model, opts)
    params = [f"updated.{n}" for n, _ in model.named_parameters()]
    return [*INPUT_NAMES, *state_names], ["loss", *params, *[f"updated.{s}" for s in state_names]]


def train_step(model, opts: TrainOptions, dp_group=None, grad_group=None, unsynced: Collection[str] = ()):
    """The step ``(input_ids, labels, num_items_in_batch, *state) -> [loss, *updated params,
    *updated state]`` of a Hugging Face causal LM (module docstring).

    Args:
        model: the model (tensor-parallel parameters are DTensors).
        opts: optimizer and clipping.
        dp_group: the data-parallel process group or 1-D device mesh the loss and gradients are
            all-reduced over (None: no data parallelism).
        grad_group: the group the gradients are all-reduced over (default ``dp_group``).
        unsynced: parameter names whose gradients are not all-reduced (left out of DDP's buckets).
    """
    import torch
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.tensor import DTensor
    from torch.optim._functional import adamw

    names = [n for n, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    grad_group = grad_group if grad_group is not None else dp_group

    def all_reduce_grad(g):
        if isinstance(g, DTensor):  # DDP on a TP model: the local gradient summed, placed back
            summed = funcol.all_reduce(g.to_local(), "sum", grad_group)
            return DTensor.from_local(summed, g.device_mesh, g.placements, run_check=False)
        return funcol.all_reduce(g, "sum", grad_group)

    def step(input_ids, labels, num_items, *state):
        out = model(input_ids=input_ids, labels=labels, num_items_in_batch=num_items, use_cache=False)
        grads = list(torch.autograd.grad(out.loss, params))
        loss = out.loss.detach()
        if dp_group is not None:
            grads = [g if name in unsynced else all_reduce_grad(g) for name, g in zip(names, grads)]
            loss = funcol.all_reduce(loss, "sum", dp_group)
        if opts.clip is not None:  # clip_grads_with_norm_: one scale from the norm of all gradients
            total = sum((g * g).sum() for g in grads).sqrt()
            scale = torch.clamp(opts.clip / (total + 1e-6), max=1.0)
            # parameters outside the tp plan (the norms) are plain tensors
            grads = [g * (scale if hasattr(g, "placements") else local(scale)) for g in grads]
        if opts.optimizer == "sgd":
            return [loss] + [local(p.detach().clone().add_(g, alpha=-opts.lr)) for p, g in zip(params, grads)]
        n = len(params)
        exp_avg = [like(p, s).clone() for p, s in zip(params, state[:n])]
        exp_avg_sq = [like(p, s).clone() for p, s in zip(params, state[n : 2 * n])]
        new = [p.detach().clone() for p in params]
        steps = [torch.tensor(float(opts.steps_done)) for _ in params]  # read with .item(): untraced
        adamw(new, grads, exp_avg, exp_avg_sq, [], steps, foreach=False, capturable=False, amsgrad=False,
              beta1=0.9, beta2=0.999, lr=opts.lr, weight_decay=0.01, eps=1e-8, maximize=False)  # fmt: skip
        return [loss] + [local(t) for t in [*new, *exp_avg, *exp_avg_sq]]

    step._orig_mod = model
    return step


def make_fx_step(step, model, inputs: Sequence):
    """``make_fx`` of a training step ``(inputs) -> [loss, *updated params, *updated states]``
    down to ATen ops, with module scopes and source lines on its backward and optimizer ops
    (:mod:`analyzer.export.backward_scopes`). Sets ``requires_grad`` on the model's parameters."""
    import torch
    from torch._decomp import get_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    from analyzer.export.backward_scopes import BackwardScopes
    from analyzer.export.pipeline import hf_tracing_patches

    for p in model.parameters():
        p.requires_grad_(True)
    step._orig_mod = model  # lets make_fx record nn_module_stack (module paths) of the forward
    aten = torch.ops.aten
    # backward ops the ONNX exporter has no function for, written out in core ATen ops
    decomp = get_decompositions([
        aten.silu_backward, aten._softmax_backward_data, aten._log_softmax_backward_data,
        aten.nll_loss_backward, aten.nll_loss_forward, aten.embedding_dense_backward, aten.slice_backward,
    ])  # fmt: skip
    with hf_tracing_patches(), warnings.catch_warnings(), BackwardScopes(model) as scopes:
        warnings.simplefilter("ignore")
        gm = make_fx(step, decomposition_table=decomp, record_module_stack=True, record_stack_traces=True)(*inputs)
    names = [n for n, _ in model.named_parameters()]
    outputs = list(gm.graph.nodes)[-1].args[0]
    scopes.annotate(gm, [None] + names * ((len(outputs) - 1) // len(names)))  # loss, then params and states
    return gm


def step_constant_names(gm, model) -> dict[str, str]:
    """Parameters and buffers by their module path; other traced constants (AdamW's step count,
    created inside the step) keep their own names."""
    from analyzer.export.pipeline import constant_names

    tensors = [local(t) for t in [*model.parameters(), *model.buffers()]]
    known = {(t.data_ptr(), tuple(t.shape)) for t in tensors}
    skip = {
        n.target
        for n in gm.graph.nodes
        if n.op == "get_attr" and (getattr(gm, n.target).data_ptr(), tuple(getattr(gm, n.target).shape)) not in known
    }
    names = constant_names(_WithoutScalars(gm, skip), model)
    names.update({t: t for t in skip})
    return names


class _WithoutScalars:
    """A view of a GraphModule whose graph skips the given get_attr targets."""

    def __init__(self, gm, skip):
        self._gm, self._skip = gm, skip
        self.graph = type("G", (), {"nodes": [n for n in gm.graph.nodes if n.target not in skip]})()

    def __getattr__(self, name):
        return getattr(self._gm, name)


def export_step(gm, inputs, input_names, output_names, names, *, rank: int, world_size: int, meta: dict):
    """A traced step as ONNX (:func:`analyzer.export.pipeline.export_onnx` for several inputs and
    outputs): collectives translated, constants named by module path, weights kept, the rank,
    world size and ``meta`` in the metadata."""
    import onnx

    from analyzer.export.pipeline import _optimize_keeping_weights, _rename_values, finish_model, torch_export

    prog = torch_export(gm, inputs, world_size, input_names, output_names)
    proto = prog.model_proto
    _rename_values(proto.graph, names)
    proto = _optimize_keeping_weights(proto, set(names.values()))
    proto = onnx.shape_inference.infer_shapes(proto)
    return finish_model(proto, rank, world_size, meta)
