"""Rules for the ATen kernels torch.fx dumps keep as ops of their own (analyzer/importers/fx): the
elementwise aten::gelu_backward (rules/kernels/elementwise.dl), aten::_softmax_backward_data
(rules/kernels/softmax_backward.dl), and Megatron's vocab-parallel embedding backward
(aten::embedding_dense_backward of the masked rows at the guarded local ids, rules/parallel/
vocab.dl). Hand-written dumps of one rule each, 2 ranks, with a near miss that must not pass.
gelu_backward and embedding_dense_backward have no ONNX body, so only the softmax backward
gets a numeric witness here."""

from __future__ import annotations

import textwrap
from pathlib import Path

from analyzer import check

HEADER = "import torch\nfrom torch import device\n\n\nclass GraphModule(torch.nn.Module):\n"


def _dump(path: Path, params: str, body: str) -> Path:
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    path.write_text(f"{HEADER}    def forward(self, {params}):\n{lines}\n")
    return path


def _outputs(result) -> dict[str, str | None]:
    return {o.name: o.relation for o in result.verdict_.outputs}


def _gelu_backward(tmp_path: Path, rank_args: str) -> tuple[Path, list[Path]]:
    seq = _dump(
        tmp_path / "seq.py",
        'g: "f32[2, 8]", x: "f32[2, 8]"',
        """
        gelu_backward: "f32[2, 8]" = torch.ops.aten.gelu_backward.default(g, x)
        return (gelu_backward,)
        """,
    )
    ranks = [
        _dump(
            tmp_path / f"r{r}.py",
            'g: "f32[2, 4]", x: "f32[2, 4]"',
            f"""
            gelu_backward: "f32[2, 4]" = torch.ops.aten.gelu_backward.default({rank_args})
            return (gelu_backward,)
            """,
        )
        for r in range(2)
    ]
    return seq, ranks


def test_gelu_backward_of_sharded_operands_is_sharded(tmp_path):
    seq, ranks = _gelu_backward(tmp_path, "g, x")
    result = check(seq, ranks)
    assert result.verdict == "verified"
    assert _outputs(result) == {"gelu_backward": "Shard(1)"}


def test_gelu_backward_with_its_operands_swapped_is_not_paired(tmp_path):
    seq, ranks = _gelu_backward(tmp_path, "x, g")
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert result.verdict_.discrepancies[0].node == "gelu_backward"


def _softmax_backward(tmp_path: Path, rank_shape: str) -> tuple[Path, list[Path]]:
    seq = _dump(
        tmp_path / "seq.py",
        'g: "f32[2, 4, 8]", y: "f32[2, 4, 8]"',
        """
        _softmax_backward_data: "f32[2, 4, 8]" = torch.ops.aten._softmax_backward_data.default(g, y, -1, torch.float32)
        return (_softmax_backward_data,)
        """,
    )
    ranks = [
        _dump(
            tmp_path / f"r{r}.py",
            f'g: "f32[{rank_shape}]", y: "f32[{rank_shape}]"',
            f"""
            sbd: "f32[{rank_shape}]" = torch.ops.aten._softmax_backward_data.default(g, y, -1, torch.float32)
            return (sbd,)
            """,
        )
        for r in range(2)
    ]
    return seq, ranks


def test_softmax_backward_sharded_off_its_axis_is_sharded(tmp_path):
    seq, ranks = _softmax_backward(tmp_path, "2, 2, 8")  # heads sharded, softmax over the keys
    result = check(seq, ranks, numeric=True)  # this kernel has an ONNX body (analyzer/importers/fx/functions.py)
    assert result.verdict == "verified"
    assert max(result.numeric.values()) < 1e-6, result.numeric
    assert _outputs(result) == {"_softmax_backward_data": "Shard(1)"}  # named by the seq graph


def test_softmax_backward_sharded_on_its_axis_has_no_rule(tmp_path):
    seq, ranks = _softmax_backward(tmp_path, "2, 4, 4")  # the sum over the keys sees one shard
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert result.verdict_.discrepancies[0].node == "_softmax_backward_data"


def _embedding_backward(tmp_path: Path, offsets: list[int]) -> tuple[Path, list[Path]]:
    """Megatron's VocabParallelEmbedding backward over a vocabulary of 8 rows, 4 per rank."""
    seq = _dump(
        tmp_path / "seq.py",
        'g: "f32[6, 3]", ids: "i64[6]"',
        """
        embedding_dense_backward: "f32[8, 3]" = torch.ops.aten.embedding_dense_backward.default(g, ids, 8, -1, False)
        return (embedding_dense_backward,)
        """,
    )
    ranks = []
    for r, lo in enumerate(offsets):
        ranks.append(
            _dump(
                tmp_path / f"r{r}.py",
                'g: "f32[6, 3]", ids: "i64[6]"',
                f"""
                lt: "b8[6]" = torch.ops.aten.lt.Scalar(ids, {lo})
                ge: "b8[6]" = torch.ops.aten.ge.Scalar(ids, {lo + 4})
                bitwise_or: "b8[6]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
                sub: "i64[6]" = torch.ops.aten.sub.Tensor(ids, {lo})
                idx: "i64[6]" = torch.ops.aten.masked_fill.Scalar(sub, bitwise_or, 0)
                unsqueeze: "b8[6, 1]" = torch.ops.aten.unsqueeze.default(bitwise_or, -1)
                gm: "f32[6, 3]" = torch.ops.aten.masked_fill.Scalar(g, unsqueeze, 0.0)
                edb: "f32[4, 3]" = torch.ops.aten.embedding_dense_backward.default(gm, idx, 4, -1, False)
                return (edb,)
                """,
            )
        )
    return seq, ranks


