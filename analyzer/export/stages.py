"""Pipeline stages of a Hugging Face causal LM: one ONNX file per stage, chained by name
(``shardlog export --pp 2``, ``shardlog check seq.onnx stage0.onnx stage1.onnx --pp 2``).

1. The split is PyTorch's own pipelining front end: ``torch.distributed.pipelining.pipeline(model,
   mb_args, split_spec={"model.layers.K": SplitPoint.BEGINNING})`` traces the model with
   ``torch.export`` and splits the graph before decoder layer K. The values that cross the
   split and their order are read from ``split_gm`` (stage 0's outputs, in the order stage 1
   receives them: for Llama the hidden states, the rotary ``cos`` and ``sin``, the causal mask).
   torch 2.13 "outlines" each stage back into a module tree, and the outlined stage 0 cannot
   run HF's rotary embedding, so the outlining is off while ``pipeline`` runs
   (:func:`flat_stages`): each stage is the flat graph ``split_module`` made.
2. Boundary tensors are named after what decoder layer K receives (:func:`boundary_names`: a
   forward pre-hook captures ``hidden_states``, ``attention_mask`` and ``position_embeddings``,
   each stage-0 output is matched to one by value): ``hidden_states.K``, ``attention_mask.K``,
   ``cos.K``, ``sin.K``. Stage 0's output and stage 1's input carry the same name: that is how
   ``shardlog check --pp`` chains them (:mod:`analyzer.importers.pipeline`).
3. Each stage graph is re-traced with ``make_fx`` through an ``fx.Interpreter`` under
   ``fx.traceback.preserve_node_meta()`` (module path and source line of every node kept,
   :func:`trace_stage`) and exported like the other files (:func:`export_stage`), with
   ``shardlog.stage`` in its metadata.

Needs the ``export`` extra (torch, transformers, onnxscript).
"""

from __future__ import annotations

import contextlib
import warnings

from analyzer.errors import InputError
from analyzer.export.collectives import with_collective_schemas

__all__ = [
    "boundary_names",
    "export_hf_stages",
    "export_stage",
    "flat_stages",
    "logits_module",
    "split_model",
    "trace_stage",
]


def logits_module(hf_model):
    """A module with the HF model's ``model`` and ``lm_head`` children (parameter names stay the
    HF ones, ``model.layers.0...``) whose forward returns the logits tensor: ``pipeline`` wants
    tensors out, not a ``CausalLMOutputWithPast``."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.model = m.model
            self.lm_head = m.lm_head
            self._hf = [m]  # not a child: parameters stay under model.* and lm_head.*

        def forward(self, input_ids):
            return self._hf[0](input_ids=input_ids, use_cache=False).logits

    return Logits(hf_model)


@contextlib.contextmanager
def flat_stages():
    """Keep pipelining's stage graphs flat (step 1 of the module docstring)."""
    import torch.distributed.pipelining._IR as IR

    saved = IR._outline_submodules
    IR._outline_submodules = lambda graph: graph.owning_module
    try:
        yield
    finally:
        IR._outline_submodules = saved


