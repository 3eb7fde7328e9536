#!/usr/bin/env python
"""Export a Hugging Face Llama with fewer kv heads than ranks, tensor-parallel Megatron/vLLM style.

With N ranks and K < N kv heads (N % K == 0), vLLM (``QKVParallelLinear``:
``num_kv_head_replicas = tp_size // total_num_kv_heads``, and its ``weight_loader`` loads kv
shard ``tp_rank // num_kv_head_replicas``) and Megatron-LM give rank r the kv head
``r // (N / K)``: each group of ``N / K`` consecutive ranks holds the same kv head.
PyTorch's ``parallelize_module`` cannot express this (a ``ColwiseParallel`` k/v projection
splits K heads into N chunks), so each rank's program is built as those frameworks build it:
an UNMODIFIED Hugging Face ``LlamaForCausalLM`` whose config has ``heads / N`` attention
heads, one kv head and ``intermediate / N`` MLP columns, with weights sliced from the
sequential model:

* ``q_proj``, ``gate_proj``, ``up_proj``: rows ``[r * out / N, (r + 1) * out / N)``
  (column parallel); ``o_proj``, ``down_proj``: the same columns (row parallel), followed by
  an all-reduce (``torch.distributed._functional_collectives.all_reduce``, a forward hook on
  the module; exported as ``com.microsoft::AllReduce``);
* ``k_proj``, ``v_proj``: rows ``[h * d, (h + 1) * d)`` with ``h = r // (N / K)`` (and the same
  elements of their biases, Qwen2);
* ``lm_head``: vocab rows ``[r * V / N, ...)`` (vLLM's ``ParallelLMHead``), logits all-gathered
  along the vocab axis (``all_gather_tensor(..., gather_dim=-1)``: an all-gather on axis 0,
  chunks concatenated on the last axis);
* embeddings and norms: whole on every rank.

HF's ``repeat_kv`` then repeats the rank's kv head ``(heads / N)`` times, where the
sequential model repeats each of its K heads ``heads / K`` times.

Bug variant ``kv_heads_misassigned``: rank r gets kv head ``r % K`` (the loader's shard index
taken modulo the number of kv heads instead of divided by the replica count): ranks 1 and 2
of TP 4 with 2 kv heads attend with the other group's keys and values.

The sequential and rank graphs go through ``export_hf_tp``'s pipeline (``make_fx`` with module
stacks and source lines, ``torch.onnx.export`` with collectives mapped to ``com.microsoft``
ops, weights renamed to their module paths, onnxscript optimizer) and are verified by its
simulator; ``case.yaml`` records the measured error.

Usage::

    python scripts/export_gqa_replicated.py --case llama_tp4_kv2      # also qwen2_tp4_kv2, ..._bug_...
    python scripts/export_gqa_replicated.py --all
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402

BUGS = {
    "kv_heads_misassigned": "the k_proj/v_proj weights of rank r hold kv head r % K instead of r // (N / K) "
    "(the weight loader's kv shard index taken modulo the kv head count instead of divided by the "
    "replica count N / K): ranks 1 and 2 attend with the other group's keys and values",
}
DEFAULT_BUG_MODULE = {"kv_heads_misassigned": "model.layers.0.self_attn"}

_BASE = dict(model="llama", world_size=4, hidden=64, intermediate=128, heads=8, kv_heads=2, vocab=128, layers=2)
PRESETS = {
    "llama_tp4_kv2": dict(_BASE),
    "llama_tp4_kv2_bug_kv_heads_misassigned": dict(_BASE, bug="kv_heads_misassigned"),
    # Qwen2: q/k/v biases (the k/v bias elements of kv head h), linears exported as Gemm
    "qwen2_tp4_kv2": dict(_BASE, model="qwen2"),
}


def kv_head_of_rank(rank: int, world_size: int, kv_heads: int, bug: str | None) -> int:
    """The kv head rank ``rank`` holds: ``rank // (N / K)`` (vLLM, Megatron-LM), or, in the
    ``kv_heads_misassigned`` bug, ``rank % K``."""
    if bug == "kv_heads_misassigned":
        return rank % kv_heads  # BUG (one line): was rank // (world_size // kv_heads)
    return rank // (world_size // kv_heads)


def rank_state(sd: dict, cfg, rank: int, n: int, bug: str | None) -> dict:
    """Rank ``rank``'s state dict sliced from the sequential one (see module docstring)."""
    d = cfg.head_dim
    h = kv_head_of_rank(rank, n, cfg.num_key_value_heads, bug)
    out = {}
    for name, t in sd.items():
        module = name.rpartition(".")[0]
        if module.endswith(("q_proj", "gate_proj", "up_proj")) or module == "lm_head":
            out[name] = t.chunk(n, dim=0)[rank].clone()  # weight rows and bias (Qwen2's q bias)
        elif name.endswith(("o_proj.weight", "down_proj.weight")):
            out[name] = t.chunk(n, dim=1)[rank].clone()
        elif module.endswith(("k_proj", "v_proj")):
            out[name] = t[h * d : (h + 1) * d].clone()  # weight rows and bias of kv head h
        else:
            out[name] = t.clone()
    return out


