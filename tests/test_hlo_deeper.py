"""Deeper transformers-neuronx programs (scripts/deepen_aws_hlo.py: the published last layer
repeated in the HLO text, since transformers-neuronx cannot be installed here) verify with the
same spec files, unchanged, as the published 1- and 2-layer ones; a bug in a copied layer is
flagged in that copy."""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import ROOT, SHARED_DATA

from analyzer import check

AWS = SHARED_DATA / "hlo" / "aws_llama"
SPECS = ROOT / "examples" / "hlo" / "aws_llama"
needs_aws = pytest.mark.skipif(not AWS.is_dir(), reason=f"{AWS} (GraphGuard's published HLO graphs) is not here")

_spec = importlib.util.spec_from_file_location("deepen_aws_hlo", ROOT / "scripts" / "deepen_aws_hlo.py")
deepen_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(deepen_mod)  # type: ignore[union-attr]
deepen = deepen_mod.deepen


def _deep(tmp_path, tp: int, layers: int):
    out = tmp_path / f"tp{tp}_layer{layers}.hlo"
    out.write_text(deepen((AWS / f"tp{tp}_layer2" / "graph.0.hlo").read_text(), layers))
    return out


@needs_aws
@pytest.mark.parametrize("tp", [2, 6, 8])
@pytest.mark.slow
def test_four_layers_verify_with_the_unchanged_spec(tmp_path, tp):
    spec = SPECS / ("spec_tp6.yaml" if tp == 6 else "spec.yaml")
    result = check(_deep(tmp_path, 1, 4), [_deep(tmp_path, tp, 4)], relations=spec, world_size=tp, triage=False)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    assert len(result.verdict_.outputs) == 1 + 2 * 4  # the logits and two kv caches per layer
    assert result.verdict_.conditional  # the weights are parameters without values


@needs_aws
def test_a_dropped_all_reduce_in_a_copied_layer_is_flagged_there(tmp_path):
    rank = _deep(tmp_path, 8, 4)
    text, count = re.subn(
        r"all-reduce\(%reshape\.268\.L4\), replica_groups=\{\{0,1,2,3,4,5,6,7\}\}, to_apply=%[\w.\-]+",
        "copy(%reshape.268.L4)",
        rank.read_text(),
    )
    assert count == 1
    rank.write_text(text)
    result = check(_deep(tmp_path, 1, 4), [rank], relations=SPECS / "spec.yaml", world_size=8, triage=False)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.node.endswith(".L4") and first.hint_ids == ["missing-allreduce"]
    assert first.source.endswith("transformers_neuronx/llama/hlo.py:322")


@needs_aws
def test_deepen_refuses_a_one_layer_program_and_a_lower_depth():
    with pytest.raises(ValueError, match="1 decoder layer"):
        deepen((AWS / "tp2_layer1" / "graph.0.hlo").read_text(), 4)
    with pytest.raises(ValueError, match="below the program's 2 layers"):
        deepen((AWS / "tp2_layer2" / "graph.0.hlo").read_text(), 1)