def split_model(hf_model, ids, split_layer: int):
    """Split ``hf_model`` before decoder layer ``split_layer`` with ``torch.distributed.pipelining``.

    Returns:
        (stage0, stage1, route): the two stage GraphModules and, for each input of stage 1 in
        order, the index of the stage-0 output it receives.

    Raises:
        InputError: the layer is not inside the model, or the split did not give two stages fed
            by stage 0 only.
    """
    import torch
    from torch.distributed.pipelining import SplitPoint, pipeline

    from analyzer.export.pipeline import hf_tracing_patches

    layers = len(hf_model.model.layers)
    if not 0 < split_layer < layers:
        raise InputError(f"split layer {split_layer}: the model has layers 0..{layers - 1}; split at 1..{layers - 1}")
    with torch.no_grad(), hf_tracing_patches(), flat_stages(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = pipeline(
            logits_module(hf_model), mb_args=(ids,), split_spec={f"model.layers.{split_layer}": SplitPoint.BEGINNING}
        )
    if pipe.num_stages != 2:
        raise InputError(f"pipeline() made {pipe.num_stages} stages, expected 2")
    calls = [n for n in pipe.split_gm.graph.nodes if n.op == "call_module"]
    stage0_node, stage1_node = calls
    route = []
    for arg in stage1_node.args:
        if arg.op == "call_function" and arg.args[0] is stage0_node:
            route.append(int(arg.args[1]))
        elif arg is stage0_node:
            route.append(0)
        else:
            raise InputError(f"stage 1 input {arg.name} does not come from stage 0")
    return pipe.get_stage_module(0), pipe.get_stage_module(1), route


def boundary_names(hf_model, ids, split_layer: int, stage0_outputs) -> list[str]:
    """Name each stage-0 output after the argument of decoder layer ``split_layer`` it equals
    (``hidden_states.K``, ``attention_mask.K``, ``cos.K``, ``sin.K``; an output that matches
    nothing is ``boundary_<i>``).

    Raises:
        InputError: two outputs match the same argument, or one output several.
    """
    import torch

    from analyzer.export.pipeline import hf_tracing_patches

    captured: dict[str, torch.Tensor] = {}

    def hook(module, args, kwargs):
        captured["hidden_states"] = args[0] if args else kwargs["hidden_states"]
        if isinstance(kwargs.get("attention_mask"), torch.Tensor):
            captured["attention_mask"] = kwargs["attention_mask"]
        pe = kwargs.get("position_embeddings")
        if pe is not None:
            captured["cos"], captured["sin"] = pe

    handle = hf_model.model.layers[split_layer].register_forward_pre_hook(hook, with_kwargs=True)
    try:
        with torch.no_grad(), hf_tracing_patches():
            hf_model(input_ids=ids, use_cache=False)
    finally:
        handle.remove()
    names = []
    for i, out in enumerate(stage0_outputs):
        hits = [k for k, v in captured.items() if v.shape == out.shape and v.dtype == out.dtype and torch.equal(v, out)]
        if len(hits) > 1:
            raise InputError(f"stage 0 output {i} equals several inputs of layer {split_layer}: {hits}")
        names.append(f"{hits[0]}.{split_layer}" if hits else f"boundary_{i}")
    if len(set(names)) != len(names):
        raise InputError(f"boundary names are not unique: {names}")
    return names


def trace_stage(fn, inputs):
    """``make_fx`` of a stage function (an Interpreter over a pipelining stage graph), keeping each
    node's ``nn_module_stack`` and ``stack_trace``."""
    import torch
    import torch.fx.traceback as fx_traceback
    from torch.fx.experimental.proxy_tensor import make_fx

    from analyzer.export.pipeline import hf_tracing_patches

    with torch.no_grad(), fx_traceback.preserve_node_meta(), hf_tracing_patches(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(fn, record_stack_traces=True)(*inputs)
    gm.eval()
    return gm


def export_stage(gm, inputs, input_names, output_names, weights, *, meta):
    """ONNX export of a traced stage, post-processed as :func:`analyzer.export.pipeline.export_onnx`
    does, with the boundary names as its graph inputs and outputs.

    Args:
        gm: the traced stage.
        inputs: example inputs (tensors), in order.
        input_names, output_names: graph input and output names (the boundary names).
        weights: get_attr target -> module path of the weight (:func:`analyzer.export.pipeline.constant_names`).
        meta: model metadata (``doc``, ``model``, ``stage``, ...).

    Returns:
        The checked ModelProto (``shardlog.rank`` -1, ``shardlog.stage`` from ``meta``).

    Raises:
        RuntimeError: the export renamed a boundary tensor (a bug of the exporter, not of the input).
    """
    import onnx

    from analyzer.export.pipeline import _optimize_keeping_weights, _rename_values, finish_model, torch_export

    proto = torch_export(gm, inputs, 1, input_names, output_names).model_proto
    _rename_values(proto.graph, weights)
    proto = _optimize_keeping_weights(proto, set(weights.values()))
    g = proto.graph
    known = {v.name for v in [*g.value_info, *g.output, *g.input]}
    if any(o and o not in known for n in g.node for o in n.output):
        proto = onnx.shape_inference.infer_shapes(proto)
    got_in = [i.name for i in proto.graph.input]
    got_out = [o.name for o in proto.graph.output]
    if got_in != list(input_names) or got_out != list(output_names):
        raise RuntimeError(f"stage export renamed its boundary: inputs {got_in}, outputs {got_out}")
    return finish_model(proto, -1, 1, meta)


@with_collective_schemas
def export_hf_stages(config, out_dir, *, split_layer: int | None = None, seq_len: int = 8, batch: int = 1,
                     seed: int = 0) -> list:  # fmt: skip
    """``seq.onnx``, ``stage0.onnx`` and ``stage1.onnx`` of a Hugging Face causal LM built from
    ``config`` (:func:`analyzer.export.hf_config`) with seeded random weights, split before decoder
    layer ``split_layer`` (default: the middle one).

    Raises:
        InputError: a bad config or split layer, a used output folder, a split that is not two
            stages fed by stage 0.
    """
    import onnx
    import torch
    from torch.fx import Interpreter

    from analyzer.export import _fresh_folder, hf_config
    from analyzer.export.collectives import register_collective_schemas
    from analyzer.export.mesh import FileJob, build_model, export_file

    register_collective_schemas()
    cfg = hf_config(config)
    job = FileJob(cfg, None, 1, 1, -1, batch, seq_len, seed)
    model = build_model(job)
    layers = len(model.model.layers)
    k = layers // 2 if split_layer is None else split_layer
    if not 0 < k < layers:
        raise InputError(f"--split-layer {k}: the model has layers 0..{layers - 1}; split at 1..{layers - 1}")
    out = _fresh_folder(out_dir, 0, ["stage0.onnx", "stage1.onnx"])
    written = [out / "seq.onnx"]
    onnx.save(onnx.load_from_string(export_file(job)), written[0])  # the same weights and tokens as the stages
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=g, dtype=torch.int64)
    stage0, stage1, route = split_model(model, ids, k)
    with torch.no_grad():
        outs0 = stage0(ids)
    outs0 = outs0 if isinstance(outs0, tuple) else (outs0,)
    names = boundary_names(model, ids, k, outs0)
    stage1_inputs = [outs0[i] for i in route]
    stage1_names = [names[i] for i in route]

    def stage0_fn(x):
        res = Interpreter(stage0).run(x)
        return res if isinstance(res, tuple) else (res,)

    def stage1_fn(*xs):
        return Interpreter(stage1).run(*xs)

    from analyzer.export.pipeline import constant_names

    kind = type(model).__name__
    parts = [(stage0_fn, [ids], ["input_ids"], names), (stage1_fn, stage1_inputs, stage1_names, ["logits"])]
    for s, (fn, inputs, in_names, out_names) in enumerate(parts):
        gm = trace_stage(fn, inputs)
        doc = f"{kind} pipeline stage {s}/2, split before model.layers.{k}"
        proto = export_stage(gm, inputs, in_names, out_names, constant_names(gm, model),
                             meta={"model": kind, "doc": doc, "stage": s})  # fmt: skip
        written.append(out / f"stage{s}.onnx")
        onnx.save(proto, written[-1])
    return written
