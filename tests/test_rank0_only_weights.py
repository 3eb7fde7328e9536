"""A weight stored on rank 0 alone (vLLM's RowParallelLinear bias: rank 1's export never uses it,
so its file does not hold it), on small hand-written graphs (ONNX text with stored weights):

- input relations (analyzer/inputs/values.py): ``Replicate`` on rank 0 only when rank 0's copy
  has the sequential values and no other rank has the name; every other case stays a note;
- the check: ``y = x @ w + b`` with rank 0 adding ``b`` to its partial product and rank 1 not
  (rules/parallel/one_rank_term.dl), written as ``MatMul + Add`` and as ``Gemm(x, w, b)``
  (whose body, rules/functions/Gemm.onnxtxt, meets rank 1's bias-free ``MatMul``); the bias on
  every rank is flagged at the op with hint ``bias-before-reduce``.
"""

from __future__ import annotations

import numpy as np
import onnx.parser
import pytest
from conftest import check_text_graphs

from analyzer.inputs.load import load_inputs
from analyzer.layout import REPLICATE

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
RNG = np.random.default_rng(0)
W = RNG.standard_normal((8, 16)).astype(np.float32)
B = RNG.standard_normal(16).astype(np.float32)


def _tensor(name: str, value: np.ndarray) -> str:
    dims = ", ".join(map(str, value.shape))
    return f"float[{dims}] {name} = {{{', '.join(repr(float(v)) for v in value.ravel())}}}"


def _graph(inputs: str, out: str, weights: dict[str, np.ndarray], body: str) -> str:
    inits = ", ".join(_tensor(k, v) for k, v in weights.items())
    return f"{HEADER}\ng ({inputs}) => ({out}) <{inits}> {{\n{body}\n}}\n"


def _seq(gemm: bool | str) -> str:
    if gemm == "transB":  # w stored [out, in], as nn.Linear (torch.onnx's TorchScript exporter)
        return _graph("float[4, 8] x", "float[4, 16] y", {"w": W.T.copy(), "b": B}, "  y = Gemm<transB=1>(x, w, b)")
    body = "  y = Gemm(x, w, b)" if gemm else "  p = MatMul(x, w)\n  y = Add(p, b)"
    return _graph("float[4, 8] x", "float[4, 16] y", {"w": W, "b": B}, body)


def _rank(r: int, world: int, adds: bool, gemm: bool | str, bias: np.ndarray | None = None) -> str:
    """Rank r: its chunk [4, 8/N] of x times its rows of w (row-parallel), plus the bias when
    ``adds`` (then the file stores ``bias``, the sequential bias by default), all-reduced.
    ``gemm="transB"``: w stored transposed, its columns of it; the bias-free product then
    multiplies by its Transpose."""
    k = 8 // world
    weights = {"w": W[r * k:(r + 1) * k]}
    if gemm == "transB":
        weights = {"w": W[r * k:(r + 1) * k].T.copy()}
        plain = "  wt = Transpose<perm=[1, 0]>(w)\n  t = MatMul(x, wt)"
    else:
        plain = "  t = MatMul(x, w)"
    if adds:
        weights["b"] = B if bias is None else bias
        if gemm == "transB":
            body = "  t = Gemm<transB=1>(x, w, b)"
        else:
            body = "  t = Gemm(x, w, b)" if gemm else "  p = MatMul(x, w)\n  t = Add(p, b)"
    else:
        body = plain
    return _graph(f"float[4, {k}] x", "float[4, 16] y", weights, body + "\n  y = com.microsoft.AllReduce(t)")


def _load(write_models, seq: str, ranks: list[str]):
    models = {"seq": onnx.parser.parse_model(seq)}
    models.update({f"rank{r}": onnx.parser.parse_model(t) for r, t in enumerate(ranks)})
    paths = write_models(models)
    return load_inputs(paths["seq"], [paths[f"rank{r}"] for r in range(len(ranks))])


def _relation(inp, name: str):
    rels = [r for r in inp.relations if r.seq_value == name]
    return rels[0] if rels else None


@pytest.mark.parametrize("world", [2, 4])
def test_a_weight_on_rank_zero_alone_is_replicate_there(write_models, world):
    ranks = [_rank(r, world, r == 0, False) for r in range(world)]
    inp = _load(write_models, _seq(False), ranks)
    rel = _relation(inp, "b")
    assert rel is not None and rel.layout == REPLICATE
    assert rel.rank_values == ("b",) + ("",) * (world - 1)
    assert rel.established == "values" and "rank 0 stores it" in rel.evidence
    assert not any(n.startswith("b:") for n in inp.notes), inp.notes
    # the sharded weight keeps its relation
    assert _relation(inp, "w").layout.kind == "Shard"


@pytest.mark.parametrize(
    "holders, differs",
    [
        ((1,), False),  # rank 1 holds it, rank 0 does not
        ((0, 2), False),  # ranks 0 and 2 of 4 hold it: not rank 0 alone
        ((0,), True),  # rank 0 holds other values (a file that lost nothing, but a wrong bias)
    ],
)
def test_other_partial_holdings_give_no_relation(write_models, holders, differs):
    world = 4 if 2 in holders else 2
    bias = B * 2 if differs else None
    ranks = [_rank(r, world, r in holders, False, bias) for r in range(world)]
    inp = _load(write_models, _seq(False), ranks)
    assert _relation(inp, "b") is None
    assert any(n.startswith("b:") for n in inp.notes), inp.notes


CASES = {
    # (rank graphs, correct): the seq graph as MatMul + Add or as one Gemm
    "add_rank0_only": (lambda n: [_rank(r, n, r == 0, False) for r in range(n)], True),
    "gemm_rank0_only": (lambda n: [_rank(r, n, r == 0, True) for r in range(n)], True),
    "gemmT_rank0_only": (lambda n: [_rank(r, n, r == 0, "transB") for r in range(n)], True),
    "add_every_rank": (lambda n: [_rank(r, n, True, False) for r in range(n)], False),
    "gemmT_every_rank": (lambda n: [_rank(r, n, True, "transB") for r in range(n)], False),
    "gemm_every_rank": (lambda n: [_rank(r, n, True, True) for r in range(n)], False),
}


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bias_on_rank_zero_alone_verifies_and_on_every_rank_is_flagged(write_models, case, world):
    make, correct = CASES[case]
    seq = _seq("transB" if case.startswith("gemmT") else case.startswith("gemm"))
    result = check_text_graphs(write_models, seq, make(world), infer_shapes=True)[0]
    if correct:
        assert result.verdict == "verified", result.verdict
        assert result.verdict_.outputs[0].relation == "Replicate"
        assert result.numeric["y"] < 1e-5
        if case.startswith("gemm"):
            assert ("", "Gemm") in result.inputs.expand_ops
        return
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == ("Gemm" if case.startswith("gemm") else "Add")
    assert "bias-before-reduce" in first.hint_ids, first.hint_ids
    assert result.numeric["y"] > 1e-2
