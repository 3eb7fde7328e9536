"""Parallel forms beyond the model's ``base_model_tp_plan``, for ``export_hf_tp.py``.

Every plan here is built only from PyTorch's own parallel styles
(``torch.distributed.tensor.parallel``) applied to UNMODIFIED Hugging Face decoder models
(``LlamaForCausalLM``, ``Qwen2ForCausalLM``, ``MistralForCausalLM``, ``Gemma2ForCausalLM``; hidden states are
``[B, S, H]``):

* ``sp``: sequence parallelism, the torchtitan Llama plan
  (``torchtitan/models/llama3/infra/parallelize.py``, ``apply_tp``): the residual stream is
  ``Shard(1)`` (sequence) between the blocks; ``SequenceParallel()`` on every RMSNorm;
  ``PrepareModuleInput`` all-gathers the sequence in front of attention and MLP
  (``Shard(1) -> Replicate()``); ``o_proj`` / ``down_proj`` are
  ``RowwiseParallel(output_layouts=Shard(1))`` (reduce-scatter onto the sequence axis);
  ``embed_tokens`` is ``RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1))``
  (a vocab-parallel table: masked lookup, reduce-scatter) and ``lm_head`` is
  ``ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())``. HF computes the
  rotary tables and the causal mask from ``inputs_embeds.shape``, so the residual stream stays
  a DTensor (global shape ``[B, S, H]``): ``use_local_output=False`` on the styles that produce
  it (torchtitan passes positions explicitly and can use local tensors).
* ``vocab``: the base plan, but ``embed_tokens`` is ``RowwiseParallel(input_layouts=Replicate())``
  (vocab-sharded table ``[V/N, H]``; DTensor's ``_MaskPartial``: ids outside the rank's range
  masked, looked up, zeroed, all-reduced) and ``lm_head`` is
  ``ColwiseParallel(use_local_output=False)``: the logits stay a vocab-sharded DTensor and the
  caller gathers them (``logits.full_tensor()``, see ``export_hf_tp.trace``).
* ``tp``: the model's ``base_model_tp_plan`` (``export_hf_tp.tp_plan``), also used for GQA at
  TP 4 (4 kv heads, one per rank).

Bug variants (``BUGS``) are one-line changes of these plans, of a parallel style, or (where
DTensor cannot express the mistake) of one rank's exported graph (``patch_rank``); each
docstring says which line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx

FORMS = ("tp", "sp", "vocab")

#: bug id -> description ({m}: the module of the bug); the case.yaml ``bug`` text
BUGS = {
    "extra_allreduce": "{m} is planned PrepareModuleInput(input_layouts=(Partial(),), "
    "desired_input_layouts=(Replicate(),), use_local_output=True) although its input (the "
    "post-attention RMSNorm's output) is already replicated: the all-reduce multiplies it by world_size",
    "vocab_offset": "rank 1's vocab-parallel lookup in {m} starts its vocabulary range one row early "
    "(rows [V/N - 1, V - 1) instead of [V/N, V)); DTensor computes the range itself, so the range "
    "constants of rank1.onnx were patched after export (tp_forms.patch_rank)",
    "gather_axis": "{m} gathers its vocab-sharded logits with all_gather_tensor(local, 0) (stacked "
    "on the batch axis) and views the stack as [B, S, V] instead of concatenating the chunks "
    "along the vocab axis",
    "bs_transposed": "{m} gathers its sequence-sharded input Megatron-style (all-gather on dim 0 of "
    "[S, B, H]) but turns [B, S/N, H] into [S/N, B, H] with view() instead of transpose(0, 1): "
    "B and S are mixed up before the gather",
    "reshape_shard": "{m} flattens its sequence-sharded input to tokens [B*S/N, H], all-gathers them "
    "and views the stack [N*B*S/N, H] as [B, S, H]: the rank factor lands on the batch axis "
    "instead of the sequence axis",
    "norm_partial": "row-parallel {m} keeps its output a local partial sum: planned as "
    "RowwiseParallel(output_layouts=Partial()) instead of RowwiseParallel() (a Llama-style deferral of the "
    "all-reduce past the residual add), but Gemma2 normalizes the attention output before the residual add "
    "(sandwich norm), so post_attention_layernorm computes the RMS of one rank's partial sum",
    "collective_order": "rank 1 runs a stale plan for {m}: RowwiseParallel(use_local_output=False) "
    "(tensor parallel, all-reduce) instead of RowwiseParallel(output_layouts=Shard(1), "
    "use_local_output=False) (sequence parallel, reduce-scatter), so the ranks' collectives stop "
    "pairing there: rank 0 reduce-scatters [N*B, S/N, H] while rank 1 all-reduces [B, S, H]",
}
#: bug id -> the module where it lives (default of --bug-module)
DEFAULT_BUG_MODULE = {
    "extra_allreduce": "model.layers.1.mlp",
    "vocab_offset": "model.embed_tokens",
    "gather_axis": "lm_head",
    "bs_transposed": "model.layers.0.self_attn",
    "reshape_shard": "model.layers.1.mlp",
    "collective_order": "model.layers.1.mlp.down_proj",
    "norm_partial": "model.layers.1.self_attn.o_proj",
}
#: bug id -> the forms (--form) whose plan it changes
BUG_FORMS = {
    "extra_allreduce": ("tp", "vocab"),
    "vocab_offset": ("vocab",),
    "gather_axis": ("tp", "vocab"),
    "bs_transposed": ("sp",),
    "reshape_shard": ("sp",),
    "collective_order": ("sp",),
    "norm_partial": ("tp",),
}
#: bugs made by patching one rank's exported graph (DTensor cannot express them)
PATCHED = {"vocab_offset"}

_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2)
_SP = dict(model="llama", world_size=2, form="sp", batch=2, **_SMALL)
_VOCAB = dict(model="qwen2", world_size=2, form="vocab", **_SMALL)
_GEMMA2 = dict(model="gemma2", world_size=2, **_SMALL)
#: preset name -> export_hf_tp arguments (merged into export_hf_tp.PRESETS)
PRESETS = {
    "llama_tp2_sp": _SP,
    "qwen2_tp2_vocab": _VOCAB,
    # GQA, 8 query heads and 4 kv heads at TP 4: one kv head and two query heads per rank
    "qwen2_tp4_gqa": dict(model="qwen2", world_size=4, **{**_SMALL, "hidden": 64, "heads": 8, "kv_heads": 4}),
    **{f"qwen2_tp2_vocab_bug_{b}": {**_VOCAB, "bug": b} for b in ("extra_allreduce", "vocab_offset", "gather_axis")},
    **{f"llama_tp2_sp_bug_{b}": {**_SP, "bug": b} for b in ("bs_transposed", "reshape_shard", "collective_order")},
    # Gemma2's sandwich norms: a norm reads the row-parallel output before the residual add
    "gemma2_tp2": _GEMMA2,
    "gemma2_tp2_bug_norm_partial": {**_GEMMA2, "bug": "norm_partial"},
}


def sp_plan(cfg):
    """The torchtitan sequence-parallel plan for an HF decoder (module docstring).

    Returns:
        ({module fqn: ParallelStyle}, {module fqn: description for case.yaml}).
    """
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
    )

    plan, desc = {}, {}

    def put(fqn, style, text):
        plan[fqn], desc[fqn] = style, text

    put("model.embed_tokens",
        RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1), use_local_output=False),
        "RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1), use_local_output=False)")
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        put(p + "input_layernorm", SequenceParallel(), "SequenceParallel()")
        put(p + "self_attn",
            PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                               desired_input_kwarg_layouts={"hidden_states": Replicate()}),
            "PrepareModuleInput(input_kwarg_layouts={'hidden_states': Shard(1)}, "
            "desired_input_kwarg_layouts={'hidden_states': Replicate()})")
        for proj in ("q_proj", "k_proj", "v_proj"):
            put(p + "self_attn." + proj, ColwiseParallel(), "ColwiseParallel()")
        put(p + "self_attn.o_proj", RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
            "RowwiseParallel(output_layouts=Shard(1), use_local_output=False)")
        put(p + "post_attention_layernorm", SequenceParallel(), "SequenceParallel()")
        put(p + "mlp", PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),))")
        for proj in ("gate_proj", "up_proj"):
            put(p + "mlp." + proj, ColwiseParallel(), "ColwiseParallel()")
        put(p + "mlp.down_proj", RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
            "RowwiseParallel(output_layouts=Shard(1), use_local_output=False)")
    put("model.norm", SequenceParallel(), "SequenceParallel()")
    put("lm_head", ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()),
        "ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())")
    return plan, desc


def vocab_plan(cfg, base_plan, base_desc):
    """The base TP plan with a vocab-parallel embedding and DTensor logits (module docstring)."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan, desc = dict(base_plan), dict(base_desc)
    plan["model.embed_tokens"] = RowwiseParallel(input_layouts=Replicate())
    desc["model.embed_tokens"] = "RowwiseParallel(input_layouts=Replicate())"
    plan["lm_head"] = ColwiseParallel(use_local_output=False)
    desc["lm_head"] = "ColwiseParallel(use_local_output=False)  # logits.full_tensor() by the caller"
    return plan, desc


