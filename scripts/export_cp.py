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
BUGS["rebased_positions"] = (
    "the rank re-bases its position_ids input to start at 0 (position_ids - position_ids[:, :1], as for "
    "a packed document's own positions) before passing it to the model: {m} computes the rotary cos/sin of "
    "positions 0..S/N-1 for rank r's chunk instead of its global positions r*S/N.."
)
DEFAULT_BUG_MODULE = {"rotary_offset": "model.rotary_emb", "rebased_positions": "model.rotary_emb"}
_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2)
PRESETS = {
    "llama_cp2": dict(model="llama", world_size=2, **_SMALL),
    "llama_cp2_bug_rotary_offset": dict(model="llama", world_size=2, bug="rotary_offset", **_SMALL),
    # position_ids a graph input, split on the sequence axis like input_ids
    "llama_cp2_positions": dict(model="llama", world_size=2, positions="input", **_SMALL),
    "llama_cp2_positions_bug_rebased_positions": dict(
        model="llama", world_size=2, positions="input", bug="rebased_positions", **_SMALL
    ),
}


#: the rank's own chunk of the 2-D padding mask, for its attention function (set by the traced forward)
_RANK_INPUTS: dict = {}


def register_cp_attention(mesh, positions_input: bool = False) -> None:
    """Register the all-gather context-parallel attention (module docstring) for ``mesh``;
    ``positions_input``: the mask is built from the all-gathered ``position_ids`` input."""
    import torch
    from torch.distributed._functional_collectives import all_gather_tensor
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, create_causal_mask
    from transformers.models.llama.modeling_llama import eager_attention_forward

    def cp_allgather_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        n, r = mesh.size(), mesh.get_local_rank()
        chunk = query.shape[2]  # [B, heads, S/N, head_dim]: this rank's queries
        key = all_gather_tensor(key.contiguous(), 2, mesh)  # [B, kv_heads, S, head_dim]
        value = all_gather_tensor(value.contiguous(), 2, mesh)
        if positions_input:
            # the positions and the padding mask are inputs (any values): the mask of the whole
            # sequence as the sequential model builds it (HF's create_causal_mask of every
            # position and padding flag, all-gathered), then this rank's query rows
            positions = all_gather_tensor(kwargs["position_ids"].contiguous(), 1, mesh)  # [B, S]
            padding = all_gather_tensor(_RANK_INPUTS["attention_mask"].contiguous(), 1, mesh)  # [B, S]
            full = create_causal_mask(config=module.config, inputs_embeds=key.transpose(1, 2), attention_mask=padding,
                                      cache=None, position_ids=positions)
            mask = full[:, :, r * chunk : (r + 1) * chunk, :]
            return eager_attention_forward(module, query, key, value, mask, scaling=scaling, dropout=dropout)
        rows = torch.arange(r * chunk, (r + 1) * chunk)  # this rank's query positions
        cols = torch.arange(n * chunk)
        causal = torch.where(cols[None, :] <= rows[:, None], 0.0, torch.finfo(query.dtype).min)
        mask = causal[None, None].expand(query.shape[0], 1, chunk, n * chunk)
        return eager_attention_forward(module, query, key, value, mask, scaling=scaling, dropout=dropout)

    AttentionInterface.register(ATTN, cp_allgather_attention)
    AttentionMaskInterface.register(ATTN, ALL_MASK_ATTENTION_FUNCTIONS["eager"])  # built, then unused


