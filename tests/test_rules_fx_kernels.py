"""Rules for the ATen kernels torch.fx dumps keep as ops of their own (analyzer/fx): the
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
    result = check(seq, ranks, numeric=True)  # this kernel has an ONNX body (analyzer/fx/functions.py)
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