class _SequenceGather:
    """Hand-written all-gather of a module's sequence-sharded input ``[B, S/N, H]`` (a
    ``Shard(1)`` DTensor) into the plain replicated ``[B, S, H]`` tensor the module computes on,
    as ports of Megatron-LM's ``gather_from_sequence_parallel_region`` do; replaces a
    ``PrepareModuleInput(Shard(1) -> Replicate())``. ``how(local, mesh)`` does the gather.
    """

    def __init__(self, how, kwarg=None):
        self.how, self.kwarg = how, kwarg

    def __call__(self, module, device_mesh):
        def pre_hook(mod, args, kwargs):
            if self.kwarg is not None:
                kwargs = {**kwargs, self.kwarg: self.how(kwargs[self.kwarg].to_local(), device_mesh)}
            else:
                args = (self.how(args[0].to_local(), device_mesh), *args[1:])
            return args, kwargs

        module.register_forward_pre_hook(pre_hook, with_kwargs=True)
        return module


def _gather_view_not_transpose(x, mesh):
    """[B, S/N, H] -> Megatron's [S/N, B, H] -> all-gather dim 0 -> [S, B, H] -> [B, S, H]."""
    from torch.distributed._functional_collectives import all_gather_tensor

    b, s, h = x.shape
    sbh = x.view(s, b, h)  # BUG (one line): was x.transpose(0, 1).contiguous()
    return all_gather_tensor(sbh, 0, mesh).transpose(0, 1)


