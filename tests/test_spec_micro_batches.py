"""The spec's ``micro_batches`` form: gradient accumulation where each micro-batch is a graph
input of its own (GraphGuard's Bug 6 pairs them so, examples/entangle/bug_grad_accumulation).
Hand-written torch.fx dumps of one rule's worth: the loss of a batch of 8 as one step (seq), and
as 2 micro-batches of 4 summed (rank), each micro-batch divided by the batch's 8 (correct) or by
its own 4 (the per-micro-batch mean)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer import check
from analyzer.cli import main
from analyzer.witness.check import confirm_relations

HEADER = "import torch\nfrom torch import device\n\n\nclass GraphModule(torch.nn.Module):\n"


def _dump(path: Path, params: str, body: str) -> Path:
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    path.write_text(f"{HEADER}    def forward(self, {params}):\n{lines}\n")
    return path


def _graphs(tmp_path: Path, divisor: int) -> tuple[Path, Path]:
    seq = _dump(
        tmp_path / "seq.py",
        'w: "f32[]", x: "f32[8]"',
        """
        mul: "f32[8]" = torch.ops.aten.mul.Tensor(x, w)
        pow_1: "f32[8]" = torch.ops.aten.pow.Tensor_Scalar(mul, 2)
        sum_1: "f32[]" = torch.ops.aten.sum.default(pow_1)
        div: "f32[]" = torch.ops.aten.div.Tensor(sum_1, 8)
        return (div,)
        """,
    )
    lines = []
    for k in (0, 1):
        lines += [
            f'mul_{k}: "f32[4]" = torch.ops.aten.mul.Tensor(x{k}, w)',
            f'pow_{k}: "f32[4]" = torch.ops.aten.pow.Tensor_Scalar(mul_{k}, 2)',
            f'sum_{k}: "f32[]" = torch.ops.aten.sum.default(pow_{k})',
            f'div_{k}: "f32[]" = torch.ops.aten.div.Tensor(sum_{k}, {divisor})',
        ]
    lines += ['add: "f32[]" = torch.ops.aten.add.Tensor(div_0, div_1)', "return (add,)"]
    rank = _dump(tmp_path / "rank.py", 'w: "f32[]", x0: "f32[4]", x1: "f32[4]"', "\n".join(lines))
    return seq, rank


def _spec(tmp_path: Path, entry: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"relations:\n  x: {entry}\n")
    return path


def test_micro_batch_inputs_rebuild_the_batch(tmp_path):
    seq, rank = _graphs(tmp_path, divisor=8)
    result = check(seq, [rank], relations=_spec(tmp_path, "{shard: 0, micro_batches: [x0, x1]}"), numeric=True)
    assert result.verdict == "verified"
    # the witness feeds micro-batch k's rows of the sequential x to rank input x{k}
    assert max(result.numeric.values()) < 1e-5, result.numeric
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert checked >= 10 and refuted == []
    relations = {(r.seq_value, str(r.layout), r.rank_values) for r in result.inputs.relations if r.seq_value == "x"}
    assert relations == {("x", "Shard(0, micro=0/2)", ("x0",)), ("x", "Shard(0, micro=1/2)", ("x1",))}


def test_micro_batch_k_is_the_value_named_k_th(tmp_path):
    seq, rank = _graphs(tmp_path, divisor=8)
    # swapped names still rebuild the sum (a sum does not see the order), so this checks the
    # rows: micro-batch 0 is now x1, and its product mul_1
    result = check(seq, [rank], relations=_spec(tmp_path, "{shard: 0, micro_batches: [x1, x0]}"))
    pieces = {(p.d, p.param) for p in result.tables()["Piece"].itertuples() if p.s == "mul"}
    assert pieces == {("mul_1", "mb2:0"), ("mul_0", "mb2:1")}


def test_per_micro_batch_mean_is_flagged(tmp_path):
    seq, rank = _graphs(tmp_path, divisor=4)
    result = check(seq, [rank], relations=_spec(tmp_path, "{shard: 0, micro_batches: [x0, x1]}"), numeric=True)
    assert result.verdict == "discrepancy"
    # the rank's loss is twice the batch's: the witness sees it
    assert max(result.numeric.values()) > 1e-3, result.numeric
    first = result.verdict_.discrepancies[0]
    assert (first.node, first.hint_ids, first.rank_nodes) == ("div", ["micro-batch-mean"], {0: ["div_0", "div_1"]})


@pytest.mark.parametrize(
    "entry, message",
    [
        ("{shard: 0, micro_batches: [x0]}", "micro_batches: expected a list of two or more value names"),
        ("{shard: 0, micro_batches: x0}", "micro_batches: expected a list of two or more value names"),
        ("{shard: 0, micro_batches: [x0, x0]}", "micro_batches: a value is named twice"),
        ("{shard: 0, micro_batches: [x0, x1], ranks: [x0]}", "micro_batches does not combine with ranks"),
        ("{partial: max, micro_batches: [x0, x1]}", "micro_batches needs shard or partial: sum"),
        ("{replicate: true, micro_batches: [x0, x1]}", "micro_batches needs shard or partial: sum"),
        ("{shard: 0, micro_batches: [x0, nope]}", "'nope' is not a value of rank 0"),
        ("{shard: 1, micro_batches: [x0, x1]}", "has 1 dimensions, so it has no axis 1"),
        ("{shard: 0, micro_batches: [x0, x1, w]}", "does not split into 1 ranks x 3 micro-batches"),
    ],
)
def test_bad_micro_batches_entry_is_a_one_line_error(tmp_path, entry, message):
    seq, rank = _graphs(tmp_path, divisor=8)
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--relations", str(_spec(tmp_path, entry))])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    assert message in text, text
