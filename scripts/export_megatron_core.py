#!/usr/bin/env python
"""Export programs of UNMODIFIED NVIDIA Megatron-core (``megatron-core`` 0.16.1) layers: a GPT
model built from Megatron-core's own modules, sequentially (tensor_model_parallel_size=1) and
on N tensor-parallel ranks, through the package's export pipeline (``make_fx``,
``torch.onnx.export`` with collectives as ``com.microsoft`` ops, weights named by module path,
source frames kept: analyzer/export/pipeline.py) and ``export_hf_tp.py``'s simulator.

The model is ``megatron.core.models.gpt.GPTModel`` with the local (non Transformer-Engine)
layer spec ``get_gpt_layer_local_spec``: ``VocabParallelEmbedding`` + learned absolute
positions, ``TransformerLayer``\\ s (RMSNorm, ``SelfAttention`` with a fused ``linear_qkv``
``ColumnParallelLinear`` laid out per query group and a ``RowParallelLinear`` ``linear_proj``,
``MLP`` with a gated (SwiGLU) ``linear_fc1`` column-parallel with stride 2, i.e. each rank
holds chunk r of the gate block and chunk r of the up block, and a row-parallel
``linear_fc2``), biases on every linear layer (the row-parallel ones added after the
all-reduce, in ``bias_dropout_add``), a column-parallel ``output_layer``. Two heads (the
preset's ``head``):

* ``logits`` (``megatron_gpt_tp2*``): ``GPTModel(parallel_output=False)``, the output layer
  gathers the vocab-sharded logits (``_gather_along_last_dim``: all-gather on axis 0, chunk,
  concat on the vocab); input ``input_ids`` [B, S], output ``logits`` [B, S, V];
* ``loss`` (``megatron_gpt_tp2_loss*``): the vocab-sharded logits go to Megatron-core's own
  ``GPTModel.compute_language_model_loss`` (``vocab_parallel_cross_entropy``: the row max
  all-reduced with MAX, the targets masked to the rank's range, the predicted logit and the sum
  of exponentials all-reduced), called from a module ``loss`` (:func:`loss_head`) so that its
  nodes have a scope; inputs ``input_ids`` and ``labels`` [B, S], output the per-token ``loss``
  [B, S]. The sequential side is Megatron's same function at N = 1 (its target mask is the
  whole vocab), which the rules relate to the ranks' masked lookups (rules/parallel/vocab.dl).

The ids and the labels hold the first and last id of every rank's vocab range. The position
ids (``arange``) and the causal mask (``triu``, ``True`` = masked, Megatron's convention) are
made in the traced forward, as Megatron's ``get_ltor_masks_and_position_ids`` makes them.

How megatron-core runs here, unmodified, on a CPU and in one process:

* a ``fake`` process group (torch.testing._internal.distributed.fake_pg) of world size N with
  the rank set per export, and ``parallel_state.initialize_model_parallel(N,
  create_gloo_process_groups=False)`` on it (the fake backend has no gloo groups); the
  sequential side is the same code at N = 1 (every mapping in tensor_parallel/mappings.py
  bypasses a one-rank group);
* Megatron-core's in-place collectives (``torch.distributed.all_reduce(t, group=...)``, and
  the ``dist_all_gather_func`` it binds at import) traced as PyTorch's functional in-place
  collectives (``analyzer.export.collectives.functional_inplace_collectives``), so
  ``make_fx`` records ``_c10d_functional`` ops;
* ``initialize_rng_tracker(inference_rng_tracker=True)``: Megatron-core's own no-op RNG
  tracker for inference (the training tracker forks CUDA RNG states); dropout is 0;
* ``torch.cuda.current_device`` answers ``"cpu"`` while a model is built and traced
  (DotProductAttention takes its score buffer from the global memory buffer, which allocates
  on that device); no other CUDA call is reached;
* ``use_cpu_initialization=True``: Megatron-core builds every master weight on the CPU and
  keeps rank r's share (``_initialize_affine_weight_cpu``); the same seed gives the same master
  weights at N = 1 and N = 2, which the script asserts. Biases and norm weights, which
  Megatron initializes to 0 and 1, are then drawn at random on the sequential model (a bias
  bug must show) and each rank takes its share by the partition attributes Megatron-core puts
  on the parameter (``partition_dim``, ``partition_stride``: the split of
  ``_initialize_affine_weight_cpu``).

Bugs (one line each, in how this script configures Megatron-core or a one-line monkeypatch that
mimics a one-line source bug; applied to the ranks only):

* ``missing_allreduce``: ``decoder.layers.1.mlp.linear_fc2.explicit_expert_comm = True`` — the
  flag Megatron's MoE experts set to do their own communication, set on a dense layer: the
  ``RowParallelLinear`` returns its partial sums without the all-reduce (layers.py:
  ``if self.explicit_expert_comm: output_ = output_parallel``);
* ``bias_every_rank``: ``decoder.layers.0.self_attention.linear_proj``'s local matmul is given
  the bias (a one-line monkeypatch of the instance's ``_forward_impl`` that mimics the one-line
  source bug ``bias=self.bias`` instead of ``bias=None`` in ``RowParallelLinear.forward``):
  every rank adds the bias before the all-reduce, so it is counted N more times;
* ``mask_end`` (the loss): ``VocabUtility.vocab_range_from_per_partition_vocab_size``, which
  ``vocab_parallel_cross_entropy`` calls at each call, replaced after the model is built by
  :func:`_inclusive_vocab_end`, Megatron's function with the one-line bug ``index_l = index_f +
  per_partition_vocab_size - 1`` (the embedding took its range at build time and keeps it).

Usage::

    python scripts/export_megatron_core.py --case megatron_gpt_tp2
    python scripts/export_megatron_core.py --case megatron_gpt_tp2_loss --out /tmp/loss
    python scripts/export_megatron_core.py --all
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BUGS = {
    "missing_allreduce": "decoder.layers.1.mlp.linear_fc2.explicit_expert_comm = True (the MoE experts' flag set on a "
    "dense RowParallelLinear): its partial sums are returned without the all-reduce over the tensor-parallel group",
    "bias_every_rank": "decoder.layers.0.self_attention.linear_proj's local matmul is given the bias (mimics the "
    "one-line source bug bias=self.bias instead of bias=None in RowParallelLinear.forward): every rank adds it "
    "before the all-reduce, and the bias is added again after it",
    "mask_end": "vocab_parallel_cross_entropy's vocab range end taken inclusive (index_l = index_f + "
    "per_partition_vocab_size - 1 in VocabUtility.vocab_range_from_per_partition_vocab_size): the last id of each "
    "rank's range is masked on every rank, so its predicted logit is 0",
}
#: the module each bug is in (the first discrepancy must be there)
BUG_MODULE = {
    "missing_allreduce": "decoder.layers.1.mlp.linear_fc2",
    "bias_every_rank": "decoder.layers.0.self_attention.linear_proj",
    "mask_end": "loss",
}
_GPT = dict(layers=2, hidden=32, ffn=64, heads=4, query_groups=2, vocab=64, seq=8, batch=1, seed=0, head="logits")
PRESETS = {
    "megatron_gpt_tp2": dict(_GPT),
    "megatron_gpt_tp2_bug_missing_allreduce": dict(_GPT, bug="missing_allreduce"),
    "megatron_gpt_tp2_bug_bias_every_rank": dict(_GPT, bug="bias_every_rank"),
    "megatron_gpt_tp2_loss": dict(_GPT, head="loss"),
    "megatron_gpt_tp2_loss_bug_mask_end": dict(_GPT, head="loss", bug="mask_end"),
}
#: the program's inputs and output, by head: the gathered logits [B, S, V] or the per-token loss [B, S]
SOURCE_LOSS = "megatron/core/tensor_parallel/cross_entropy.py"
INPUTS = {"logits": ("input_ids",), "loss": ("input_ids", "labels")}
OUTPUT = {"logits": "logits", "loss": "loss"}


@contextlib.contextmanager
def _cpu_device():
    """``torch.cuda.current_device()`` -> ``"cpu"`` (Megatron-core's global memory buffer
    allocates there); put back on exit."""
    import torch

    saved = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"
    try:
        yield
    finally:
        torch.cuda.current_device = saved


def _same_tensor(inp, requires_grad):
    """What ``megatron.core.utils._kernel_make_viewless_tensor`` computes, traceably: a tensor of
    ``inp``'s values (Megatron allocates ``empty((1,))`` and sets its ``.data`` to ``inp``'s, a
    memory-saving step that ``make_fx`` cannot see: it would trace the empty tensor)."""
    return inp


@contextlib.contextmanager
def _traceable_viewless():
    """Megatron-core's ``_kernel_make_viewless_tensor`` as :func:`_same_tensor` (put back on exit)."""
    import megatron.core.utils as mu

    saved = mu._kernel_make_viewless_tensor
    mu._kernel_make_viewless_tensor = _same_tensor
    try:
        yield
    finally:
        mu._kernel_make_viewless_tensor = saved


