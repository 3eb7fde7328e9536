"""torch.fx ATen graph dumps -> ONNX: each mapping family run through the ONNX reference
evaluator against numpy, errors as one-line InputErrors, and every published dump imported."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from conftest import ENTANGLE_BUNDLED, ENTANGLE_SHARED
from onnx.reference import ReferenceEvaluator

from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.facts import parse_source
from analyzer.importers.fx import import_fx, parse_fx

RNG = np.random.default_rng(0)


def _dump(tmp_path: Path, params: str, body: str, name: str = "g.py") -> Path:
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    path = tmp_path / name
    path.write_text(
        "import torch\nfrom torch import device\n\n\n"
        f"class GraphModule(torch.nn.Module):\n    def forward(self, {params}):\n{lines}\n"
    )
    return path


def _run(model: onnx.ModelProto, **feeds) -> dict[str, np.ndarray]:
    onnx.checker.check_model(model, full_check=True)
    outs = ReferenceEvaluator(model).run(None, feeds)
    return dict(zip([o.name for o in model.graph.output], outs))


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _ops(model):
    return [(n.domain, n.op_type) for n in model.graph.node]


# --- views --------------------------------------------------------------------------------


def test_views_and_layout(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2, 3, 4]", v: "f32[3, 1]"',
        """
        view: "f32[6, 4]" = torch.ops.aten.view.default(x, [-1, 4])
        t: "f32[4, 6]" = torch.ops.aten.t.default(view)
        transpose: "f32[4, 3, 2]" = torch.ops.aten.transpose.int(x, 0, -1)
        permute: "f32[3, 4, 2]" = torch.ops.aten.permute.default(x, [1, 2, 0])
        unsqueeze: "f32[2, 3, 1, 4]" = torch.ops.aten.unsqueeze.default(x, -2)
        expand: "f32[2, 3, 5]" = torch.ops.aten.expand.default(v, [2, -1, 5])
        _unsafe_view: "f32[24]" = torch.ops.aten._unsafe_view.default(permute, [24])
        return (t, transpose, unsqueeze, expand, _unsafe_view)
        """,
    )
    x, v = _f32(2, 3, 4), _f32(3, 1)
    got = _run(import_fx(path), x=x, v=v)
    np.testing.assert_array_equal(got["t"], x.reshape(6, 4).T)
    np.testing.assert_array_equal(got["transpose"], x.transpose(2, 1, 0))
    np.testing.assert_array_equal(got["unsqueeze"], x[:, :, None, :])
    np.testing.assert_array_equal(got["expand"], np.broadcast_to(v, (2, 3, 5)))
    np.testing.assert_array_equal(got["_unsafe_view"], x.transpose(1, 2, 0).reshape(-1))


# --- matrix products ----------------------------------------------------------------------


def test_mm_addmm_baddbmm(tmp_path):
    path = _dump(
        tmp_path,
        'a: "f32[2, 3]", b: "f32[3, 4]", bias: "f32[4]", inp: "f32[5, 2, 4]", b1: "f32[5, 2, 3]", b2: "f32[5, 3, 4]"',
        """
        mm: "f32[2, 4]" = torch.ops.aten.mm.default(a, b)
        addmm: "f32[2, 4]" = torch.ops.aten.addmm.default(bias, a, b)
        bmm: "f32[5, 2, 4]" = torch.ops.aten.bmm.default(b1, b2)
        baddbmm: "f32[5, 2, 4]" = torch.ops.aten.baddbmm.default(inp, b1, b2, beta = 0.0, alpha = 0.25)
        baddbmm_1: "f32[5, 2, 4]" = torch.ops.aten.baddbmm.default(inp, b1, b2, beta = 0.5, alpha = 2)
        return (mm, addmm, bmm, baddbmm, baddbmm_1)
        """,
    )
    a, b, bias, inp, b1, b2 = _f32(2, 3), _f32(3, 4), _f32(4), _f32(5, 2, 4), _f32(5, 2, 3), _f32(5, 3, 4)
    inp[0, 0, 0] = np.nan  # ignored when beta == 0
    model = import_fx(path)
    got = _run(model, a=a, b=b, bias=bias, inp=inp, b1=b1, b2=b2)
    np.testing.assert_allclose(got["mm"], a @ b, rtol=1e-6)
    np.testing.assert_allclose(got["addmm"], a @ b + bias, rtol=1e-6)
    np.testing.assert_allclose(got["bmm"], b1 @ b2, rtol=1e-6)
    np.testing.assert_allclose(got["baddbmm"], 0.25 * (b1 @ b2), rtol=1e-6)
    assert np.isnan(got["baddbmm_1"][0, 0, 0])
    np.testing.assert_allclose(got["baddbmm_1"][1:], (0.5 * inp + 2 * (b1 @ b2))[1:], rtol=1e-5)
    assert "addmm/matmul" in {o for n in model.graph.node for o in n.output}


# --- elementwise --------------------------------------------------------------------------


def test_arithmetic_with_scalars_alpha_and_promotion(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[4]", y: "f32[4]", i: "i64[4]", m: "b8[4]"',
        """
        add: "f32[4]" = torch.ops.aten.add.Tensor(x, y, alpha = 2)
        add_1: "f32[4]" = torch.ops.aten.add.Tensor(x, 1.5)
        sub: "f32[4]" = torch.ops.aten.sub.Tensor(x, y)
        mul: "i64[4]" = torch.ops.aten.mul.Tensor(m, 7)
        mul_1: "i64[4]" = torch.ops.aten.mul.Tensor(m, i)
        div: "f32[4]" = torch.ops.aten.div.Tensor(i, 2)
        div_1: "f32[4]" = torch.ops.aten.div.Tensor(x, i)
        rsub: "f32[4]" = torch.ops.aten.rsub.Scalar(x, 1.0)
        mul_2: "f32[4]" = torch.ops.aten.mul.Scalar(x, 3)
        return (add, add_1, sub, mul, mul_1, div, div_1, rsub, mul_2)
        """,
    )
    x, y, m = _f32(4), _f32(4), np.array([True, False, True, False])
    i = np.array([1, 2, 3, 4], dtype=np.int64)
    got = _run(import_fx(path), x=x, y=y, i=i, m=m)
    np.testing.assert_allclose(got["add"], x + 2 * y, rtol=1e-6)
    np.testing.assert_allclose(got["add_1"], x + 1.5, rtol=1e-6)
    np.testing.assert_allclose(got["sub"], x - y, rtol=1e-6)
    np.testing.assert_array_equal(got["mul"], m * 7)
    assert got["mul"].dtype == np.int64
    np.testing.assert_array_equal(got["mul_1"], m * i)
    np.testing.assert_allclose(got["div"], i / 2)
    np.testing.assert_allclose(got["div_1"], x / i, rtol=1e-6)
    np.testing.assert_allclose(got["rsub"], 1.0 - x, rtol=1e-6)
    np.testing.assert_allclose(got["mul_2"], 3 * x, rtol=1e-6)


def test_comparisons_and_bitwise(tmp_path):
    path = _dump(
        tmp_path,
        'i: "i64[5]", j: "i64[5]", x: "f32[5]"',
        """
        lt: "b8[5]" = torch.ops.aten.lt.Scalar(i, 2)
        ge: "b8[5]" = torch.ops.aten.ge.Scalar(i, 4)
        le: "b8[5]" = torch.ops.aten.le.Tensor(i, j)
        gt: "b8[5]" = torch.ops.aten.gt.Scalar(x, 0)
        eq: "b8[5]" = torch.ops.aten.eq.Tensor(i, j)
        lt_1: "b8[5]" = torch.ops.aten.lt.Scalar(i, 2.5)
        bitwise_or: "b8[5]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
        bitwise_and: "b8[5]" = torch.ops.aten.bitwise_and.Tensor(lt, le)
        bitwise_not: "b8[5]" = torch.ops.aten.bitwise_not.default(eq)
        bitwise_or_1: "i64[5]" = torch.ops.aten.bitwise_or.Tensor(i, j)
        bitwise_not_1: "i64[5]" = torch.ops.aten.bitwise_not.default(i)
        return (bitwise_or, bitwise_and, bitwise_not, gt, lt_1, bitwise_or_1, bitwise_not_1)
        """,
    )
    i = np.array([0, 1, 2, 4, 5], dtype=np.int64)
    j = np.array([1, 1, 0, 4, 9], dtype=np.int64)
    x = np.array([-1, 0, 1, 2, -3], dtype=np.float32)
    model = import_fx(path)
    got = _run(model, i=i, j=j, x=x)
    np.testing.assert_array_equal(got["bitwise_or"], (i < 2) | (i >= 4))
    np.testing.assert_array_equal(got["bitwise_and"], (i < 2) & (i <= j))
    np.testing.assert_array_equal(got["bitwise_not"], ~(i == j))
    np.testing.assert_array_equal(got["gt"], x > 0)
    np.testing.assert_array_equal(got["lt_1"], i < 2.5)
    np.testing.assert_array_equal(got["bitwise_or_1"], i | j)
    np.testing.assert_array_equal(got["bitwise_not_1"], ~i)
    ops = {op for _, op in _ops(model)}
    assert {"Or", "And", "Not", "BitwiseOr", "BitwiseNot", "Less", "LessOrEqual", "Equal"} <= ops


def test_unary_gelu_softmax(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2, 5]", p: "f32[2, 5]"',
        """
        exp: "f32[2, 5]" = torch.ops.aten.exp.default(x)
        log: "f32[2, 5]" = torch.ops.aten.log.default(p)
        neg: "f32[2, 5]" = torch.ops.aten.neg.default(x)
        sqrt: "f32[2, 5]" = torch.ops.aten.sqrt.default(p)
        rsqrt: "f32[2, 5]" = torch.ops.aten.rsqrt.default(p)
        tanh: "f32[2, 5]" = torch.ops.aten.tanh.default(x)
        gelu: "f32[2, 5]" = torch.ops.aten.gelu.default(x)
        gelu_1: "f32[2, 5]" = torch.ops.aten.gelu.default(x, approximate = 'tanh')
        _softmax: "f32[2, 5]" = torch.ops.aten._softmax.default(x, -1, False)
        return (exp, log, neg, sqrt, rsqrt, tanh, gelu, gelu_1, _softmax)
        """,
    )
    x = _f32(2, 5)
    p = np.abs(_f32(2, 5)) + 0.1
    got = _run(import_fx(path), x=x, p=p)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(got["exp"], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(got["log"], np.log(p), rtol=1e-6)
    np.testing.assert_allclose(got["neg"], -x)
    np.testing.assert_allclose(got["sqrt"], np.sqrt(p), rtol=1e-6)
    np.testing.assert_allclose(got["rsqrt"], 1 / np.sqrt(p), rtol=1e-6)
    np.testing.assert_allclose(got["tanh"], np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(got["gelu"], 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-5, atol=1e-6)
    tanh_gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(got["gelu_1"], tanh_gelu, rtol=1e-5, atol=1e-6)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got["_softmax"], e / e.sum(-1, keepdims=True), rtol=1e-5)


# --- identities, copies, factories --------------------------------------------------------


def test_identities_copies_and_casts(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2, 3]", row: "f32[3]", i: "i32[2, 3]"',
        """
        clone: "f32[2, 3]" = torch.ops.aten.clone.default(x, memory_format = torch.contiguous_format)
        detach: "f32[2, 3]" = torch.ops.aten.detach.default(clone)
        alias: "f32[2, 3]" = torch.ops.aten.alias.default(detach)
        log_tensor: "f32[2, 3]" = torch.ops.tg.log_tensor.default(alias, 'x')
        _to_copy: "i64[2, 3]" = torch.ops.aten._to_copy.default(i, dtype = torch.int64, layout = torch.strided, device = device(type='cuda', index=0))
        _to_copy_1: "f32[2, 3]" = torch.ops.aten._to_copy.default(x, dtype = torch.float32)
        copy: "f32[2, 3]" = torch.ops.aten.copy.default(x, row)
        copy_1: "f32[2, 3]" = torch.ops.aten.copy.default(x, i)
        return (log_tensor, _to_copy, _to_copy_1, copy, copy_1)
        """,  # noqa: E501
    )
    x, row = _f32(2, 3), _f32(3)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    model = import_fx(path)
    got = _run(model, x=x, row=row, i=i)
    np.testing.assert_array_equal(got["log_tensor"], x)
    assert got["_to_copy"].dtype == np.int64 and (got["_to_copy"] == i).all()
    np.testing.assert_array_equal(got["_to_copy_1"], x)
    np.testing.assert_array_equal(got["copy"], np.broadcast_to(row, (2, 3)))
    np.testing.assert_array_equal(got["copy_1"], i.astype(np.float32))
    kinds = [op for _, op in _ops(model)]
    assert kinds.count("Identity") == 5 and "Cast" in kinds and "Expand" in kinds


def test_factories_are_zeros_and_arange(tmp_path):
    path = _dump(
        tmp_path,
        'x: "bf16[2, 3]"',
        """
        empty: "f32[2, 4]" = torch.ops.aten.empty.memory_format([2, 4], dtype = torch.float32, device = device(type='cuda', index=0), pin_memory = False)
        zeros: "i32[]" = torch.ops.aten.zeros.default([], dtype = torch.int32, device = device(type='cuda'), pin_memory = False)
        empty_like: "bf16[2, 3]" = torch.ops.aten.empty_like.default(x, pin_memory = False)
        new_empty_strided: "bf16[3, 2]" = torch.ops.aten.new_empty_strided.default(x, [3, 2], [2, 1])
        zeros_like: "bf16[2, 3]" = torch.ops.aten.zeros_like.default(x)
        arange: "i64[5]" = torch.ops.aten.arange.start(0, 5, device = device(type='cuda', index=0), pin_memory = False)
        arange_1: "i64[3]" = torch.ops.aten.arange.default(3)
        return (empty, zeros, empty_like, new_empty_strided, zeros_like, arange, arange_1)
        """,  # noqa: E501
    )
    model = import_fx(path)
    assert [op for _, op in _ops(model)].count("ConstantOfShape") == 5
    got = _run(model, x=np.zeros((2, 3), dtype=np.float32).astype(onnx.helper.tensor_dtype_to_np_dtype(16)))
    assert got["empty"].shape == (2, 4) and not got["empty"].any()
    assert got["zeros"].shape == () and got["zeros"].dtype == np.int32
    assert got["new_empty_strided"].shape == (3, 2)
    np.testing.assert_array_equal(got["arange"], np.arange(5))
    np.testing.assert_array_equal(got["arange_1"], np.arange(3))


def test_dropout_masks_are_inputs_named_by_order(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2, 3]"',
        """
        native_dropout = torch.ops.aten.native_dropout.default(x, 0.25, True)
        getitem: "f32[2, 3]" = native_dropout[0]
        getitem_1: "b8[2, 3]" = native_dropout[1];  native_dropout = None
        native_dropout_1 = torch.ops.aten.native_dropout.default(getitem, 0.5, True)
        getitem_2: "f32[2, 3]" = native_dropout_1[0]
        native_dropout_2 = torch.ops.aten.native_dropout.default(x, 0.5, False)
        getitem_3: "f32[2, 3]" = native_dropout_2[0]
        getitem_4: "b8[2, 3]" = native_dropout_2[1]
        return (getitem, getitem_1, getitem_2, getitem_3, getitem_4)
        """,
    )
    model = import_fx(path)
    inputs = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    assert inputs == {
        "x": onnx.TensorProto.FLOAT,
        "native_dropout.0": onnx.TensorProto.BOOL,
        "native_dropout.1": onnx.TensorProto.BOOL,
    }
    x = _f32(2, 3)
    m0 = np.array([[True, False, True], [True, True, False]])
    m1 = np.array([[False, True, True], [True, False, True]])
    got = _run(model, x=x, **{"native_dropout.0": m0, "native_dropout.1": m1})
    np.testing.assert_allclose(got["getitem"], x * m0 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(got["getitem_1"], m0)
    np.testing.assert_allclose(got["getitem_2"], x * m0 / 0.75 * m1 / 0.5, rtol=1e-6)
    np.testing.assert_array_equal(got["getitem_3"], x)
    assert got["getitem_4"].all()


# --- reductions ---------------------------------------------------------------------------


def test_reductions(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2, 3, 4]", m: "b8[2, 3]"',
        """
        sum_1: "f32[2]" = torch.ops.aten.sum.dim_IntList(x, [1, -1])
        sum_2: "f32[1, 3, 1]" = torch.ops.aten.sum.dim_IntList(x, [0, 2], True)
        sum_3: "f32[]" = torch.ops.aten.sum.default(x)
        sum_4: "i64[]" = torch.ops.aten.sum.default(m)
        mean: "f32[2, 3]" = torch.ops.aten.mean.dim(x, [-1])
        max_1 = torch.ops.aten.max.dim(x, -1)
        getitem: "f32[2, 3]" = max_1[0]
        getitem_1: "i64[2, 3]" = max_1[1];  max_1 = None
        max_2 = torch.ops.aten.max.dim(x, 0, True)
        return (sum_1, sum_2, sum_3, sum_4, mean, getitem, getitem_1)
        """,
    )
    x = _f32(2, 3, 4)
    m = np.array([[True, False, True], [True, True, False]])
    got = _run(import_fx(path), x=x, m=m)
    np.testing.assert_allclose(got["sum_1"], x.sum((1, 2)), rtol=1e-5)
    np.testing.assert_allclose(got["sum_2"], x.sum((0, 2), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(got["sum_3"], x.sum(), rtol=1e-5)
    assert got["sum_4"] == 4
    np.testing.assert_allclose(got["mean"], x.mean(-1), rtol=1e-5)
    np.testing.assert_array_equal(got["getitem"], x.max(-1))
    np.testing.assert_array_equal(got["getitem_1"], x.argmax(-1))


# --- slicing, joining, indexing -----------------------------------------------------------


def test_slice_scatter_cat_split(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[4, 6]", s: "f32[4, 2]"',
        """
        slice_1: "f32[4, 6]" = torch.ops.aten.slice.Tensor(x, 1, 0, 9223372036854775807)
        slice_2: "f32[2, 6]" = torch.ops.aten.slice.Tensor(x, 0, -2)
        slice_3: "f32[4, 2]" = torch.ops.aten.slice.Tensor(x, 1, 1, 5, 2)
        slice_scatter: "f32[4, 6]" = torch.ops.aten.slice_scatter.default(x, s, 1, 2, 4)
        slice_scatter_1: "f32[4, 6]" = torch.ops.aten.slice_scatter.default(x, slice_1, 1, 0, 9223372036854775807)
        slice_scatter_2: "f32[4, 6]" = torch.ops.aten.slice_scatter.default(x, s, 1, 0, 2)
        cat: "f32[4, 8]" = torch.ops.aten.cat.default([x, s], 1)
        split_with_sizes = torch.ops.aten.split_with_sizes.default(x, [1, 2, 3], -1)
        getitem: "f32[4, 1]" = split_with_sizes[0]
        getitem_2: "f32[4, 3]" = split_with_sizes[2];  split_with_sizes = None
        split = torch.ops.aten.split.Tensor(x, 3)
        getitem_3: "f32[1, 6]" = split[1]
        return (slice_2, slice_3, slice_scatter, slice_scatter_1, slice_scatter_2, cat, getitem, getitem_2, getitem_3)
        """,
    )
    x, s = _f32(4, 6), _f32(4, 2)
    model = import_fx(path)
    got = _run(model, x=x, s=s)
    np.testing.assert_array_equal(got["slice_2"], x[-2:])
    np.testing.assert_array_equal(got["slice_3"], x[:, 1:5:2])
    want = x.copy()
    want[:, 2:4] = s
    np.testing.assert_array_equal(got["slice_scatter"], want)
    np.testing.assert_array_equal(got["slice_scatter_1"], x)
    want = x.copy()
    want[:, :2] = s
    np.testing.assert_array_equal(got["slice_scatter_2"], want)
    np.testing.assert_array_equal(got["cat"], np.concatenate([x, s], 1))
    np.testing.assert_array_equal(got["getitem"], x[:, :1])
    np.testing.assert_array_equal(got["getitem_2"], x[:, 3:])
    np.testing.assert_array_equal(got["getitem_3"], x[3:])
    by_name = {n.name: n for n in model.graph.node}
    assert by_name["slice_scatter_1"].op_type == "Identity"
    assert list(by_name["split_with_sizes"].output) == ["getitem", "split_with_sizes/out1", "getitem_2"]


def test_embedding_index_index_put_masked_fill(tmp_path):
    path = _dump(
        tmp_path,
        'w: "f32[10, 3]", ids: "i64[2, 4]", m: "b8[2, 4]", logits: "f32[4, 5]", tgt: "i64[4]", upd: "f32[4]"',
        """
        embedding: "f32[2, 4, 3]" = torch.ops.aten.embedding.default(w, ids)
        index: "f32[2, 4, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        _tensor_constant0 = self._tensor_constant0
        lift_fresh_copy: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
        index_put: "f32[2, 4, 3]" = torch.ops.aten.index_put.default(embedding, [m], lift_fresh_copy)
        unsqueeze: "b8[2, 4, 1]" = torch.ops.aten.unsqueeze.default(m, -1)
        masked_fill: "f32[2, 4, 3]" = torch.ops.aten.masked_fill.Scalar(index, unsqueeze, -1.0)
        arange: "i64[4]" = torch.ops.aten.arange.start(0, 4, device = device(type='cuda', index=0), pin_memory = False)
        index_1: "f32[4]" = torch.ops.aten.index.Tensor(logits, [arange, tgt])
        index_put_1: "f32[4, 5]" = torch.ops.aten.index_put.default(logits, [arange, tgt], upd)
        index_put_2: "f32[4, 5]" = torch.ops.aten.index_put.default(logits, [arange, tgt], upd, True)
        return (embedding, index, index_put, masked_fill, index_1, index_put_1, index_put_2)
        """,
    )
    w, logits, upd = _f32(10, 3), _f32(4, 5), _f32(4)
    ids = np.array([[0, 3, 9, 3], [1, 2, 2, 0]], dtype=np.int64)
    m = ids == 3
    tgt = np.array([4, 0, 2, 2], dtype=np.int64)
    model = import_fx(path, constants={"_tensor_constant0": 0.0})
    assert [i.name for i in model.graph.initializer if i.name == "_tensor_constant0"]
    got = _run(model, w=w, ids=ids, m=m, logits=logits, tgt=tgt, upd=upd)
    np.testing.assert_array_equal(got["embedding"], w[ids])
    np.testing.assert_array_equal(got["index"], w[ids])
    want = w[ids].copy()
    want[m] = 0.0
    np.testing.assert_array_equal(got["index_put"], want)
    want = w[ids].copy()
    want[m, :] = -1.0
    np.testing.assert_array_equal(got["masked_fill"], want)
    np.testing.assert_array_equal(got["index_1"], logits[np.arange(4), tgt])
    want = logits.copy()
    want[np.arange(4), tgt] = upd
    np.testing.assert_array_equal(got["index_put_1"], want)
    want = logits.copy()
    want[np.arange(4), tgt] += upd
    np.testing.assert_allclose(got["index_put_2"], want, rtol=1e-6)


def test_unsupported_index_pattern_is_an_input_error(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[4, 5]", i: "i64[4]", j: "i64[4]"',
        """
        index: "f32[4]" = torch.ops.aten.index.Tensor(x, [i, j])
        return (index,)
        """,
    )
    with pytest.raises(InputError, match=r"g\.py:7: aten\.index\.Tensor: unsupported index pattern"):
        import_fx(path)


# --- constants, outputs, joint graphs, sources --------------------------------------------


def test_tensor_constants_become_inputs_unless_given(tmp_path):
    path = _dump(
        tmp_path,
        'x: "i64[3]"',
        """
        _tensor_constant0 = self._tensor_constant0
        lift_fresh_copy: "i64[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
        add: "i64[3]" = torch.ops.aten.add.Tensor(x, lift_fresh_copy)
        return (add,)
        """,
    )
    model = import_fx(path)
    const = next(i for i in model.graph.input if i.name == "_tensor_constant0")
    assert const.type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert not const.type.tensor_type.shape.dim
    x = np.array([1, 2, 3], dtype=np.int64)
    got = _run(import_fx(path, constants={"_tensor_constant0": 5}), x=x)
    np.testing.assert_array_equal(got["add"], x + 5)
    shared = import_fx(path, constants={"_tensor_constant0": 5, "_tensor_constant9": 1})
    assert [i.name for i in shared.graph.initializer if i.name.startswith("_tensor")] == ["_tensor_constant0"]


def test_joint_graph_outputs_none_duplicates_and_selection(tmp_path):
    path = tmp_path / "joint.py"
    path.write_text(
        textwrap.dedent(
            """\
            import torch

            class joint_helper(torch.nn.Module):
                def forward(self, primals, tangents):
                    primals_1: "f32[1]"; primals_2: "f32[1]"; tangents_1: "f32[1]";

                    primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
                     # File: /m/optimizer.py:236 in scale_loss, code: return self.get_loss_scale() * loss
                    mul: "f32[1]" = torch.ops.aten.mul.Tensor(primals_2, primals_1);  primals_1 = None
                    # No stacktrace found for following nodes
                    mul_1: "f32[1]" = torch.ops.aten.mul.Tensor(tangents_1, primals_2);  tangents_1 = primals_2 = None
                    return pytree.tree_unflatten([mul, mul_1, None, mul, primals_2], self._out_spec)
            """
        )
    )
    model = import_fx(path)
    assert [i.name for i in model.graph.input] == ["primals_1", "primals_2", "tangents_1"]
    assert [o.name for o in model.graph.output] == ["mul", "mul_1", "mul/out3", "primals_2"]
    a, b, t = (np.array([v], dtype=np.float32) for v in (2.0, 3.0, 5.0))
    got = _run(model, primals_1=a, primals_2=b, tangents_1=t)
    assert got["mul"] == 6 and got["mul_1"] == 15 and got["mul/out3"] == 6
    assert [o.name for o in import_fx(path, outputs=[1, 0]).graph.output] == ["mul_1", "mul"]
    with pytest.raises(InputError, match="output position 2 is None"):
        import_fx(path, outputs=[2])
    with pytest.raises(InputError, match="out of range"):
        import_fx(path, outputs=[7])
    src = {n.name: parse_source(n) for n in model.graph.node}
    assert (src["mul"].file, src["mul"].line) == ("/m/optimizer.py", 236)
    assert src["mul"].code == "return self.get_loss_scale() * loss"
    assert src["mul_1"].file == ""


def test_every_value_has_a_value_info_from_its_annotation(tmp_path):
    path = _dump(
        tmp_path,
        'a: "bf16[2, 3]", b: "bf16[3, 4]", bias: "bf16[4]"',
        """
        # File: /src/model.py:12 in forward, code: y = F.linear(x, w, b)
        addmm: "bf16[2, 4]" = torch.ops.aten.addmm.default(bias, a, b)
        view: "bf16[8]" = torch.ops.aten.view.default(addmm, [8])
        return (view,)
        """,
    )
    model = import_fx(path)
    infos = {v.name: v for v in model.graph.value_info}
    assert set(infos) == {"addmm", "addmm/matmul"}
    t = infos["addmm"].type.tensor_type
    assert t.elem_type == onnx.TensorProto.BFLOAT16 and [d.dim_value for d in t.shape.dim] == [2, 4]
    for node in model.graph.node:
        meta = {p.key: p.value for p in node.metadata_props}
        assert meta["source"] == "File: /src/model.py:12 in forward, code: y = F.linear(x, w, b)"
        assert "pkg.torch.onnx.name_scopes" not in meta


# --- collectives --------------------------------------------------------------------------

COLLECTIVES = """
all_reduce: "f32[4, 2]" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '12')
wait_tensor: "f32[4, 2]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
all_gather_into_tensor: "f32[8, 2]" = torch.ops._c10d_functional.all_gather_into_tensor.default(wait_tensor, 2, '12')
wait_tensor_1: "f32[8, 2]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor)
reduce_scatter_tensor: "f32[4, 2]" = torch.ops._c10d_functional.reduce_scatter_tensor.default(wait_tensor_1, 'max', 2, '12')
broadcast: "f32[4, 2]" = torch.ops._c10d_functional.broadcast.default(reduce_scatter_tensor, 0, '12')
all_reduce_1: "f32[4, 2]" = torch.ops.vllm.all_reduce.default(broadcast, 'tp:0')
return (all_reduce_1,)
"""  # noqa: E501


def test_collectives_on_ranks(tmp_path):
    model = import_fx(_dump(tmp_path, 'x: "f32[4, 2]"', COLLECTIVES), world_size=2)
    nodes = [
        (n.domain, n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
        for n in model.graph.node
        if n.op_type != "Identity"
    ]
    assert nodes == [
        ("com.microsoft", "AllReduce", {"reduction": b"sum", "group": b"12"}),
        ("com.microsoft", "AllGather", {"group_size": 2, "axis": 0, "group": b"12"}),
        ("com.microsoft", "ReduceScatter", {"reduction": b"max", "group_size": 2, "axis": 0, "group": b"12"}),
        ("shardlog", "Broadcast", {"src": 0, "group": b"12"}),
        ("com.microsoft", "AllReduce", {"reduction": b"sum", "group": b"tp:0"}),
    ]
    assert {"com.microsoft", "shardlog"} <= {o.domain for o in model.opset_import}


def test_collectives_are_identities_on_one_process(tmp_path):
    body = COLLECTIVES.replace("(wait_tensor, 2, '12')", "(wait_tensor, 1, '12')").replace("f32[8, 2]", "f32[4, 2]")
    body = body.replace("'max', 2, '12'", "'max', 1, '12'")
    model = import_fx(_dump(tmp_path, 'x: "f32[4, 2]"', body), world_size=1)
    assert {op for _, op in _ops(model)} == {"Identity"}
    x = _f32(4, 2)
    np.testing.assert_array_equal(_run(model, x=x)["all_reduce_1"], x)
    with pytest.raises(InputError, match=r"g\.py:9: .*all_gather_into_tensor.*group_size 2 in a world_size=1 import"):
        import_fx(_dump(tmp_path, 'x: "f32[4, 2]"', COLLECTIVES), world_size=1)


# --- custom kernels -----------------------------------------------------------------------


def _layer_norm(x, w, b, eps, axes):
    mu = x.mean(axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axes, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    return (x - mu) * inv * w + b, mu.reshape(-1), inv.reshape(-1)


def test_apex_layer_norm_has_a_runnable_body(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[3, 2, 4]", w: "f32[4]", b: "f32[4]", w2: "f32[2, 4]", b2: "f32[2, 4]"',
        """
        fused_layer_norm_affine_fwd = torch.ops.apex.fused_layer_norm_affine_fwd.default(x, w, b, [4], 1e-05)
        getitem: "f32[3, 2, 4]" = fused_layer_norm_affine_fwd[0]
        getitem_1: "f32[6]" = fused_layer_norm_affine_fwd[1]
        getitem_2: "f32[6]" = fused_layer_norm_affine_fwd[2];  fused_layer_norm_affine_fwd = None
        fused_layer_norm_affine_fwd_1 = torch.ops.apex.fused_layer_norm_affine_fwd.default(x, w2, b2, [2, 4], 1e-05)
        getitem_3: "f32[3, 2, 4]" = fused_layer_norm_affine_fwd_1[0]
        return (getitem, getitem_1, getitem_2, getitem_3)
        """,
    )
    x, w, b, w2, b2 = _f32(3, 2, 4), _f32(4), _f32(4), _f32(2, 4), _f32(2, 4)
    model = import_fx(path)
    node = model.graph.node[0]
    assert (node.domain, node.op_type, node.name) == (
        "apex",
        "fused_layer_norm_affine_fwd",
        "fused_layer_norm_affine_fwd",
    )
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["normalized_shape"] == [4] and attrs["eps"] == pytest.approx(1e-5)
    got = _run(model, x=x, w=w, b=b, w2=w2, b2=b2)
    y, mu, inv = _layer_norm(x, w, b, 1e-5, -1)
    np.testing.assert_allclose(got["getitem"], y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["getitem_1"], mu, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["getitem_2"], inv, rtol=1e-4)
    np.testing.assert_allclose(got["getitem_3"], _layer_norm(x, w2, b2, 1e-5, (1, 2))[0], rtol=1e-4, atol=1e-5)


def test_vllm_kernels_through_auto_functionalized(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[3, 8]", r: "f32[3, 8]", w: "f32[8]", h: "f32[3, 8]"',
        """
        empty_like: "f32[3, 8]" = torch.ops.aten.empty_like.default(x, pin_memory = False)
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops._C.rms_norm.default, result = empty_like, input = x, weight = w, epsilon = 1e-06);  empty_like = None
        getitem_1: "f32[3, 8]" = auto_functionalized[1];  auto_functionalized = None
        auto_functionalized_1 = torch.ops.higher_order.auto_functionalized(torch.ops._C.fused_add_rms_norm.default, input = x, residual = r, weight = w, epsilon = 1e-06)
        getitem_2: "f32[3, 8]" = auto_functionalized_1[1]
        getitem_3: "f32[3, 8]" = auto_functionalized_1[2];  auto_functionalized_1 = None
        empty: "f32[3, 4]" = torch.ops.aten.empty.memory_format([3, 4], dtype = torch.float32, device = device(type='cuda', index=0), pin_memory = False)
        auto_functionalized_2 = torch.ops.higher_order.auto_functionalized(torch.ops._C.silu_and_mul.default, out = empty, input = h);  empty = None
        getitem_4: "f32[3, 4]" = auto_functionalized_2[1];  auto_functionalized_2 = None
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops.tg.inplace_log_tensor.default, s = 'w', _t_base_index = 0, _all_bases = [w])
        getitem_5: "f32[8]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None
        return (getitem_1, getitem_2, getitem_3, getitem_4, getitem_5)
        """,  # noqa: E501
    )
    x, r, w, h = _f32(3, 8), _f32(3, 8), _f32(8), _f32(3, 8)
    model = import_fx(path)
    rms = {n.op_type: list(n.input) for n in model.graph.node if n.domain == "vllm._C"}
    assert rms == {"rms_norm": ["x", "w"], "fused_add_rms_norm": ["x", "r", "w"], "silu_and_mul": ["h"]}
    got = _run(model, x=x, r=r, w=w, h=h)

    def rms_norm(v):
        return v / np.sqrt((v * v).mean(-1, keepdims=True) + 1e-6) * w

    np.testing.assert_allclose(got["getitem_1"], rms_norm(x), rtol=1e-5)
    np.testing.assert_allclose(got["getitem_2"], rms_norm(x + r), rtol=1e-5)
    np.testing.assert_allclose(got["getitem_3"], x + r, rtol=1e-6)
    gate, up = h[:, :4], h[:, 4:]
    np.testing.assert_allclose(got["getitem_4"], gate / (1 + np.exp(-gate)) * up, rtol=1e-5)
    np.testing.assert_array_equal(got["getitem_5"], w)


def test_kernels_without_body_and_write_only_buffers(tmp_path):
    path = _dump(
        tmp_path,
        'pos: "i64[4]", q: "bf16[4, 256]", k: "bf16[4, 128]", cache: "bf16[16, 128]", v: "bf16[4, 1, 128]", '
        'g: "f16[2, 3]", y: "f16[2, 3]"',
        """
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops._C.rotary_embedding.default, positions = pos, query = q, key = k, head_size = 128, cos_sin_cache = cache, is_neox = True)
        getitem: "bf16[4, 256]" = auto_functionalized[1]
        getitem_1: "bf16[4, 128]" = auto_functionalized[2];  auto_functionalized = None
        view: "bf16[4, 2, 128]" = torch.ops.aten.view.default(getitem, [-1, 2, 128])
        view_1: "bf16[4, 1, 128]" = torch.ops.aten.view.default(getitem_1, [-1, 1, 128])
        empty_like: "bf16[4, 2, 128]" = torch.ops.aten.empty_like.default(view, pin_memory = False)
        auto_functionalized_1 = torch.ops.higher_order.auto_functionalized(torch.ops.vllm.unified_attention_with_output.default, query = view, key = view_1, value = v, output = empty_like, layer_name = 'model.layers.0.self_attn.attn')
        getitem_2: "bf16[4, 2, 128]" = auto_functionalized_1[1];  auto_functionalized_1 = None
        _softmax_backward_data: "f16[2, 3]" = torch.ops.aten._softmax_backward_data.default(g, y, -1, torch.float16)
        gelu_backward: "f16[2, 3]" = torch.ops.aten.gelu_backward.default(g, y)
        return (getitem_2, _softmax_backward_data, gelu_backward)
        """,  # noqa: E501
    )
    model = import_fx(path)
    nodes = {n.op_type: n for n in model.graph.node}
    rot = nodes["rotary_embedding"]
    assert rot.domain == "vllm._C" and list(rot.input) == ["pos", "q", "k", "cache"]
    assert list(rot.output) == ["getitem", "getitem_1"]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in rot.attribute} == {"head_size": 128, "is_neox": 1}
    attn = nodes["unified_attention_with_output"]
    assert attn.domain == "vllm" and list(attn.input) == ["view", "view_1", "v"]
    assert list(attn.output) == ["getitem_2"]
    sbd = nodes["_softmax_backward_data"]
    assert sbd.domain == "aten" and {a.name: onnx.helper.get_attribute_value(a) for a in sbd.attribute} == {
        "dim": -1,
        "input_dtype": onnx.TensorProto.FLOAT16,
    }
    assert nodes["gelu_backward"].attribute[0].s == b"none"
    assert {f.name for f in model.functions} == {"_softmax_backward_data"}
    onnx.shape_inference.infer_shapes(model, strict_mode=True)


def test_softmax_backward_body(tmp_path):
    path = _dump(
        tmp_path,
        'g: "f32[2, 3]", y: "f32[2, 3]"',
        """
        _softmax_backward_data: "f32[2, 3]" = torch.ops.aten._softmax_backward_data.default(g, y, 1, torch.float32)
        return (_softmax_backward_data,)
        """,
    )
    g, y = _f32(2, 3), _f32(2, 3)
    got = _run(import_fx(path), g=g, y=y)
    np.testing.assert_allclose(got["_softmax_backward_data"], y * (g - (g * y).sum(1, keepdims=True)), rtol=1e-5)


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def forward(self, x:\n", r"bad\.py:1: not a torch.fx graph dump \(syntax error"),
        ("x = 1\nprint(x)\n", r"bad\.py:1: not a torch.fx graph dump \(no class with a forward method\)"),
        (
            'class M(torch.nn.Module):\n    def forward(self, x: "f32[2]"):\n'
            '        y: "f32[2]" = torch.ops.aten.frobnicate.default(x)\n        return (y,)\n',
            r"bad\.py:3: no ONNX mapping for aten\.frobnicate\.default",
        ),
        (
            'class M(torch.nn.Module):\n    def forward(self, x: "f32[2]"):\n'
            '        y: "f32[2]" = os.system(x)\n        return (y,)\n',
            r"bad\.py:3: unsupported call 'os.system'",
        ),
        (
            'class M(torch.nn.Module):\n    def forward(self, x: "f32[s0]"):\n        return (x,)\n',
            r"bad\.py:2: unsupported annotation 'f32\[s0\]'",
        ),
        (
            'class M(torch.nn.Module):\n    def forward(self, x: "f32[2]"):\n'
            '        y: "f32[2]" = torch.ops.aten.add.Tensor(x, z)\n        return (y,)\n',
            r"bad\.py:3: name 'z' is used before it is defined",
        ),
    ],
)
def test_bad_dumps_are_one_line_input_errors(tmp_path, text, message):
    path = tmp_path / "bad.py"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        import_fx(path)
    assert "\n" not in str(info.value)
    result = CliRunner().invoke(main, ["import-fx", str(path), "-o", str(tmp_path / "out.onnx")])
    assert result.exit_code == 2, result.output
    err = (result.stderr if hasattr(result, "stderr") else result.output).strip()
    assert len(err.splitlines()) == 1 and err.startswith("shardlog: error: ")
    assert not (tmp_path / "out.onnx").exists()


def test_cli_writes_the_model(tmp_path):
    path = _dump(
        tmp_path,
        'x: "f32[2]"',
        """
        _tensor_constant0 = self._tensor_constant0
        lift_fresh_copy: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)
        all_reduce: "f32[2]" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')
        add: "f32[2]" = torch.ops.aten.add.Tensor(all_reduce, lift_fresh_copy)
        return [add, all_reduce]
        """,
    )
    out = tmp_path / "m.onnx"
    args = ["import-fx", str(path), "-o", str(out), "--world-size", "1", "--constant", "_tensor_constant0=2.5"]
    result = CliRunner().invoke(main, [*args, "--outputs", "0"])
    assert result.exit_code == 0, result.output
    model = onnx.load(str(out))
    assert [o.name for o in model.graph.output] == ["add"]
    x = _f32(2)
    np.testing.assert_allclose(_run(model, x=x)["add"], x + 2.5)
    for bad in (
        ["--constant", "oops"],
        ["--constant", "_tensor_constant7=1"],
        ["--outputs", "a,b"],
        ["--world-size", "0"],
    ):
        result = CliRunner().invoke(main, [*args, *bad])
        assert result.exit_code == 2, (bad, result.output)
    result = CliRunner().invoke(main, ["import-fx", str(path), "-o", str(path)])
    assert result.exit_code == 2 and "refusing to overwrite" in result.output
    assert path.read_text().startswith("import torch")


# --- the published GraphGuard / Entangle dumps --------------------------------------------


def _entangle_dumps() -> list[Path]:
    """Every published dump: bundled (not the derive/ scripts) and, when present, the shared ones."""
    bundled = sorted(ENTANGLE_BUNDLED.rglob("*.g*.r*.py"))
    shared = sorted(ENTANGLE_SHARED.rglob("*.py")) if ENTANGLE_SHARED.is_dir() else []
    return bundled + shared


def _dump_id(path: Path) -> str:
    root = ENTANGLE_BUNDLED if path.is_relative_to(ENTANGLE_BUNDLED) else ENTANGLE_SHARED
    return f"{root.name}/{path.relative_to(root)}"


@pytest.mark.parametrize("dump", _entangle_dumps(), ids=_dump_id)
def test_every_entangle_dump_imports(dump):
    sequential = any(part.startswith("paral1_") or part in ("tp1", "1step", "2step.bug") for part in dump.parts)
    model = import_fx(dump, world_size=1 if sequential else None)
    onnx.checker.check_model(model)
    onnx.shape_inference.infer_shapes(model, strict_mode=False)
    graph = parse_fx(dump)
    fx_nodes = sum(n.target not in ("getitem", "get_attr") for n in graph.nodes)
    assert fx_nodes <= len(model.graph.node) <= 3 * fx_nodes + 10
    assert len(model.graph.output) == sum(o is not None for o in graph.outputs)
    typed = {v.name for v in [*model.graph.value_info, *model.graph.input, *model.graph.output]}
    annotated = {n.name for n in graph.nodes if n.type is not None} | {i.name for i in graph.inputs}
    assert annotated <= typed
    collectives = [n for n in model.graph.node if n.domain in ("com.microsoft", "shardlog")]
    assert (not collectives) if sequential else collectives
    sources = [parse_source(n) for n in model.graph.node]
    assert sum(bool(s.file) for s in sources) > len(sources) // 2


# --- data-dependent sizes (unbacked SymInts, e.g. MoE routing) ------------------------------


def test_data_dependent_sizes_become_named_dims(tmp_path):
    """aten.nonzero's row count u0 flows through index, views, fills and index_put as the ONNX
    dim_param "u0"; sym_size.int is that count at run time; torch's bound checks are dropped."""
    path = _dump(
        tmp_path,
        'x: "f32[6, 4]", m: "b8[6]"',
        """
        nonzero: "i64[u0, 1]" = torch.ops.aten.nonzero.default(m)
        sym_size_int: "Sym(u0)" = torch.ops.aten.sym_size.int(nonzero, 0)
        ge: "Sym(u0 >= 0)" = sym_size_int >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, "u0 < 0");  ge = _assert_scalar = None
        index: "f32[u0, 1, 4]" = torch.ops.aten.index.Tensor(x, [nonzero])
        view: "f32[u0, 4]" = torch.ops.aten.view.default(index, [sym_size_int, 4])
        zeros: "f32[u0, 1, 4]" = torch.ops.aten.zeros.default([sym_size_int, 1, 4], dtype = torch.float32)
        zeros_like: "f32[6, 4]" = torch.ops.aten.zeros_like.default(x, pin_memory = False)
        index_put: "f32[6, 4]" = torch.ops.aten.index_put.default(zeros_like, [nonzero], index)
        sigmoid: "f32[6, 4]" = torch.ops.aten.sigmoid.default(x)
        sigmoid_backward: "f32[6, 4]" = torch.ops.aten.sigmoid_backward.default(index_put, sigmoid)
        return (view, zeros, index_put, sigmoid_backward)
        """,
    )
    model = import_fx(path)
    dims = {o.name: [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in model.graph.output}
    assert dims["view"] == ["u0", 4] and dims["zeros"] == ["u0", 1, 4]
    x, m = _f32(6, 4), np.array([True, False, True, True, False, False])
    got = _run(model, x=x, m=m)
    rows = np.nonzero(m)[0]
    np.testing.assert_array_equal(got["view"], x[rows])
    assert got["zeros"].shape == (3, 1, 4) and not got["zeros"].any()
    put = np.zeros_like(x)
    put[rows] = x[rows]
    np.testing.assert_array_equal(got["index_put"], put)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(got["sigmoid_backward"], put * s * (1 - s), rtol=1e-5, atol=1e-7)


def test_view_with_two_data_dependent_sizes_is_unsupported(tmp_path):
    """A view's target can hold one unknown size (-1), not two."""
    path = _dump(
        tmp_path,
        'x: "f32[u0, 1, u1]"',
        """
        view: "f32[u0, u1]" = torch.ops.aten.view.default(x, [-1, -1])
        return (view,)
        """,
    )
    message = r"g\.py:\d+: aten\.view\.default: unsupported view to f32\[u0, u1\] \(more than one data-dependent size\)"
    with pytest.raises(InputError, match=message):
        import_fx(path)


def test_every_op_table_schema_parses():
    # schemas are parsed when an op is first met (analyzer.importers.fx.to_onnx._schema); a malformed
    # default in aten_ops.yaml must still fail here rather than on some user's dump
    from analyzer.importers.fx.emit import parse_schema
    from analyzer.importers.fx.to_onnx import op_table

    table = op_table()
    assert len(table) > 50
    for target, entry in table.items():
        names = [name for name, _ in parse_schema(entry.get("schema", ""))]
        assert len(names) == len(set(names)), target
        assert all(name.isidentifier() for name in names), target
