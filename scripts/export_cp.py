#!/usr/bin/env python
"""Export a small Hugging Face Llama sequentially and context-parallel (sequence-sharded) to ONNX.

The context-parallel counterpart of ``scripts/export_hf_tp.py`` (whose helpers it imports):
UNMODIFIED ``transformers.LlamaForCausalLM`` code, a tiny seeded model, and in
``examples/<case>/`` the sequential ``seq.onnx``, ``rank0.onnx`` .. ``rank{N-1}.onnx`` and
``case.yaml``.

Method: all-gather-based context parallelism, as in Llama 3's training (the keys and values
of every rank are gathered, each rank keeps its own queries):

* rank r is given its chunk of the tokens, ``input_ids[:, r*S/N:(r+1)*S/N]`` (``Shard(1)``;
  the graph input has shape ``[B, S/N]``), and returns the logits of its chunk (``Shard(1)``
  of the sequential logits);
* it passes the positions of its chunk, ``position_ids = arange(r*S/N, (r+1)*S/N)``, to the HF
  model, which computes the rotary ``cos``/``sin`` from them (``LlamaRotaryEmbedding``);
* attention is HF's ``eager_attention_forward`` behind an attention function registered with
  ``transformers.AttentionInterface`` (``"cp_allgather"``): it all-gathers the keys and values
  along the sequence axis (``torch.distributed._functional_collectives.all_gather_tensor``,
  exported as ``com.microsoft::AllGather``) and builds the causal mask of the rank's query rows
  ``r*S/N ..`` against all ``S`` keys.

Bug variant (``--bug rotary_offset``), one line: the rank does not pass its positions
(``position_ids=None``), so HF uses its default ``arange(S/N)`` on every rank: rank r > 0 rotates
its queries and keys as if its tokens were the first ``S/N`` of the sequence.

Usage::

    python scripts/export_cp.py --case llama_cp2
    python scripts/export_cp.py --all
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402

ATTN = "cp_allgather"
BUGS = {
    "rotary_offset": "the context-parallel forward does not pass its positions to the model (position_ids=None "
    "instead of arange(r*S/N, (r+1)*S/N)): HF defaults to arange(S/N) on every rank, so {m} computes the "
    "rotary cos/sin of positions 0..S/N-1 for rank r's chunk of the sequence",
}
DEFAULT_BUG_MODULE = {"rotary_offset": "model.rotary_emb"}
_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2)
PRESETS = {
    "llama_cp2": dict(model="llama", world_size=2, **_SMALL),
    "llama_cp2_bug_rotary_offset": dict(model="llama", world_size=2, bug="rotary_offset", **_SMALL),
}


def register_cp_attention(mesh) -> None:
    """Register the all-gather context-parallel attention (module docstring) for ``mesh``."""
    import torch
    from torch.distributed._functional_collectives import all_gather_tensor
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.models.llama.modeling_llama import eager_attention_forward

    def cp_allgather_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        n, r = mesh.size(), mesh.get_local_rank()
        chunk = query.shape[2]  # [B, heads, S/N, head_dim]: this rank's queries
        key = all_gather_tensor(key.contiguous(), 2, mesh)  # [B, kv_heads, S, head_dim]
        value = all_gather_tensor(value.contiguous(), 2, mesh)
        rows = torch.arange(r * chunk, (r + 1) * chunk)  # this rank's query positions
        cols = torch.arange(n * chunk)
        causal = torch.where(cols[None, :] <= rows[:, None], 0.0, torch.finfo(query.dtype).min)
        mask = causal[None, None].expand(query.shape[0], 1, chunk, n * chunk)
        return eager_attention_forward(module, query, key, value, mask, scaling=scaling, dropout=dropout)

    AttentionInterface.register(ATTN, cp_allgather_attention)
    AttentionMaskInterface.register(ATTN, ALL_MASK_ATTENTION_FUNCTIONS["eager"])  # built, then unused


def trace_rank(model, ids_local, rank, world_size, bug):
    """make_fx rank ``rank``'s forward on its chunk of the tokens."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def forward(input_ids):
        chunk = input_ids.shape[1]
        positions = torch.arange(rank * chunk, (rank + 1) * chunk).unsqueeze(0)
        if bug == "rotary_offset":
            positions = None  # BUG (one line): was positions (HF then uses arange(S/N) on every rank)
        return model(input_ids=input_ids, position_ids=positions, use_cache=False).logits

    forward._orig_mod = model
    with torch.no_grad(), hf.hf_tracing_patches(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(forward, record_module_stack=True, record_stack_traces=True)(ids_local)
    gm.eval()
    return gm


def produce(args, command):
    import onnx
    import onnxruntime as ort
    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import DeviceMesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg, sd, ids, ref_logits = hf.build_base_state(args)
    hf_class = hf.FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    model = hf.fresh_model(args, cfg, sd)
    gm = hf.trace(model, ids)
    seq = hf.export_onnx(gm, ids, hf.constant_names(gm, model), rank=-1, world_size=1,
                         meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    chunks = torch.chunk(ids, n, dim=1)
    ranks = []
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            hf.reset_dtensor_caches()
            mesh = DeviceMesh("cpu", list(range(n)))
            register_cp_attention(mesh)
            model = hf.fresh_model(args, cfg, sd)
            model.config._attn_implementation = ATTN
            gm = trace_rank(model, chunks[r], r, n, args.bug)
            doc = f"{hf_class} context-parallel rank {r}/{n} (shardlog example {out.name})"
            proto = hf.export_onnx(gm, chunks[r], hf.constant_names(gm, model), rank=r, world_size=n,
                                   meta={**meta, "doc": doc})
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
    print(hf.describe(seq, ranks))

    seq_err = max_err = None
    if args.verify:
        sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
        seq_logits = sess.run(None, {"input_ids": ids.numpy()})[0]
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        outs = hf.simulate_ranks(ranks, [{"input_ids": c.numpy()} for c in chunks])
        max_err = float(np.max(np.abs(np.concatenate(outs, axis=1) - seq_logits)))
        print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated, concatenated on axis 1) vs seq: {max_err:.3g}")

    data = {
        "model": {
            "hf_class": hf_class,
            "transformers_version": str(transformers.__version__),
            "torch_version": str(torch.__version__),
            "config": hf.config_summary(cfg, args),
            "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64"},
            "output": {"name": "logits", "shape": [*ids.shape, cfg.vocab_size], "dtype": "float32"},
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug].format(m=args.bug_module) if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "context_parallel": {
            "input_ids": "Shard(1): rank r gets tokens [r*S/N, (r+1)*S/N)",
            "position_ids": "None (HF default arange(S/N))  # BUG" if args.bug else "arange(r*S/N, (r+1)*S/N)",
            "attention": "keys and values all-gathered on the sequence axis; causal mask rows r*S/N.. (r+1)*S/N",
            "logits": "Shard(1)",
        },
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    print(f"  wrote {out} ({sum(f.stat().st_size for f in out.iterdir()) / 1024:.0f} KiB)")
    if args.verify:
        hf.check_case_errors(args, out, seq_err, max_err)
    return data


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--case", choices=sorted(PRESETS))
    sel.add_argument("--all", action="store_true")
    p.add_argument("--model", choices=["llama"], default="llama")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--bug", choices=sorted(BUGS), default=None)
    p.add_argument("--bug-module", default=None)
    p.add_argument("--batch", type=int, default=1)
    hf.add_model_args(p)
    return p.parse_args(argv)


def main(argv=None):
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(list(sys.argv[1:] if argv is None else argv))
    hf._OPTS["stack_frames"] = args.stack_frames
    names = list(PRESETS) if args.all else [args.case]
    for name in names:
        a = hf.preset_args(parse, PRESETS, name, args) if name else args
        if a.bug and not a.bug_module:
            a.bug_module = DEFAULT_BUG_MODULE[a.bug]
        if a.out is None:
            a.out = str(hf.REPO / "examples" / f"{a.model}_cp{a.world_size}" + (f"_bug_{a.bug}" if a.bug else ""))
        print(f"== {Path(a.out).name}: world_size={a.world_size} bug={a.bug}", flush=True)
        cmd = "python scripts/export_cp.py " + (f"--case {name}" if name else " ".join(argv or sys.argv[1:]))
        produce(a, cmd)


if __name__ == "__main__":
    main()