@contextlib.contextmanager
def model_parallel(world: int, rank: int):
    """A fake process group of ``world`` ranks as ``rank``, Megatron-core's model-parallel state
    on it (tensor parallel over all ranks), its inference RNG tracker, the CPU device, and its
    collectives traced as functional ones; all torn down on exit."""
    import torch.distributed as dist
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel import mappings
    from megatron.core.tensor_parallel.random import initialize_rng_tracker
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from analyzer.export.collectives import functional_inplace_collectives, reset_dtensor_caches

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    try:
        reset_dtensor_caches()
        parallel_state.initialize_model_parallel(tensor_model_parallel_size=world, create_gloo_process_groups=False)
        initialize_rng_tracker(inference_rng_tracker=True, force_reset=True)
        with _cpu_device(), _traceable_viewless(), functional_inplace_collectives(mappings), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        parallel_state.destroy_model_parallel()
        dist.destroy_process_group()


def build(args, world: int):
    """Megatron-core's GPTModel (local layer spec) at tensor-parallel size ``world``, seeded."""
    import torch
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_config import TransformerConfig

    cfg = TransformerConfig(
        num_layers=args.layers, hidden_size=args.hidden, ffn_hidden_size=args.ffn,
        num_attention_heads=args.heads, num_query_groups=args.query_groups,
        tensor_model_parallel_size=world, use_cpu_initialization=True, params_dtype=torch.float32,
        hidden_dropout=0.0, attention_dropout=0.0, init_method_std=0.1,
        normalization="RMSNorm", gated_linear_unit=True, activation_func=torch.nn.functional.silu,
        add_bias_linear=True,
    )  # fmt: skip
    torch.manual_seed(args.seed)
    spec = get_gpt_layer_local_spec(normalization="RMSNorm")
    # parallel_output=False: the output layer gathers the vocab-sharded logits (the loss keeps them sharded)
    model = GPTModel(cfg, spec, vocab_size=args.vocab, max_sequence_length=args.seq,
                     position_embedding_type="learned_absolute", parallel_output=args.head == "loss")
    if args.head == "loss":
        model.loss = loss_head(model.compute_language_model_loss)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, cfg


