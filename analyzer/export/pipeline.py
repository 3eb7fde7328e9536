"""A traced PyTorch program to an ONNX graph shardlog reads: ``make_fx`` below DTensor (local
ATen ops on local shards plus ``_c10d_functional`` collectives), ``torch.onnx.export(dynamo=True)``
with the collectives translated (:mod:`analyzer.export.collectives`), constants renamed to the
module paths of the parameters they are, the onnxscript optimizer run with the weights kept
(never folded into anonymous tensors), node metadata trimmed to module scopes and source
frames (paths made relative to site-packages or to :data:`OPTS` ``source_root``), and the rank,
world size and case recorded in the model's ``metadata_props`` (``shardlog.rank``, read back by
:mod:`analyzer.inputs.rank_files`).

Needs the ``export`` extra (torch, transformers, onnxscript).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from typing import TYPE_CHECKING

from analyzer.export.collectives import WORLD, translation_table

if TYPE_CHECKING:
    import onnx

__all__ = [
    "OPSET",
    "OPTS",
    "constant_names",
    "export_onnx",
    "finish_model",
    "hf_tracing_patches",
    "torch_export",
    "trace",
]

OPSET = 18
#: innermost stack frames kept per node (0 = all); the folder source paths are made relative to
OPTS = {"stack_frames": 3, "source_root": os.getcwd()}
_OPTS = OPTS


@contextlib.contextmanager
def hf_tracing_patches():
    import transformers.masking_utils as mu

    saved = mu.is_tracing
    mu.is_tracing = lambda *a, **k: True
    try:
        yield
    finally:
        mu.is_tracing = saved


def trace(model, ids):
    """make_fx the model down to local ATen ops + c10d functional collectives."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def forward(input_ids):
        logits = model(input_ids=input_ids, use_cache=False).logits
        # a vocab-sharded DTensor (lm_head with use_local_output=False): the caller gathers it
        return logits.full_tensor() if hasattr(logits, "full_tensor") else logits

    forward._orig_mod = model  # lets make_fx record nn_module_stack (module paths)
    with torch.no_grad(), hf_tracing_patches(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(forward, record_module_stack=True, record_stack_traces=True)(ids)
    gm.eval()
    return gm


def trace_call(model, inputs: tuple, call):
    """``make_fx`` of ``call(model, *inputs)`` (a tensor, or a DTensor gathered to its full
    value), with module paths and stack traces recorded on every node."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def forward(*args):
        out = call(model, *args)
        return out.full_tensor() if hasattr(out, "full_tensor") else out

    forward._orig_mod = model  # lets make_fx record nn_module_stack (module paths)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(forward, record_module_stack=True, record_stack_traces=True)(*inputs)
    gm.eval()
    return gm


def constant_names(gm, model):
    """Map the GraphModule's get_attr constants to the model's parameter / buffer names."""
    from torch.distributed.tensor import DTensor

    by_ptr = {}
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        local = t.to_local() if isinstance(t, DTensor) else t
        by_ptr.setdefault((local.data_ptr(), tuple(local.shape)), name)
    mapping = {}
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        t = getattr(gm, node.target)
        name = by_ptr.get((t.data_ptr(), tuple(t.shape)))
        if name is None and t.numel() == 1:
            continue  # a lifted scalar (DTensor's masked lookup: masked_input[mask] = 0)
        if name is None:
            raise RuntimeError(f"cannot map traced constant {node.target} {tuple(t.shape)} to a parameter")
        mapping[node.target] = name
    return mapping


def _rename_values(graph, mapping):
    for init in graph.initializer:
        init.name = mapping.get(init.name, init.name)
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        vi.name = mapping.get(vi.name, vi.name)
    for node in graph.node:
        for i, x in enumerate(node.input):
            if x in mapping:
                node.input[i] = mapping[x]
        for i, x in enumerate(node.output):
            if x in mapping:
                node.output[i] = mapping[x]


def _optimize_keeping_weights(proto, weight_names):
    """Run the onnxscript optimizer with the weights turned into graph inputs (never folded)."""
    import onnx
    import onnxscript

    g = proto.graph
    kept = [t for t in g.initializer if t.name in weight_names]
    others = [t for t in g.initializer if t.name not in weight_names]
    del g.initializer[:]
    g.initializer.extend(others)
    n_user_inputs = len(g.input)
    for t in kept:
        g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    proto = onnxscript.optimizer.optimize(proto)
    g = proto.graph
    user_inputs = list(g.input)[:n_user_inputs]
    del g.input[:]
    g.input.extend(user_inputs)
    # weights first, in module order, then folded constants
    rest = list(g.initializer)
    del g.initializer[:]
    g.initializer.extend(kept + rest)
    return proto


def _site() -> re.Pattern:
    """The path prefixes stripped from recorded frames: site-packages, and the source root."""
    root = re.escape(str(OPTS["source_root"]).rstrip("/"))
    return re.compile(r'File "[^"]*?/(?:site-packages|dist-packages)/|File "' + root + "/")


# the exporter's own forward wrapper (here, or scripts/export_hf_tp.py's): not the user's code
_SELF_FRAME = re.compile(r'File "[^"]*(?:export_hf_tp|analyzer/export/pipeline)\.py", line \d+, in \w+\n[^\n]*\n\s*')


def _trim_metadata(proto):
    """Keep module path + source-line metadata, drop redundant/bulky keys, shorten paths."""
    drop = {"pkg.torch.onnx.class_hierarchy", "pkg.torch.onnx.fx_node"}
    for node in proto.graph.node:
        keep = []
        for m in node.metadata_props:
            if m.key in drop:
                continue
            if m.key == "pkg.torch.onnx.stack_trace":
                v = _site().sub('File "', _SELF_FRAME.sub("", m.value, count=1))
                frames = [f for f in re.split(r"\n\s*(?=File \")", v.strip()) if f]
                if _OPTS["stack_frames"] > 0:
                    frames = frames[-_OPTS["stack_frames"] :]
                m.value = "\n".join(frames)
            elif m.key == "namespace":
                # "<path>: <module class>/..." -> short class names (op names kept)
                segs = []
                for seg in m.value.split("/"):
                    path, _, cls = seg.rpartition(": ")
                    if cls.startswith(("transformers.", "torch.")):
                        cls = cls.rsplit(".", 1)[-1]
                    segs.append(f"{path}: {cls}")
                m.value = "/".join(segs)
            keep.append((m.key, m.value))
        del node.metadata_props[:]
        for k, v in keep:
            e = node.metadata_props.add()
            e.key, e.value = k, v
    # nodes created by the optimizer (e.g. Split replacing SplitToSequence/SequenceAt)
    # have no metadata: inherit it from their producer (else their first consumer)
    producer = {o: n for n in proto.graph.node for o in n.output}
    consumers = {}
    for n in proto.graph.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    for node in proto.graph.node:
        if any(m.key == "pkg.torch.onnx.name_scopes" for m in node.metadata_props):
            continue
        cands = [producer.get(x) for x in node.input] + [c for o in node.output for c in consumers.get(o, [])]
        src = next((c for c in cands if c is not None and c.metadata_props), None)
        if src is None:
            continue
        for m in src.metadata_props:
            if m.key != "pkg.torch.onnx.fx_node":
                e = node.metadata_props.add()
                e.key, e.value = m.key, m.value


def torch_export(gm, args, world_size, input_names=("input_ids",), output_names=("logits",)):
    """``torch.onnx.export(dynamo=True)`` of a traced GraphModule with the collectives mapped to
    ``com.microsoft`` ops (shared by every producer in scripts/ and the package's exports);
    returns the ONNXProgram."""
    import torch

    output_names = output_names or ()
    WORLD["n"] = world_size
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        return torch.onnx.export(
            gm,
            tuple(args),
            dynamo=True,
            custom_translation_table=translation_table(),
            opset_version=OPSET,
            input_names=list(input_names),
            output_names=list(output_names),
            optimize=False,
            verbose=False,
        )


def export_onnx(gm, ids, names, *, rank, world_size, meta, input_names=("input_ids",), output_names=("logits",)):
    """The traced program ``gm`` (run on ``ids``, one tensor or a tuple) as a finished ONNX model."""
    import onnx

    prog = torch_export(gm, ids if isinstance(ids, tuple) else (ids,), world_size, input_names, output_names)
    proto = prog.model_proto
    _rename_values(proto.graph, names)
    weight_names = set(names.values())
    proto = _optimize_keeping_weights(proto, weight_names)
    g = proto.graph
    # every node output should carry a static shape; fill gaps with shape inference
    known = {v.name for v in list(g.value_info) + list(g.output) + list(g.input)}
    missing = [o for n in g.node for o in n.output if o and o not in known]
    if missing:
        proto = onnx.shape_inference.infer_shapes(proto)
    used = {x for n in proto.graph.node for x in n.input}
    unused = sorted(weight_names - used - {t for t in weight_names if "inv_freq" in t})
    present = {t.name for t in proto.graph.initializer}
    if weight_names - present:
        raise RuntimeError(f"weights lost during optimisation: {sorted(weight_names - present)}")
    if unused:
        print(f"  note: unused weights in rank {rank}: {unused}", file=sys.stderr)
    return finish_model(proto, rank, world_size, meta)


def finish_model(proto: onnx.ModelProto, rank: int, world_size: int, meta: dict) -> onnx.ModelProto:
    """Trim node metadata, record rank / world size / case metadata on the model, check it."""
    import onnx

    _trim_metadata(proto)
    proto.doc_string = meta.get("doc", "")
    for k, v in {
        "shardlog.rank": str(rank),
        "shardlog.world_size": str(world_size),
        **{f"shardlog.{k}": str(v) for k, v in meta.items() if k != "doc"},
    }.items():
        e = proto.metadata_props.add()
        e.key, e.value = k, v
    onnx.checker.check_model(proto)
    return proto
