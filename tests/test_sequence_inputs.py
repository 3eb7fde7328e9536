"""Sequence-sharded graph inputs that are not weights (issue 16 item 4): a context-parallel
Hugging Face Llama whose ``position_ids`` and ``attention_mask`` are graph inputs split on the
sequence axis like ``input_ids`` (scripts/export_cp.py --positions input). The rank computes its
rotary cos/sin from its chunk of the positions, and all-gathers the positions and the padding
mask to build the sequential model's mask (HF's create_causal_mask) before keeping its query
rows. No spec: the inputs' relations come from their shapes ([B, S/N] against [B, S])."""

from __future__ import annotations

from pathlib import Path

import yaml

from analyzer import check

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _check(case: str):
    folder = EXAMPLES / case
    spec = yaml.safe_load((folder / "case.yaml").read_text())
    return spec, check(folder / spec["files"]["seq"], [folder / r for r in spec["files"]["ranks"]], numeric=True)


def test_sequence_sharded_positions_are_inferred_and_verified():
    spec, result = _check("llama_cp2_positions")
    assert spec["expected"] == result.verdict == "verified"
    given = {r.seq_value: (str(r.layout), r.established) for r in result.inputs.relations}
    for name in ("input_ids", "attention_mask", "position_ids"):
        assert given[name] == ("Shard(1)", "shapes"), name
    (out,) = result.verdict_.outputs
    assert out.relation == "Shard(1)"
    assert result.numeric["logits"] < 1e-4


def test_positions_not_offset_by_the_rank_start_are_flagged_at_the_rotary_table():
    """The rank re-bases its chunk of position_ids to 0: the rotary table (model.rotary_emb) is the
    first frontier, with the hint that names the offset; the witness sees the logits off."""
    spec, result = _check("llama_cp2_positions_bug_rebased_positions")
    assert spec["expected"] == result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.scope == spec["bug_module"] == "model.rotary_emb"
    assert "rotary-offset" in first.hint_ids
    assert "position_ids" in [i.name for i in first.inputs]
    assert result.numeric["logits"] > 1e-2


def test_sequence_sharded_positions_given_in_the_spec(tmp_path):
    """The same relation written in a spec is taken as given (and checked against the rank
    shapes): a spec that calls the positions replicated is refused, one line, before any rule."""
    import pytest

    from analyzer.errors import InputError

    folder = EXAMPLES / "llama_cp2_positions"
    ranks = [folder / "rank0.onnx", folder / "rank1.onnx"]
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  position_ids: {shard: 1}\n  attention_mask: Shard(1)\n")
    result = check(folder / "seq.onnx", ranks, relations=spec)
    given = {r.seq_value: (str(r.layout), r.established) for r in result.inputs.relations}
    assert given["position_ids"] == given["attention_mask"] == ("Shard(1)", "spec")
    assert result.verdict == "verified"
    spec.write_text("relations:\n  position_ids: replicate\n")
    with pytest.raises(InputError, match="position_ids"):
        check(folder / "seq.onnx", ranks, relations=spec)