def randomize_non_weights(model, seed: int) -> None:
    """Biases and norm weights (Megatron-core initializes them to 0 and 1) drawn at random."""
    import torch

    g = torch.Generator().manual_seed(seed + 1)
    for name, p in model.named_parameters():
        if name.endswith(".bias") or "layernorm" in name:
            base = 1.0 if "layernorm" in name else 0.0
            p.copy_(base + 0.1 * torch.randn(p.shape, generator=g))


def rank_share(full, param, rank: int, world: int):
    """Rank ``rank``'s share of the sequential tensor ``full`` by Megatron-core's partition
    attributes on ``param``: replicated, or the split of ``_initialize_affine_weight_cpu``
    (chunks of ``size / stride`` along ``partition_dim``, chunks ``rank, rank + world, ...``)."""
    import torch

    if not getattr(param, "tensor_model_parallel", False):
        return full
    dim, stride = param.partition_dim, param.partition_stride
    chunks = torch.split(full, param.shape[dim] // stride, dim=dim)
    return torch.cat(chunks[rank::world], dim=dim)


def load_shares(model, full: dict, rank: int, world: int, *, check_weights: bool) -> None:
    """Every parameter of the rank's ``model`` set to its share of the sequential ``full`` state;
    ``check_weights``: Megatron-core's own initialization gave the same matrices (it must)."""
    import torch

    for name, p in model.named_parameters():
        share = rank_share(full[name], p, rank, world)
        if tuple(share.shape) != tuple(p.shape):
            raise SystemExit(f"{name}: share {tuple(share.shape)} vs parameter {tuple(p.shape)}")
        if check_weights and name.endswith(".weight") and "layernorm" not in name and not torch.equal(share, p):
            raise SystemExit(f"{name}: Megatron-core's initialization differs from the split of the sequential weight")
        p.copy_(share)


def _inclusive_vocab_end(per_partition_vocab_size, rank, world_size):
    """Megatron-core's ``VocabUtility.vocab_range_from_per_partition_vocab_size`` with the one-line
    bug ``index_l = index_f + per_partition_vocab_size - 1`` (the range end taken inclusive)."""
    index_f = rank * per_partition_vocab_size
    index_l = index_f + per_partition_vocab_size - 1  # BUG mask_end (one line): "- 1"
    return index_f, index_l


def apply_bug(model, bug: str | None, stack: contextlib.ExitStack) -> str:
    """The one-line bug on a rank's built model (undone when ``stack`` closes); returns the line."""
    if bug == "missing_allreduce":
        model.decoder.layers[1].mlp.linear_fc2.explicit_expert_comm = True  # BUG (one line)
        return "model.decoder.layers[1].mlp.linear_fc2.explicit_expert_comm = True"
    if bug == "bias_every_rank":
        proj = model.decoder.layers[0].self_attention.linear_proj
        proj._forward_impl = lambda impl=proj._forward_impl, **kw: impl(**{**kw, "bias": proj.bias})  # BUG (one line)
        return "linear_proj._forward_impl = lambda **kw: impl(**{**kw, 'bias': linear_proj.bias})"
    if bug == "mask_end":
        # the loss: vocab_parallel_cross_entropy asks VocabUtility for the rank's range at each call
        # (the embedding asked it once, when it was built: it keeps the correct range)
        from megatron.core.tensor_parallel.utils import VocabUtility

        saved = VocabUtility.vocab_range_from_per_partition_vocab_size
        VocabUtility.vocab_range_from_per_partition_vocab_size = staticmethod(_inclusive_vocab_end)  # BUG
        stack.callback(setattr, VocabUtility, "vocab_range_from_per_partition_vocab_size", saved)
        return "index_l = index_f + per_partition_vocab_size - 1 in vocab_range_from_per_partition_vocab_size"
    return ""


def loss_head(compute):
    """The module ``loss``: Megatron-core's own ``GPTModel.compute_language_model_loss(labels,
    logits)`` (``vocab_parallel_cross_entropy`` on the vocab-sharded logits [S, B, V/N]), called
    as ``GPTModel.forward`` calls it when given labels; a module of its own so that its nodes have
    a module scope (GPTModel computes the loss in its own forward, at the root). ``compute`` is
    the bound method (not a submodule: no cycle in ``named_modules``)."""
    import torch

    class LanguageModelLoss(torch.nn.Module):
        def forward(self, labels, logits_sbv):
            return compute(labels, logits_sbv)

    return LanguageModelLoss()


def _forward(model, seq: int):
    """The traced program: GPTModel(input_ids, position_ids, causal mask) -> the gathered logits
    [B, S, V], or (``model.loss``, labels given) the per-token loss [B, S] of its vocab-sharded
    logits (GPTModel returns them as [B, S, V/N]; the loss takes Megatron's [S, B, V/N])."""
    import torch

    def forward(input_ids, *labels):
        position_ids = torch.arange(seq, dtype=torch.int64).unsqueeze(0).expand_as(input_ids)
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)[None, None]
        logits = model(input_ids, position_ids, mask)
        if not labels:
            return logits
        return model.loss(labels[0], logits.transpose(0, 1))

    forward._orig_mod = model  # lets make_fx record nn_module_stack (module paths)
    return forward


