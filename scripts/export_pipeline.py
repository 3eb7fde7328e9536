#!/usr/bin/env python
"""Export a small Hugging Face Llama sequentially and split into pipeline stages, to ONNX.

The pipeline-parallel counterpart of ``scripts/export_hf_tp.py`` (whose helpers it imports):
it takes UNMODIFIED ``transformers.LlamaForCausalLM`` code, builds a tiny model from a small
config with random (seeded) weights, and writes into ``examples/<case>/``

* ``seq.onnx``                 - the sequential model (exactly as ``export_hf_tp.py`` exports it),
* ``stage0.onnx``, ``stage1.onnx`` - what pipeline stage 0 and 1 execute (one file per stage),
* ``case.yaml``                - the case: config, split point, boundary tensors, expected verdict.

Method
------
1. The split is found by PyTorch's own pipelining front end,
   ``torch.distributed.pipelining.pipeline(model, mb_args, split_spec={"model.layers.K":
   SplitPoint.BEGINNING})``: it traces the model with ``torch.export`` and splits the graph
   before decoder layer K (``Pipe.split_gm.submod_pp_0``, ``submod_pp_1``). The values that
   cross the split (the *boundary*) and their order are read from ``split_gm``: stage 0's
   outputs, in the order stage 1 receives them (for Llama: the hidden states, the rotary
   ``cos`` and ``sin``, and the causal mask).
   torch 2.13 "outlines" each stage back into a module tree (``_outline_submodules``), and the
   outlined stage 0 cannot run HF's rotary embedding (``Expected positional argument for
   parameter unsqueeze_default``); the outlining is turned off while ``pipeline`` runs, so each
   stage is the flat graph ``split_module`` made (the same operations, the same ``nn_module_stack``
   and stack traces).
2. Boundary tensors are named after what decoder layer K receives: a forward pre-hook on
   ``model.layers.K`` captures ``hidden_states``, ``attention_mask`` and ``position_embeddings
   = (cos, sin)`` on the example input, and each stage-0 output is matched to one of them by
   value. The name is ``<argument>.K``, e.g. ``hidden_states.1``, ``attention_mask.1``,
   ``cos.1``, ``sin.1`` (an output that matches nothing keeps pipelining's placeholder name).
   Stage 0's output and stage 1's input carry the same name: that is how ``shardlog check
   --pp 2`` chains them.
3. Each stage graph is re-traced with ``make_fx`` through an ``fx.Interpreter`` under
   ``fx.traceback.preserve_node_meta()`` (module path and source line of every node kept) and
   goes through the same ONNX export and post-processing as the TP examples
   (``export_hf_tp.translation_table``, ``_rename_values``, ``_optimize_keeping_weights``,
   ``finish_model``): weights are initializers named after their module path.
4. Verification (unless ``--no-verify``): seq.onnx is run with onnxruntime against PyTorch's
   logits; the stages are run one after the other with onnxruntime, each stage fed by name
   from the earlier stages' outputs, and the last stage's logits are compared with seq's. A
   correct case must match to ``--tol``; a bug case must differ by more than 100 x ``--tol``
   (exit 1 otherwise).

Bug variants (``--bug NAME``), each a realistic mistake at the stage boundary:

* ``mask_not_forwarded``: stage 1 is not sent the attention mask: its decoder layers run
  with ``attention_mask=None`` (a forward pre-hook drops it, as a stage whose ``forward``
  takes only the hidden states does), so the boundary drops a tensor and layer K's attention
  is no longer causal.
* ``swapped_rope``: stage 0 sends ``(hidden_states, sin, cos, mask)`` while stage 1 unpacks
  ``(hidden_states, cos, sin, mask)``: the p2p transfer is positional, so the tensor named
  ``cos.K`` holds the sines (two boundary tensors reordered).

Usage::

    python scripts/export_pipeline.py --case llama_pp2                 # one preset
    python scripts/export_pipeline.py --all                            # every preset
    python scripts/export_pipeline.py --bug swapped_rope --out /tmp/x  # free form

Needs the export extra (torch==2.13.0, transformers, onnxscript, onnxruntime); about 10 s per
case on one core.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as E  # noqa: E402  (the TP producer's helpers)

REPO = Path(__file__).resolve().parents[1]

BUGS = {
    "mask_not_forwarded": "stage {s} is not sent the attention mask: its decoder layers run with "
    "attention_mask=None, so {m} attends to future positions",
    "swapped_rope": "stage {p} sends (hidden_states, sin, cos, attention_mask) but stage {s} unpacks "
    "(hidden_states, cos, sin, attention_mask): the boundary tensor named cos.{k} holds the sines, "
    "so {m} rotates with swapped cos and sin",
}

# a small config (as the secondary TP examples) keeps examples/ small
_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2, layers=2)
PRESETS = {
    "llama_pp2": dict(**_SMALL),
    "llama_pp2_bug_mask_not_forwarded": dict(bug="mask_not_forwarded", **_SMALL),
    "llama_pp2_bug_swapped_rope": dict(bug="swapped_rope", **_SMALL),
}


# the split, the boundary names, the tracing and export of a stage live in the package
# (analyzer/export/stages.py, shardlog export --pp 2); the bug variants stay here
from analyzer.export.stages import (  # noqa: E402
    boundary_names,
    export_stage,
    split_model,
    trace_stage,
)


# ---------------------------------------------------------------------------
# verification
# ---------------------------------------------------------------------------
def run_chain(stages, feeds: dict) -> np.ndarray:
    """Run the stage models one after the other with onnxruntime, each fed by name from the
    graph inputs and the earlier stages' outputs; return the last stage's first output."""
    import onnxruntime as ort

    values = dict(feeds)
    out = None
    for proto in stages:
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        outs = sess.run(None, {n: values[n] for n in names})
        values.update(zip([o.name for o in sess.get_outputs()], outs))
        out = outs[0]
    return out


# ---------------------------------------------------------------------------
# main driver
# ---------------------------------------------------------------------------
def produce(args, command: str) -> dict:
    """Export one case into ``args.out`` (module docstring) and return its case.yaml data.

    Raises:
        SystemExit: verification failed (a correct case that does not match, a bug that
            does not show), or the split is not the expected two-stage one.
    """
    import onnx
    import torch
    import torch.distributed as dist
    import transformers
    from torch.fx import Interpreter

    E.register_collective_schemas()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("stage*.onnx"):
        old.unlink()
    if dist.is_initialized():
        dist.destroy_process_group()

    cfg, sd, ids, ref_logits = E.build_base_state(args)
    hf_class = E.FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}
    k = args.split_layer

    # ---- sequential: exactly the TP examples' pipeline -----------------------
    model = E.fresh_model(args, cfg, sd)
    gm = E.trace(model, ids)
    seq = E.export_onnx(
        gm,
        ids,
        E.constant_names(gm, model),
        rank=-1,
        world_size=1,
        meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"},
    )
    onnx.save(seq, out / "seq.onnx")

    # ---- the split ---------------------------------------------------------------
    model = E.fresh_model(args, cfg, sd)
    if args.bug == "mask_not_forwarded":

        def drop_mask(module, a, kw):
            kw["attention_mask"] = None
            return a, kw

        for layer in model.model.layers[k:]:
            layer.register_forward_pre_hook(drop_mask, with_kwargs=True)
    stage0, stage1, route = split_model(model, ids, k)
    with torch.no_grad():
        outs0 = stage0(ids)
    outs0 = outs0 if isinstance(outs0, tuple) else (outs0,)
    # names from what layer K of an unmodified model receives
    names = boundary_names(E.fresh_model(args, cfg, sd), ids, k, outs0)
    send = list(range(len(outs0)))
    if args.bug == "swapped_rope":
        ic, is_ = names.index(f"cos.{k}"), names.index(f"sin.{k}")
        send[ic], send[is_] = is_, ic  # stage 0 returns sin where stage 1 expects cos
    stage1_inputs = [outs0[send[i]] for i in route]
    stage1_names = [names[i] for i in route]

    def stage0_fn(x):
        res = Interpreter(stage0).run(x)
        res = res if isinstance(res, tuple) else (res,)
        return tuple(res[j] for j in send)

    def stage1_fn(*xs):
        return Interpreter(stage1).run(*xs)

    protos = []
    for s, (fn, inputs, in_names, out_names) in enumerate(
        [
            (stage0_fn, [ids], ["input_ids"], names),
            (stage1_fn, stage1_inputs, stage1_names, ["logits"]),
        ]
    ):
        gm = trace_stage(fn, inputs)
        doc = f"{hf_class} pipeline stage {s}/2, split before model.layers.{k} (shardlog example {out.name})"
        proto = export_stage(
            gm, inputs, in_names, out_names, E.constant_names(gm, model), meta={**meta, "doc": doc, "stage": s}
        )
        onnx.save(proto, out / f"stage{s}.onnx")
        protos.append(proto)
        print(f"  stage{s}: {len(proto.graph.node)} nodes, inputs {in_names}, outputs {out_names}")

    # ---- verification ------------------------------------------------------------
    seq_err = max_err = None
    if args.verify:
        import onnxruntime as ort

        feeds = {"input_ids": ids.numpy()}
        sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
        seq_logits = sess.run(None, feeds)[0]
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        max_err = float(np.max(np.abs(run_chain(protos, feeds) - seq_logits)))
        print(f"  seq onnx vs torch: {seq_err:.3g}   stages chained vs seq: {max_err:.3g}")

    bug_module = f"model.layers.{k}.self_attn" if args.bug else None
    data = {
        "model": {
            "hf_class": hf_class,
            "transformers_version": str(transformers.__version__),
            "torch_version": str(torch.__version__),
            "config": E.config_summary(cfg, args),
            "input": {"name": "input_ids", "shape": [1, E.SEQ_LEN], "dtype": "int64"},
            "output": {"name": "logits", "shape": [1, E.SEQ_LEN, cfg.vocab_size], "dtype": "float32"},
        },
        "pipeline": {
            "stages": 2,
            "split_spec": {f"model.layers.{k}": "SplitPoint.BEGINNING"},
            "boundary": [
                {"name": n, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
                for n, t in zip(stage1_names, stage1_inputs)
            ],
        },
        "world_size": 1,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUGS[args.bug].format(p=0, s=1, k=k, m=bug_module) if args.bug else None,
        "bug_module": bug_module,
        "bug_stage": 1 if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "files": {"seq": "seq.onnx", "stages": ["stage0.onnx", "stage1.onnx"]},
        "check": "shardlog check "
        + " ".join(_shown(out / f) for f in ("seq.onnx", "stage0.onnx", "stage1.onnx"))
        + " --pp 2",
        "produced_by": command,
    }
    E.write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"  wrote {out} ({size / 1024:.0f} KiB)")

    if args.verify:
        if seq_err > args.tol:
            raise SystemExit(f"seq ONNX does not match PyTorch: {seq_err}")
        if args.bug is None and max_err > args.tol:
            raise SystemExit(f"correct case {out.name}: the chained stages do not rebuild seq logits ({max_err})")
        if args.bug is not None and max_err <= 100 * args.tol:
            raise SystemExit(f"bug case {out.name}: error {max_err} is not clearly visible")
    return data


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (as case.yaml shows it)."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def parse(argv):
    """Command line (module docstring); model options as in ``export_hf_tp.py``."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--case", choices=sorted(PRESETS), help="produce one preset into examples/<case>/")
    sel.add_argument("--all", action="store_true", help="produce every preset")
    p.add_argument("--bug", choices=sorted(BUGS), default=None)
    p.add_argument("--split-layer", type=int, default=1, help="stage 1 starts at model.layers.K (default 1)")
    for name, default in _SMALL.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init-range", type=float, default=0.1, help="std of the random weights")
    p.add_argument("--out", default=None, help="output folder (default examples/<case>)")
    p.add_argument("--no-verify", dest="verify", action="store_false")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3, help="innermost stack frames kept per node (0 = all)")
    args = p.parse_args(argv)
    args.model = "llama"
    return args


def resolve(args, name=None):
    """Apply preset ``name`` on top of the CLI defaults."""
    if name is not None:
        args = E.preset_args(parse, PRESETS, name, args)
    if args.out is None:
        args.out = str(REPO / "examples" / ("llama_pp2" + (f"_bug_{args.bug}" if args.bug else "")))
    return args


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(argv)
    E._OPTS["stack_frames"] = args.stack_frames
    names = list(PRESETS) if args.all else [args.case] if args.case else [None]
    for name in names:
        a = resolve(args, name)
        cmd = (
            f"python scripts/export_pipeline.py --case {name}"
            if name
            else ("python scripts/export_pipeline.py " + shlex.join(argv))
        )
        if name and not args.verify:
            cmd += " --no-verify"
        print(
            f"== {Path(a.out).name}: llama pipeline 2 stages, split before model.layers.{a.split_layer}, bug={a.bug}",
            flush=True,
        )
        produce(a, cmd.strip())


if __name__ == "__main__":
    main()