def rank_config(cfg, n: int):
    """The config of one rank's model: heads / N attention heads, one kv head, intermediate / N."""
    import copy

    kv = cfg.num_key_value_heads
    if n % kv or cfg.num_attention_heads % n:
        raise SystemExit(f"the world size must be a multiple of the kv heads ({kv}) and divide the heads")
    rc = copy.deepcopy(cfg)
    rc.head_dim = cfg.head_dim
    rc.num_attention_heads = cfg.num_attention_heads // n
    rc.num_key_value_heads = 1
    rc.intermediate_size = cfg.intermediate_size // n
    return rc


def rank_model(args, rcfg, state: dict, n: int):
    """One rank's HF model: the class of the sequential model with the rank's config, its
    ``lm_head`` a Linear to ``vocab / N`` logits (vLLM's ``ParallelLMHead``), weights loaded."""
    import torch
    import transformers

    model = getattr(transformers, hf.FAMILIES[args.model][1])(rcfg).eval()
    model.lm_head = torch.nn.Linear(rcfg.hidden_size, rcfg.vocab_size // n, bias=False)
    model.load_state_dict(state, strict=True)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def add_collectives(model, group, world_size: int) -> None:
    """All-reduce (sum) the outputs of every o_proj and down_proj (row-parallel linears), and
    all-gather the vocab-sharded logits of lm_head along the vocab axis."""
    from torch.distributed._functional_collectives import all_gather_tensor, all_reduce

    for name, mod in model.named_modules():
        if name.endswith(("self_attn.o_proj", "mlp.down_proj")):
            mod.register_forward_hook(lambda m, args, out: all_reduce(out, "sum", group))
        elif name == "lm_head":
            mod.register_forward_hook(lambda m, args, out: all_gather_tensor(out, out.dim() - 1, group))


def produce(args, command: str) -> dict:
    import onnx
    import torch
    import torch.distributed as dist
    import transformers
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()

    cfg, sd, ids, ref_logits = hf.build_base_state(args)
    if cfg.num_key_value_heads >= n:
        raise SystemExit("this producer is for fewer kv heads than ranks (use export_hf_tp.py otherwise)")
    cfg.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    hf_class = hf.FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    model = hf.fresh_model(args, cfg, sd)
    gm = hf.trace(model, ids)
    seq = hf.export_onnx(gm, ids, hf.constant_names(gm, model), rank=-1, world_size=1,
                         meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    rcfg = rank_config(cfg, n)
    ranks = []
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            model = rank_model(args, rcfg, rank_state(sd, cfg, r, n, args.bug), n)
            add_collectives(model, dist.group.WORLD, n)
            gm = hf.trace(model, ids)
            doc = f"{hf_class} tensor-parallel rank {r}/{n}, kv heads replicated (shardlog example {out.name})"
            proto = hf.export_onnx(gm, ids, hf.constant_names(gm, model), rank=r, world_size=n,
                                   meta={**meta, "doc": doc})
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
    print(hf.describe(seq, ranks))

    import onnxruntime as ort

    feeds = {"input_ids": ids.numpy()}
    sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
    seq_logits = sess.run(None, feeds)[0]
    seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
    outs = hf.simulate_ranks(ranks, feeds)
    max_err = float(max(np.max(np.abs(o - seq_logits)) for o in outs))
    print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")

    kv = cfg.num_key_value_heads
    heads = {r: kv_head_of_rank(r, n, kv, args.bug) for r in range(n)}
    data = {
        "model": {
            "hf_class": hf_class,
            "transformers_version": str(transformers.__version__),
            "torch_version": str(torch.__version__),
            "config": hf.config_summary(cfg, args),
            "rank_config": {"num_attention_heads": rcfg.num_attention_heads, "num_key_value_heads": 1,
                            "intermediate_size": rcfg.intermediate_size, "head_dim": rcfg.head_dim},
            "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64"},
            "output": {"name": "logits", "shape": [*ids.shape, cfg.vocab_size], "dtype": "float32"},
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug] if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "tp_plan": {
            "self_attn.q_proj, mlp.gate_proj, mlp.up_proj": "column parallel (rows r*out/N ...)",
            "self_attn.k_proj, self_attn.v_proj": f"kv head of rank r: {heads} (replicated over {n // kv} ranks)",
            "self_attn.o_proj, mlp.down_proj": "row parallel, then all_reduce(sum)",
            "lm_head": "vocab rows r*V/N ..., logits all-gathered along the vocab axis",
            "embed_tokens, norms": "whole on every rank",
        },
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    print(f"  wrote {out} ({sum(f.stat().st_size for f in out.iterdir()) / 1024:.0f} KiB); "
          f"kv heads {dict(Counter(heads.values()))}")
    hf.check_case_errors(args, out, seq_err, max_err)
    return data


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group(required=True)
    sel.add_argument("--case", choices=sorted(PRESETS))
    sel.add_argument("--all", action="store_true")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3)
    return p.parse_args(argv)


def main(argv=None):
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(sys.argv[1:] if argv is None else argv)
    hf._OPTS["stack_frames"] = args.stack_frames
    args.verify = True
    for name in list(PRESETS) if args.all else [args.case]:
        a = hf.preset_args(hf.parse, PRESETS, name, args)
        a.bug_module = DEFAULT_BUG_MODULE.get(a.bug) if a.bug else None
        print(f"== {name}", flush=True)
        produce(a, f"python scripts/export_gqa_replicated.py --case {name}")


if __name__ == "__main__":
    main()