def _gather_tokens_viewed(x, mesh):
    """[B, S/N, H] -> tokens [B*S/N, H] -> all-gather dim 0 -> [N*B*S/N, H] -> [B, S, H]."""
    from torch.distributed._functional_collectives import all_gather_tensor

    b, s, h = x.shape
    stack = all_gather_tensor(x.reshape(b * s, h), 0, mesh)  # rows ordered (rank, batch, position)
    # BUG (one line): was stack.view(-1, b, s, h).transpose(0, 1).reshape(b, -1, h)
    return stack.view(b, -1, h)


def _style(fn):
    """A ParallelStyle that applies ``fn(module, device_mesh)`` (and returns the module)."""
    from torch.distributed.tensor.parallel.style import ParallelStyle

    class _FnStyle(ParallelStyle):
        def _apply(self, module, device_mesh):
            return fn(module, device_mesh)

    return _FnStyle()


def apply_bug(bug, module, plan, desc, form):
    """Change the entries of ``plan`` (and their description) for bug ``bug`` in ``module``.

    Bugs in ``PATCHED`` leave the plan alone (see ``patch_rank``).

    Raises:
        SystemExit: the bug does not apply to parallel form ``form`` (``BUG_FORMS``).
    """
    if form not in BUG_FORMS[bug]:
        raise SystemExit(f"--bug {bug} needs --form {' or '.join(BUG_FORMS[bug])}")
    import torch.distributed as dist
    from torch.distributed.tensor import Partial, Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel

    if bug == "extra_allreduce":
        plan[module] = PrepareModuleInput(
            input_layouts=(Partial(),), desired_input_layouts=(Replicate(),), use_local_output=True
        )
        desc[module] = ("PrepareModuleInput(input_layouts=(Partial(),), desired_input_layouts=(Replicate(),), "
                        "use_local_output=True)  # BUG")
    elif bug == "norm_partial":
        plan[module] = RowwiseParallel(output_layouts=Partial())  # BUG (one line): was RowwiseParallel()
        desc[module] = "RowwiseParallel(output_layouts=Partial())  # BUG"
    elif bug == "vocab_offset":
        desc[module] += "  # BUG: rank 1's range constants patched after export"
    elif bug == "gather_axis":

        class StackedLogitsColwise(ColwiseParallel):
            """ColwiseParallel whose output gather is written by hand."""

            @staticmethod
            def _prepare_output_fn(output_layouts, use_local_output, mod, outputs, device_mesh):
                from torch.distributed._functional_collectives import all_gather_tensor

                local = outputs.to_local()  # [B, S, V/N]
                stack = all_gather_tensor(local, 0, device_mesh)  # [N*B, S, V/N], ranks stacked on dim 0
                # BUG (one line): was torch.cat(torch.chunk(stack, device_mesh.size(), dim=0), dim=-1)
                return stack.view(*local.shape[:-1], -1)

        plan[module] = StackedLogitsColwise()
        desc[module] = "ColwiseParallel() with a hand-written gather: all_gather_tensor(local, 0).view(B, S, V)  # BUG"
    elif bug == "bs_transposed":
        plan[module] = _style(_SequenceGather(_gather_view_not_transpose, kwarg="hidden_states"))
        desc[module] = "hand-written sequence gather: view(S/N, B, H) instead of transpose(0, 1)  # BUG"
    elif bug == "reshape_shard":
        plan[module] = _style(_SequenceGather(_gather_tokens_viewed))
        desc[module] = "hand-written sequence gather of the flattened tokens, viewed as [B, S, H]  # BUG"
    elif bug == "collective_order":
        if dist.get_rank() == 1:
            plan[module] = RowwiseParallel(use_local_output=False)  # BUG: rank 1 only, the pre-SP plan line
        desc[module] = ("rank 0: RowwiseParallel(output_layouts=Shard(1), use_local_output=False); "
                        "rank 1: RowwiseParallel(use_local_output=False)  # BUG")
    else:
        raise SystemExit(f"unknown bug {bug}")


