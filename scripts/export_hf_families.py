#!/usr/bin/env python
"""Export more Hugging Face decoder families sequentially and tensor-parallel (issue 16's corpus).

Families that differ from the Llama-likes of ``export_hf_tp.py`` in their projections, norms,
attention and MLP shapes, each exported from UNMODIFIED ``transformers`` code with PyTorch's
tensor-parallel API and the model's own ``base_model_tp_plan`` (``export_hf_tp.py``'s pipeline:
``parallelize_module``, ``make_fx``, ``torch.onnx.export`` with collectives as ``com.microsoft``
ops, weights renamed to their module paths, checked by its simulator):

* ``qwen3``: per-head RMSNorm on queries and keys (``q_norm``/``k_norm``, replicated; HF's plan
  entry ``replicated_with_grad_allreduce``), head_dim set apart from hidden / heads;
* ``gemma``: GeGLU MLP (tanh-approximated GELU), embeddings scaled by sqrt(hidden), RMSNorm
  with ``1 + weight``;
* ``cohere``: LayerNorm (mean subtracted) without bias, attention and MLP in parallel on the
  same normed input (one residual add of both), logits scaled;
* ``starcoder2``: LayerNorm with bias, a plain two-layer MLP (``c_fc``/``c_proj``, GELU) and
  biases on every projection (row-parallel biases added once, after the all-reduce);
* ``nemotron``: squared-ReLU MLP without a gate, LayerNorm1P (``1 + weight``), partial rotary
  embeddings (half of each head);
* ``granite``: scalar multipliers on the embeddings, the residual branches, the attention
  scores and the logits.

Bug variants (one line each): ``missing_allreduce`` — one layer's row-parallel MLP output
projection planned ``RowwiseParallel(output_layouts=Partial())``, so its all-reduce is missing
(``export_hf_tp.py``'s bug, in the family's own module name).

Usage::

    python scripts/export_hf_families.py --case qwen3_tp2            # one preset
    python scripts/export_hf_families.py --all                       # every preset
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402

FAMILIES = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
    "gemma": ("GemmaConfig", "GemmaForCausalLM"),
    "cohere": ("CohereConfig", "CohereForCausalLM"),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM"),
    "nemotron": ("NemotronConfig", "NemotronForCausalLM"),
    "granite": ("GraniteConfig", "GraniteForCausalLM"),
}

# the row-parallel MLP output projection of each family (where missing_allreduce is planted)
MLP_OUT = {"starcoder2": "mlp.c_proj"}

_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=2, layers=2)


def _presets() -> dict:
    out = {}
    for model in FAMILIES:
        out[f"{model}_tp2"] = dict(model=model, world_size=2, **_SMALL)
        out[f"{model}_tp2_bug_missing_allreduce"] = dict(
            model=model, world_size=2, bug="missing_allreduce", **_SMALL,
            bug_module=f"model.layers.1.{MLP_OUT.get(model, 'mlp.down_proj')}",
        )
    return out


PRESETS = _presets()


def _tweak(cfg, args) -> None:
    """Family settings a tiny config needs (set after the generic config is built)."""
    head_dim = args.hidden // args.heads
    if args.model in ("qwen3", "gemma", "nemotron", "granite", "cohere"):
        cfg.head_dim = head_dim
    if args.model == "gemma":
        cfg.hidden_activation = "gelu_pytorch_tanh"
    if args.model == "cohere":
        cfg.logit_scale = 0.5
        cfg.use_qk_norm = False
    if args.model == "starcoder2":
        cfg.use_bias = True
        cfg.sliding_window = None
    if args.model == "nemotron":
        cfg.partial_rotary_factor = 0.5
    if args.model == "granite":
        cfg.embedding_multiplier = 2.0
        cfg.residual_multiplier = 0.5
        cfg.attention_multiplier = 1.0 / head_dim
        cfg.logits_scaling = 4.0


def _make_config(args):
    cfg = _BASE_MAKE_CONFIG(args)
    _tweak(cfg, args)
    return cfg


_BASE_MAKE_CONFIG = hf.make_config


def install() -> None:
    """Make ``export_hf_tp`` know these families (its pipeline looks them up by name)."""
    hf.FAMILIES.update(FAMILIES)
    hf.make_config = _make_config


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group(required=True)
    sel.add_argument("--case", choices=sorted(PRESETS))
    sel.add_argument("--all", action="store_true")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3)
    p.add_argument("--out", default=None, help="output folder of one --case (default examples/<case>)")
    p.add_argument("--no-verify", dest="verify", action="store_false")
    return p.parse_args(argv)


def main(argv=None):
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(sys.argv[1:] if argv is None else argv)
    install()
    hf._OPTS["stack_frames"] = args.stack_frames
    for name in list(PRESETS) if args.all else [args.case]:
        a = hf.preset_args(hf.parse, PRESETS, name, args)
        print(f"== {name}", flush=True)
        hf.produce(a, f"python scripts/export_hf_families.py --case {name}")


if __name__ == "__main__":
    main()
