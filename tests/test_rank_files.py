"""A missing, extra, duplicated or misordered rank file ends in one line and exit 2: from the
files' metadata, else from the weights' shapes and stored values (analyzer/inputs/rank_files.py)."""

from __future__ import annotations

import onnx
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, model_from_text

from analyzer.cli import main

LLAMA = EXAMPLES / "llama_tp2"
LLAMA4 = EXAMPLES / "llama_tp4"
PP = EXAMPLES / "llama_pp2"
pytestmark = pytest.mark.skipif(not LLAMA.is_dir(), reason="examples/ not present")


def _error(*files: object, extra=()) -> str:
    result = CliRunner().invoke(main, ["check", *map(str, files), *extra, "-q"])
    out = result.output.strip()
    assert result.exit_code == 2, out
    assert len(out.splitlines()) == 1 and "Traceback" not in out, out
    return out


def test_swapped_rank_files_by_metadata():
    text = _error(LLAMA / "seq.onnx", LLAMA / "rank1.onnx", LLAMA / "rank0.onnx")
    assert f"the rank files are out of order: {LLAMA / 'rank1.onnx'} is the file of rank 1" in text
    assert f"given as rank 0; give them in rank order: {LLAMA / 'rank0.onnx'} {LLAMA / 'rank1.onnx'}" in text


@pytest.mark.skipif(not LLAMA4.is_dir(), reason="examples/llama_tp4 not present")
def test_missing_rank_file_by_metadata():
    text = _error(LLAMA4 / "seq.onnx", *(LLAMA4 / f"rank{r}.onnx" for r in (0, 1, 3)))
    assert "the file of rank 2 is missing: 3 rank files were given for a world size of 4" in text


def test_a_file_given_twice_by_metadata():
    text = _error(LLAMA / "seq.onnx", LLAMA / "rank0.onnx", LLAMA / "rank0.onnx")
    assert f"{LLAMA / 'rank0.onnx'} is given twice, as rank 0 and rank 1" in text


def test_the_sequential_file_as_a_rank_and_a_rank_as_the_sequential_file():
    text = _error(LLAMA / "seq.onnx", LLAMA / "seq.onnx", LLAMA / "rank1.onnx")
    assert "is a sequential export (metadata shardlog.rank = -1), given as rank 0" in text
    text = _error(LLAMA / "rank0.onnx", LLAMA / "rank0.onnx", LLAMA / "rank1.onnx")
    assert "is the file of rank 0 (metadata shardlog.rank), given as the sequential model" in text


@pytest.mark.skipif(not PP.is_dir(), reason="examples/llama_pp2 not present")
def test_stage_files_without_pp_and_stages_swapped():
    text = _error(PP / "seq.onnx", PP / "stage0.onnx", PP / "stage1.onnx")
    assert "is pipeline stage 0, given as rank 0: give --pp P for stage files" in text
    text = _error(PP / "seq.onnx", PP / "stage1.onnx", PP / "stage0.onnx", extra=["--pp", "2"])
    assert "stage1.onnx: is pipeline stage 1 (metadata shardlog.stage), given as stage 0" in text


def _tiny(tmp_path, world: int, metadata=True, sizes=None):
    """A Linear y = x @ w.T with w (4*world x 2) stored; rank r holds rows chunk r."""
    import numpy as np
    from onnx import helper, numpy_helper

    w = np.arange(8 * world, dtype=np.float32).reshape(4 * world, 2)

    def linear(weight, rank, ws):
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "wt"], ["y"]), helper.make_node("Transpose", ["w"], ["wt"])][::-1],
            "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, weight.shape[0]])],
            [numpy_helper.from_array(weight, "w")],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        if metadata:
            helper.set_model_props(model, {"shardlog.rank": str(rank), "shardlog.world_size": str(ws)})
        return model

    paths = [tmp_path / "seq.onnx"]
    onnx.save(linear(w, -1, 1), paths[0])
    for r, chunk in enumerate(np.split(w, world)):
        paths.append(tmp_path / f"rank{r}.onnx")
        onnx.save(linear(chunk, r, (sizes or {}).get(r, world)), paths[-1])
    return paths


def test_a_glob_order_rank10_before_rank2_is_named(tmp_path):
    seq, *ranks = _tiny(tmp_path, 12)
    globbed = sorted(ranks, key=str)  # rank0 rank1 rank10 rank11 rank2 ...
    text = _error(seq, *globbed)
    assert f"{ranks[10]} is the file of rank 10 (metadata shardlog.rank), given as rank 2" in text
    assert f"give them in rank order: {ranks[0]} {ranks[1]} {ranks[2]}" in text
    assert text.endswith("... (a shell glob sorts rank10 before rank2)")
    other = _error(seq, *ranks[:2], *ranks[4:], *ranks[2:4])  # any wrong order is refused
    assert "given as rank 2" in other and "shell glob" not in other


def test_runs_of_different_world_sizes(tmp_path):
    seq, *ranks = _tiny(tmp_path, 2, sizes={1: 4})
    assert "the rank files come from runs of different world sizes" in _error(seq, *ranks)


def test_files_without_metadata_swapped_by_stored_values(tmp_path):
    seq, *ranks = _copies_without_metadata(tmp_path)
    text = _error(seq, ranks[1], ranks[0])
    assert f"the rank files are out of order: {ranks[1]} holds rank 1's chunk of every sharded weight" in text
    assert f"give them in rank order: {ranks[0]} {ranks[1]}" in text


def test_files_without_metadata_given_twice_by_stored_values(tmp_path):
    seq, *ranks = _copies_without_metadata(tmp_path)
    text = _error(seq, ranks[0], ranks[0])
    assert f"{ranks[0]} is given as rank 0 and rank 1: it holds rank 0's chunk" in text
    assert "so the file of rank 1 is missing" in text


def test_files_without_metadata_missing_or_extra_by_shapes(tmp_path):
    seq, *ranks = _copies_without_metadata(tmp_path)
    text = _error(seq, ranks[0])
    assert "1 rank file was given, but the weights' shapes say the world size is 2" in text
    assert text.endswith("a rank file is missing")
    text = _error(seq, ranks[0], ranks[1], ranks[1])
    assert text.endswith("an extra rank file was given")


def test_one_weight_of_another_rank_is_a_discrepancy_not_a_file_error(tmp_path):
    """One refuted weight cannot tell a misordered file from a loader bug: the check reports it."""
    seq, r0, r1 = _tiny(tmp_path, 2, metadata=False)
    text = (
        """<ir_version: 8, opset_import: ["" : 18]>
        g (float[1, 2] x) => (float[1, 4] y) <float[4, 2] w = {8., 9., 10., 11., 12., 13., 14., 15.}> {
            wt = Transpose(w)
            y = MatMul(x, wt)
        }"""
    )
    onnx.save(model_from_text(text), r0)  # holds rank 1's chunk; rank 1 too
    result = CliRunner().invoke(main, ["check", str(seq), str(r0), str(r1), "-q"])
    assert result.exit_code == 1 and result.output.strip() == "discrepancy", result.output


def _copies_without_metadata(tmp_path):
    paths = []
    for name in ("seq", "rank0", "rank1"):
        model = onnx.load(LLAMA / f"{name}.onnx")
        del model.metadata_props[:]
        paths.append(tmp_path / f"{name}.onnx")
        onnx.save(model, paths[-1])
    return paths