def patch_rank(proto: onnx.ModelProto, rank: int, bug: str, module: str) -> onnx.ModelProto:
    """Apply a ``PATCHED`` bug to rank ``rank``'s exported graph (other ranks are unchanged).

    ``vocab_offset``: on rank 1, the range [lo, hi) of the vocab-parallel lookup in ``module``
    (the scalar constants of its ``Less(ids, lo)``, ``GreaterOrEqual(ids, hi)`` and
    ``Sub(ids, lo)``) becomes [lo - 1, hi - 1): the same length, one row early.
    """
    import onnx
    from onnx import numpy_helper

    if bug != "vocab_offset" or rank != 1:
        return proto
    g = proto.graph
    inits = {t.name: t for t in g.initializer}
    patched = {}
    for node in g.node:
        scopes = next((m.value for m in node.metadata_props if m.key == "pkg.torch.onnx.name_scopes"), "")
        if f"'{module}'" not in scopes or node.op_type not in ("Less", "GreaterOrEqual", "Sub"):
            continue
        name = node.input[1]
        if name not in patched:
            old = numpy_helper.to_array(inits[name])
            new = numpy_helper.from_array(old - 1, f"{name}_patched_offset")
            g.initializer.append(new)
            patched[name] = new.name
        node.input[1] = patched[name]
    if len(patched) != 2:
        raise RuntimeError(f"vocab_offset: expected the lo and hi constants of {module}, found {sorted(patched)}")
    onnx.checker.check_model(proto)
    return proto
