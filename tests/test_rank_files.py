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


def _stripped(tmp_path, example, names=("seq", "rank0", "rank1")):
    """The example's files with no metadata and no stored weight: every float initializer of
    8 rows or more becomes a graph input (only the small constants stay, rank literals among them)."""
    paths = []
    for name in names:
        model = onnx.load(EXAMPLES / example / f"{name}.onnx")
        del model.metadata_props[:]
        moved = [
            i
            for i in model.graph.initializer
            if i.data_type == onnx.TensorProto.FLOAT and len(i.dims) >= 1 and i.dims[0] >= 8
        ]
        kept = [i for i in model.graph.initializer if i not in moved]
        del model.graph.initializer[:]
        model.graph.initializer.extend(kept)
        model.graph.input.extend(onnx.helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in moved)
        paths.append(tmp_path / f"{name}.onnx")
        onnx.save(model, paths[-1])
    return paths


@pytest.mark.skipif(not (EXAMPLES / "qwen2_tp2_vocab").is_dir(), reason="examples/qwen2_tp2_vocab not present")
def test_files_without_metadata_or_weights_swapped_by_rank_literals(tmp_path):
    """The vocab-parallel embedding's range [r*32, (r+1)*32) is all that tells rank 1 from rank 0."""
    seq, r0, r1 = _stripped(tmp_path, "qwen2_tp2_vocab")
    assert all(len(i.dims) == 0 or i.dims[0] < 8 for r in (r0, r1) for i in onnx.load(r).graph.initializer)
    text = _error(seq, r1, r0)
    assert text.startswith(f"shardlog: error: the rank files are out of order: {r1} holds rank 1's rank literals, ")
    evidence = "(2 rank-dependent constants agree; e.g. input 1 of node_ge: 32 on rank 0, 64 on rank 1)"
    assert f"given as rank 0 {evidence}" in text
    assert text.endswith(f"give them in rank order: {r0} {r1}")
    result = CliRunner().invoke(main, ["check", str(seq), str(r0), str(r1), "-q"])
    assert result.exit_code == 0 and result.output.strip() == "verified", result.output


@pytest.mark.skipif(not (EXAMPLES / "mixtral_ep4").is_dir(), reason="examples/mixtral_ep4 not present")
def test_a_missing_rank_file_without_metadata_by_rank_literals(tmp_path):
    """Expert ids r on each rank's router mask: ranks 0, 1, 3 given say rank 2 is missing."""
    seq, r0, r1, _, r3 = _stripped(tmp_path, "mixtral_ep4", ("seq", "rank0", "rank1", "rank2", "rank3"))
    text = _error(seq, r0, r1, r3)
    assert "the file of rank 2 is missing: the rank literals of the 3 files given say ranks 0, 1, 3" in text
    text = _error(seq, r0, r3, r1)  # ranks 0, 3, 1: neither a permutation nor a gap; the shapes tell
    assert "3 rank files were given, but the weights' shapes say the world size is 4" in text


def test_rank_literals_need_two_sites_that_agree():
    """One rank-dependent constant, or two that disagree, say nothing (a bug in one rank's code
    looks like that); whole-number floats (a position range cast to float) count."""
    from analyzer.errors import InputError
    from analyzer.inputs.rank_files import check_order_by_literals, rank_literals

    def graph(a: int, b: int, counter: int):
        model = model_from_text(
            f"""<ir_version: 8, opset_import: ["" : 18]>
            g (float[4] x, int64[1] i) => (float[4] y, int64[1] z) {{
                p = Constant <value = float[4] {{{a}., {a + 1}., {a + 2}., {a + 3}.}}> ()
                k = Constant <value = int64[1] {{{b}}}> ()
                y = Add (x, p)
                z = Sub (i, k)
            }}"""
        )
        for node in model.graph.node:  # the exporter's counters differ between ranks
            node.name = f"node_{node.op_type}_{counter}"
        return model

    swapped = [graph(4, 8, 7), graph(0, 0, 6)]
    lit = rank_literals(swapped)
    assert sorted(lit.values()) == [[1, 0], [1, 0]]
    with pytest.raises(InputError, match="a holds rank 1's rank literals, given as rank 0"):
        check_order_by_literals(["a", "b"], lit, swapped)
    check_order_by_literals(["a", "b"], dict(list(lit.items())[:1]), swapped)  # one site: nothing
    disagree = [graph(4, 0, 1), graph(0, 8, 1)]
    assert sorted(rank_literals(disagree).values()) == [[0, 1], [1, 0]]
    check_order_by_literals(["a", "b"], rank_literals(disagree), disagree)
    assert rank_literals([graph(0, 0, 1), graph(0, 0, 2)]) == {}  # the same on every rank: no literal


def test_rank_literals_of_a_float16_graph_raise_no_numpy_warning():
    """A float16 constant is compared with 2**53 as float64 (in its own type the bound overflows
    and numpy prints a RuntimeWarning under the user's report)."""
    import warnings

    import numpy as np
    from onnx import helper, numpy_helper

    from analyzer.inputs.rank_files import _literals_of

    big = numpy_helper.from_array(np.array([60000.0, 3.0], dtype=np.float16), "c")
    node = helper.make_node("Add", ["x", "c"], ["y"], name="node_Add_3")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 10, [2])],
                              [helper.make_tensor_value_info("y", 10, [2])], [big])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lits = _literals_of(helper.make_model(graph))
    assert list(lits.values()) == [((2,), (60000, 3), "node_Add_3")]