def trace_rank(model, ids_local, rank, world_size, bug, positions_local=None):
    """make_fx rank ``rank``'s forward on its chunk of the tokens; ``positions_local``, when
    given, is ``(input_ids, attention_mask, position_ids)``, the rank's chunks of three graph
    inputs (``ids_local`` is then unused)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    if positions_local is not None:
        def forward_positions(input_ids, attention_mask, position_ids):
            _RANK_INPUTS["attention_mask"] = attention_mask
            if bug == "rebased_positions":
                position_ids = position_ids - position_ids[:, :1]  # BUG (one line): positions re-based to 0
            return model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         use_cache=False).logits

        forward_positions._orig_mod = model
        with torch.no_grad(), hf.hf_tracing_patches(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gm = make_fx(forward_positions, record_module_stack=True, record_stack_traces=True)(*positions_local)
        gm.eval()
        return gm

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
    as_input = args.positions == "input"
    positions = torch.arange(ids.shape[1]).unsqueeze(0).expand(ids.shape[0], -1).contiguous()
    padding = torch.ones_like(ids)
    names_in = ("input_ids", "attention_mask", "position_ids") if as_input else ("input_ids",)
    if as_input:
        gm = trace_rank(model, ids, 0, 1, None, (ids, padding, positions))  # the sequential model, all positions
    else:
        gm = hf.trace(model, ids)
    seq = hf.export_onnx(gm, (ids, padding, positions) if as_input else ids, hf.constant_names(gm, model), rank=-1,
                         world_size=1, meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"},
                         input_names=names_in)
    onnx.save(seq, out / "seq.onnx")

    chunks = torch.chunk(ids, n, dim=1)
    pos_chunks = torch.chunk(positions, n, dim=1)
    pad_chunks = torch.chunk(padding, n, dim=1)
    ranks = []
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            hf.reset_dtensor_caches()
            mesh = DeviceMesh("cpu", list(range(n)))
            register_cp_attention(mesh, as_input)
            model = hf.fresh_model(args, cfg, sd)
            model.config._attn_implementation = ATTN
            local = (chunks[r], pad_chunks[r], pos_chunks[r])
            gm = trace_rank(model, chunks[r], r, n, args.bug, local if as_input else None)
            doc = f"{hf_class} context-parallel rank {r}/{n} (shardlog example {out.name})"
            proto = hf.export_onnx(gm, local if as_input else chunks[r],
                                   hf.constant_names(gm, model), rank=r, world_size=n,
                                   meta={**meta, "doc": doc}, input_names=names_in)
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
    print(hf.describe(seq, ranks))

    seq_err = max_err = None
    if args.verify:
        sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
        extra = {"attention_mask": padding.numpy(), "position_ids": positions.numpy()} if as_input else {}
        seq_logits = sess.run(None, {"input_ids": ids.numpy(), **extra})[0]
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        feeds = [{"input_ids": c.numpy(), **({"attention_mask": m.numpy(), "position_ids": p.numpy()}
                                             if as_input else {})}
                 for c, m, p in zip(chunks, pad_chunks, pos_chunks)]
        outs = hf.simulate_ranks(ranks, feeds)
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
            **({"extra_inputs": ["attention_mask", "position_ids"]} if args.positions == "input" else {}),
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug].format(m=args.bug_module) if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "context_parallel": {
            "input_ids": "Shard(1): rank r gets tokens [r*S/N, (r+1)*S/N)",
            "position_ids": _positions_note(args),
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


def _positions_note(args) -> str:
    if args.positions == "input":
        note = ("graph input, Shard(1): rank r gets positions [r*S/N, (r+1)*S/N) (the sequential input arange(S)); "
                "attention_mask a graph input, Shard(1); the rank all-gathers both and builds the sequential "
                "model's mask (create_causal_mask), then keeps its query rows")
        return note + ("; the rank re-bases them to 0  # BUG" if args.bug else "")
    return "None (HF default arange(S/N))  # BUG" if args.bug else "arange(r*S/N, (r+1)*S/N)"


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
    p.add_argument("--positions", choices=["computed", "input"], default="computed",
                   help="position_ids computed in the rank's program (default) or a graph input split like input_ids")
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
            suffix = ("_positions" if a.positions == "input" else "") + (f"_bug_{a.bug}" if a.bug else "")
            a.out = str(hf.REPO / "examples" / f"{a.model}_cp{a.world_size}{suffix}")
        print(f"== {Path(a.out).name}: world_size={a.world_size} bug={a.bug}", flush=True)
        cmd = "python scripts/export_cp.py " + (f"--case {name}" if name else " ".join(argv or sys.argv[1:]))
        produce(a, cmd)


if __name__ == "__main__":
    main()