def test_vocab_parallel_embedding_backward_is_sharded_on_the_vocab(tmp_path):
    seq, ranks = _embedding_backward(tmp_path, [0, 4])
    result = check(seq, ranks)
    assert result.verdict == "verified"
    assert _outputs(result) == {"embedding_dense_backward": "Shard(0)"}


def test_embedding_backward_with_rank_1_one_row_off_is_not_sharded(tmp_path):
    seq, ranks = _embedding_backward(tmp_path, [0, 3])
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert _outputs(result) == {"embedding_dense_backward": None}


def _expert(tmp_path: Path, fill: str) -> tuple[Path, list[Path]]:
    """A one-expert MoE layer as Megatron-LM's legacy SwitchMLP writes it: the routed tokens
    (aten.nonzero: u0 of them) through a column- then a row-parallel linear, scattered back into
    a `fill` of the tokens' shape and all-reduced (then a ReLU, so the ranks' output is not the
    collective's own result)."""
    route = """
        nonzero: "i64[u0, 1]" = torch.ops.aten.nonzero.default(m)
        sym_size_int: "Sym(u0)" = torch.ops.aten.sym_size.int(nonzero, 0)
        index: "f32[u0, 1, 3]" = torch.ops.aten.index.Tensor(x, [nonzero])
        view: "f32[u0, 3]" = torch.ops.aten.view.default(index, [sym_size_int, 3])
        """
    seq = _dump(
        tmp_path / "seq.py",
        'x: "f32[4, 3]", m: "b8[4]", w1: "f32[3, 4]", w2: "f32[4, 3]"',
        textwrap.dedent(route)
        + textwrap.dedent("""
        mm: "f32[u0, 4]" = torch.ops.aten.mm.default(view, w1)
        mm_1: "f32[u0, 3]" = torch.ops.aten.mm.default(mm, w2)
        view_1: "f32[u0, 1, 3]" = torch.ops.aten.view.default(mm_1, [sym_size_int, 1, 3])
        zeros_like: "f32[4, 3]" = torch.ops.aten.zeros_like.default(x, pin_memory = False)
        index_put: "f32[4, 3]" = torch.ops.aten.index_put.default(zeros_like, [nonzero], view_1)
        relu: "f32[4, 3]" = torch.ops.aten.relu.default(index_put)
        return (relu,)
        """),
    )
    ranks = [
        _dump(
            tmp_path / f"r{r}.py",
            'x: "f32[4, 3]", m: "b8[4]", w1: "f32[3, 2]", w2: "f32[2, 3]"',
            textwrap.dedent(route)
            + textwrap.dedent(f"""
            mm: "f32[u0, 2]" = torch.ops.aten.mm.default(view, w1)
            mm_1: "f32[u0, 3]" = torch.ops.aten.mm.default(mm, w2)
            view_1: "f32[u0, 1, 3]" = torch.ops.aten.view.default(mm_1, [sym_size_int, 1, 3])
            zeros_like: "f32[4, 3]" = torch.ops.aten.{fill}.default(x, pin_memory = False)
            index_put: "f32[4, 3]" = torch.ops.aten.index_put.default(zeros_like, [nonzero], view_1)
            all_reduce: "f32[4, 3]" = torch.ops._c10d_functional.all_reduce.default(index_put, 'sum', '0')
            wait_tensor: "f32[4, 3]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
            relu: "f32[4, 3]" = torch.ops.aten.relu.default(wait_tensor)
            return (relu,)
            """),
        )
        for r in range(2)
    ]
    return seq, ranks


def test_expert_output_scattered_into_zeros_is_a_partial_sum(tmp_path):
    seq, ranks = _expert(tmp_path, "zeros_like")
    result = check(seq, ranks, numeric=True)
    assert result.verdict == "verified"
    assert _outputs(result) == {"relu": "Replicate"}
    assert max(result.numeric.values()) < 1e-5, result.numeric


def test_expert_output_scattered_into_ones_is_not(tmp_path):
    seq, ranks = _expert(tmp_path, "ones_like")  # every rank's ones would be summed
    result = check(seq, ranks, numeric=True)
    assert result.verdict == "discrepancy"
    assert max(result.numeric.values()) > 0.5, result.numeric


def _router(tmp_path: Path, experts: int) -> tuple[Path, list[Path]]:
    """The expert index of a router whose scores are normalized over the tokens (as sinkhorn
    does): with one expert it is 0 whatever the scores; the ranks hold 2 of the 4 tokens."""

    def body(tokens: int) -> str:
        return f"""
        _softmax: "f32[{tokens}, {experts}]" = torch.ops.aten._softmax.default(x, 0, False)
        max_1 = torch.ops.aten.max.dim(_softmax, 1)
        getitem_1: "i64[{tokens}]" = max_1[1]
        return (getitem_1,)
        """

    seq = _dump(tmp_path / "seq.py", f'x: "f32[4, {experts}]"', body(4))
    ranks = [_dump(tmp_path / f"r{r}.py", f'x: "f32[2, {experts}]"', body(2)) for r in range(2)]
    return seq, ranks


def test_argmax_over_one_expert_is_zero_whatever_the_scores(tmp_path):
    seq, ranks = _router(tmp_path, experts=1)
    result = check(seq, ranks, numeric=True)
    assert result.verdict == "verified"
    assert _outputs(result) == {"getitem_1": "Shard(0)"}
    assert max(result.numeric.values()) == 0.0


def test_argmax_over_two_experts_of_token_normalized_scores_is_not_sharded(tmp_path):
    seq, ranks = _router(tmp_path, experts=2)  # the softmax over the tokens sees half of them
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert result.verdict_.discrepancies[0].node == "_softmax"
