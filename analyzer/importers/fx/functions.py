"""ONNX local-function bodies of custom kernels, so ``onnx.reference.ReferenceEvaluator`` (and the
numeric witness, which inlines them) can run imported graphs.

Bodies (computed in float32 and cast back, as the CUDA kernels do):

- ``apex::fused_layer_norm_affine_fwd(input, weight, bias; normalized_shape, eps)`` ->
  ``(output, mean, invvar)``: layer norm over the trailing ``len(normalized_shape)`` axes;
  mean and 1/sqrt(var + eps) per row, float32, with the row axes (apex csrc/layer_norm_cuda.cpp
  keeps them flattened: the importer adds that Reshape after the kernel node).
- ``vllm._C::rms_norm(input, weight; epsilon)``: ``(x / sqrt(mean(x^2, -1) + eps)).to(x.dtype) * weight``
  (vllm csrc/layernorm_kernels.cu).
- ``vllm._C::fused_add_rms_norm(input, residual, weight; epsilon)`` -> ``(rms_norm(input + residual),
  input + residual)``.
- ``vllm._C::silu_and_mul(input)``: ``silu(x[..., :d]) * x[..., d:]``, ``d`` half the last dimension
  (vllm csrc/activation_kernels.cu).
- ``aten::_softmax_backward_data(grad_output, output; dim, input_dtype)``:
  ``(output * (grad_output - sum(grad_output * output, dim, keepdim=True))).to(input_dtype)``
  (ATen native/SoftMax.cpp).

Without a body (the graph imports and checks, but cannot be run numerically):
``apex::fused_layer_norm_affine_bwd``, ``vllm::unified_attention_with_output`` (depends on the
attention metadata and KV cache of the engine), ``vllm._C::rotary_embedding``,
``aten::embedding_dense_backward``, ``aten::gelu_backward``, and the collectives.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import AttributeProto, TensorProto, helper

__all__ = ["FUNCTION_BODIES", "function_protos"]

OPSET = 20
_FLOAT = TensorProto.FLOAT


def _ref(name: str, ref: str, kind: int) -> AttributeProto:
    attr = helper.make_attribute_ref(name, kind)
    attr.ref_attr_name = ref
    return attr


def _n(op: str, inputs: list[str], outputs: list[str], *ref_attrs: AttributeProto, **attrs) -> onnx.NodeProto:
    node = helper.make_node(op, inputs, outputs, **attrs)
    node.attribute.extend(ref_attrs)
    return node


def _const_ints(name: str, values: list[int]) -> onnx.NodeProto:
    return _n("Constant", [], [name], value_ints=values)


def _rms(x: str, eps: str, prefix: str) -> list[onnx.NodeProto]:
    """Nodes computing ``<prefix>r = 1 / sqrt(mean(x*x, -1) + eps)`` for a float32 ``x``."""
    return [
        _const_ints(f"{prefix}axes", [-1]),
        _n("Mul", [x, x], [f"{prefix}sq"]),
        _n("ReduceMean", [f"{prefix}sq", f"{prefix}axes"], [f"{prefix}var"], keepdims=1),
        _n("Add", [f"{prefix}var", eps], [f"{prefix}vareps"]),
        _n("Sqrt", [f"{prefix}vareps"], [f"{prefix}std"]),
        _n("Reciprocal", [f"{prefix}std"], [f"{prefix}r"]),
    ]


def _layer_norm_fwd() -> tuple[list[str], list[str], list[str], list[onnx.NodeProto]]:
    nodes = [
        _n("Constant", [], ["ns"], _ref("value_ints", "normalized_shape", AttributeProto.INTS)),
        _n("Size", ["ns"], ["k"]),
        _n("Neg", ["k"], ["negk"]),
        _n("Constant", [], ["zero"], value_int=0),
        _n("Constant", [], ["one"], value_int=1),
        _n("Range", ["negk", "zero", "one"], ["axes"]),
        _n("Cast", ["input"], ["xf"], to=_FLOAT),
        _n("ReduceMean", ["xf", "axes"], ["mu"], keepdims=1),
        _n("Sub", ["xf", "mu"], ["d"]),
        _n("Mul", ["d", "d"], ["d2"]),
        _n("ReduceMean", ["d2", "axes"], ["var"], keepdims=1),
        _n("Constant", [], ["epsv"], _ref("value_float", "eps", AttributeProto.FLOAT)),
        _n("Add", ["var", "epsv"], ["vareps"]),
        _n("Sqrt", ["vareps"], ["std"]),
        _n("Reciprocal", ["std"], ["inv"]),
        _n("Mul", ["d", "inv"], ["xhat"]),
        _n("Cast", ["weight"], ["wf"], to=_FLOAT),
        _n("Cast", ["bias"], ["bf"], to=_FLOAT),
        _n("Mul", ["xhat", "wf"], ["scaled"]),
        _n("Add", ["scaled", "bf"], ["yf"]),
        _n("CastLike", ["yf", "input"], ["output"]),
        _n("Squeeze", ["mu", "axes"], ["mean"]),
        _n("Squeeze", ["inv", "axes"], ["invvar"]),
    ]
    return ["input", "weight", "bias"], ["output", "mean", "invvar"], ["normalized_shape", "eps"], nodes


def _rms_norm() -> tuple[list[str], list[str], list[str], list[onnx.NodeProto]]:
    nodes = [
        _n("Constant", [], ["eps"], _ref("value_float", "epsilon", AttributeProto.FLOAT)),
        _n("Cast", ["input"], ["xf"], to=_FLOAT),
        *_rms("xf", "eps", ""),
        _n("Mul", ["xf", "r"], ["nf"]),
        _n("CastLike", ["nf", "input"], ["n"]),
        _n("CastLike", ["weight", "input"], ["w"]),
        _n("Mul", ["n", "w"], ["out"]),
    ]
    return ["input", "weight"], ["out"], ["epsilon"], nodes


def _fused_add_rms_norm() -> tuple[list[str], list[str], list[str], list[onnx.NodeProto]]:
    nodes = [
        _n("Constant", [], ["eps"], _ref("value_float", "epsilon", AttributeProto.FLOAT)),
        _n("Cast", ["input"], ["xf"], to=_FLOAT),
        _n("Cast", ["residual"], ["rf"], to=_FLOAT),
        _n("Add", ["xf", "rf"], ["sf"]),
        _n("CastLike", ["sf", "residual"], ["residual_out"]),
        *_rms("sf", "eps", ""),
        _n("Cast", ["residual_out"], ["zf"], to=_FLOAT),
        _n("Mul", ["zf", "r"], ["nf"]),
        _n("CastLike", ["nf", "input"], ["n"]),
        _n("CastLike", ["weight", "input"], ["w"]),
        _n("Mul", ["n", "w"], ["out"]),
    ]
    return ["input", "residual", "weight"], ["out", "residual_out"], ["epsilon"], nodes


def _silu_and_mul() -> tuple[list[str], list[str], list[str], list[onnx.NodeProto]]:
    nodes = [
        _n("Split", ["input"], ["gate", "up"], axis=-1, num_outputs=2),
        _n("Sigmoid", ["gate"], ["sig"]),
        _n("Mul", ["gate", "sig"], ["silu"]),
        _n("Mul", ["silu", "up"], ["out"]),
    ]
    return ["input"], ["out"], [], nodes


def _softmax_backward_data() -> tuple[list[str], list[str], list[str], list[onnx.NodeProto]]:
    nodes = [
        _n("Constant", [], ["dim"], _ref("value_int", "dim", AttributeProto.INT)),
        _const_ints("one", [1]),
        _n("Reshape", ["dim", "one"], ["axes"]),
        _n("CastLike", ["output", "grad_output"], ["y"]),
        _n("Mul", ["grad_output", "y"], ["gy"]),
        _n("ReduceSum", ["gy", "axes"], ["s"], keepdims=1),
        _n("Sub", ["grad_output", "s"], ["diff"]),
        _n("Mul", ["y", "diff"], ["g"]),
        _n("Cast", ["g"], ["grad_input"], _ref("to", "input_dtype", AttributeProto.INT)),
    ]
    return ["grad_output", "output"], ["grad_input"], ["dim", "input_dtype"], nodes


#: (domain, op_type) -> builder of (inputs, outputs, attribute names, nodes)
FUNCTION_BODIES: dict[tuple[str, str], Callable[[], tuple]] = {
    ("apex", "fused_layer_norm_affine_fwd"): _layer_norm_fwd,
    ("vllm._C", "rms_norm"): _rms_norm,
    ("vllm._C", "fused_add_rms_norm"): _fused_add_rms_norm,
    ("vllm._C", "silu_and_mul"): _silu_and_mul,
    ("aten", "_softmax_backward_data"): _softmax_backward_data,
}


def function_protos(used: set[tuple[str, str]]) -> list[onnx.FunctionProto]:
    """The local functions for the custom ops in ``used`` ((domain, op_type) pairs) that have a body."""
    out = []
    for domain, op_type in sorted(used):
        build = FUNCTION_BODIES.get((domain, op_type))
        if build is None:
            continue
        inputs, outputs, attrs, nodes = build()
        out.append(
            helper.make_function(
                domain, op_type, inputs, outputs, nodes, [helper.make_opsetid("", OPSET)], attributes=attrs
            )
        )
    return out