def _trace(model, inputs, seq: int):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    with torch.no_grad():
        gm = make_fx(_forward(model, seq), record_module_stack=True, record_stack_traces=True)(*inputs)
    gm.eval()
    return gm


def _labels(ids, vocab: int, world: int):
    """Next-token labels with the first and last id of every rank's vocab range among them."""
    import torch

    labels = torch.roll(ids, -1, dims=-1).clone()
    chunk = vocab // world
    edges = [e for r in range(world) for e in (r * chunk, (r + 1) * chunk - 1)]
    labels.view(-1)[: len(edges)] = torch.tensor(edges, dtype=labels.dtype)
    return labels


def _export(model, inputs, *, rank, world, args, meta):
    from analyzer.export.pipeline import constant_names, export_onnx

    gm = _trace(model, inputs, args.seq)
    return export_onnx(gm, inputs, constant_names(gm, model), rank=rank, world_size=world, meta=meta,
                       input_names=INPUTS[args.head], output_names=(OUTPUT[args.head],))  # fmt: skip


def produce(args, command: str) -> dict:
    import megatron.core
    import onnx
    import onnxruntime as ort
    import torch

    from analyzer.export.collectives import collective_schemas

    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    g = torch.Generator().manual_seed(args.seed + 2)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g, dtype=torch.int64)
    chunk = args.vocab // n  # the first and last id of every rank's range among the tokens
    ids.view(-1)[: 2 * n] = torch.tensor([e for r in range(n) for e in (r * chunk, (r + 1) * chunk - 1)])
    inputs = (ids, _labels(ids, args.vocab, n)) if args.head == "loss" else (ids,)
    names, output = INPUTS[args.head], OUTPUT[args.head]
    meta = {"model": "megatron.core.models.gpt.GPTModel", "case": out.name}
    with collective_schemas():
        with model_parallel(1, 0):
            model, cfg = build(args, 1)
            randomize_non_weights(model, args.seed)
            full = {k: v.clone() for k, v in model.named_parameters()}
            # traced before any eager run: DotProductAttention's score buffer (Megatron's global
            # memory buffer, allocated at first use) is then made inside the trace, not a constant
            seq = _export(model, inputs, rank=-1, world=1, args=args,
                          meta={**meta, "doc": f"Megatron-core GPTModel sequential (shardlog example {out.name})"})
            with torch.no_grad():
                ref = _forward(model, args.seq)(*inputs)
        onnx.save(seq, out / "seq.onnx")
        ranks, bug_line = [], ""
        for r in range(n):
            with model_parallel(n, r), contextlib.ExitStack() as undo:
                model, _ = build(args, n)
                with torch.no_grad():
                    load_shares(model, full, r, n, check_weights=True)
                bug_line = apply_bug(model, args.bug, undo)
                doc = f"Megatron-core GPTModel tensor-parallel rank {r}/{n} (shardlog example {out.name})"
                proto = _export(model, inputs, rank=r, world=n, args=args, meta={**meta, "doc": doc})
            onnx.save(proto, out / f"rank{r}.onnx")
            ranks.append(proto)
    print(hf.describe(seq, ranks))

    feeds = {name: t.numpy() for name, t in zip(names, inputs)}
    sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
    seq_out = sess.run(None, feeds)[0]
    seq_err = float(np.max(np.abs(seq_out - ref.numpy())))
    outs = hf.simulate_ranks(ranks, feeds)
    max_err = float(max(np.max(np.abs(o - seq_out)) for o in outs))
    print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")
    shape = list(ids.shape) + ([args.vocab] if args.head == "logits" else [])
    data = {
        "model": {
            "megatron_class": "megatron.core.models.gpt.GPTModel",
            "layer_spec": "get_gpt_layer_local_spec(normalization='RMSNorm')",
            "megatron_core_version": str(megatron.core.__version__),
            "torch_version": str(torch.__version__),
            "config": {
                "num_layers": cfg.num_layers, "hidden_size": cfg.hidden_size, "ffn_hidden_size": cfg.ffn_hidden_size,
                "num_attention_heads": cfg.num_attention_heads, "num_query_groups": cfg.num_query_groups,
                "vocab_size": args.vocab, "max_sequence_length": args.seq, "normalization": cfg.normalization,
                "gated_linear_unit": cfg.gated_linear_unit, "activation_func": "silu",
                "add_bias_linear": cfg.add_bias_linear, "position_embedding_type": "learned_absolute",
                "init_method_std": cfg.init_method_std, "seed": args.seed,
                "biases_and_norm_weights": "random (N(0, 0.1) and 1 + N(0, 0.1)), each rank its share",
            },  # fmt: skip
            "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64",
                      "values": "random ids with the first and last id of every rank's range"},
            "output": {"name": output, "shape": shape, "dtype": "float32", "ranks": "Replicate"},
            **({"labels": {"name": "labels", "shape": list(ids.shape), "dtype": "int64",
                           "values": "next-token ids with the first and last id of every rank's range"}}
               if args.head == "loss" else {}),
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug] if args.bug else None,
        "bug_line": bug_line or None,
        "bug_module": BUG_MODULE[args.bug] if args.bug else None,
        # the first discrepancy's source frame: Megatron-core's code (the cross-entropy, for the loss)
        "bug_source": (SOURCE_LOSS if args.head == "loss" else "megatron/core/") if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "tp_plan": {
            "embedding.word_embeddings": "VocabParallelEmbedding (vocab chunk r, masked lookup, all-reduce)",
            "decoder.layers.*.self_attention.linear_qkv": "ColumnParallelLinear (query groups r*G/N..)",
            "decoder.layers.*.self_attention.linear_proj": "RowParallelLinear (all-reduce, then bias)",
            "decoder.layers.*.mlp.linear_fc1": "ColumnParallelLinear stride 2 (gate chunk r | up chunk r)",
            "decoder.layers.*.mlp.linear_fc2": "RowParallelLinear (all-reduce, then bias)",
            **({"output_layer": "ColumnParallelLinear (vocab-sharded logits, parallel_output=True)",
                "loss": "vocab_parallel_cross_entropy (all-reduce of the row max, predicted logit and sum of exp)"}
               if args.head == "loss" else
               {"output_layer": "ColumnParallelLinear(gather_output=True): all-gather on axis 0, chunk, concat on "
                                "the vocab (mappings._gather_along_last_dim)"}),
        },
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
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3)
    p.add_argument("--out", default=None, help="output folder of one --case (default examples/<case>)")
    return p.parse_args(argv)


def main(argv=None):
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(sys.argv[1:] if argv is None else argv)
    hf._OPTS["stack_frames"] = args.stack_frames
    for name in list(PRESETS) if args.all else [args.case]:
        a = argparse.Namespace(**{**vars(args), "bug": None, **PRESETS[name]})
        a.out = str(args.out) if args.out and not args.all else str(REPO / "examples" / name)
        print(f"== {name}", flush=True)
        produce(a, f"python scripts/export_megatron_core.py --case {name}")


if __name__ == "__main__":
    main()
