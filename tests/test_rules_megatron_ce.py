"""Megatron-core's ``vocab_parallel_cross_entropy`` as torch.onnx exports it, on both sides
(small hand-written ONNX text graphs in the exported form of examples/megatron_gpt_tp2_loss):
the sequential program is the same code at tensor-parallel size 1 (its target mask is the whole
range [0, V) and nothing is all-reduced), each of two ranks holds a vocab chunk of the logits.
``t[mask] = c`` is exported as ``ScatterND(t, Transpose(NonZero(mask)), Reshape(Expand(c,
count)))`` (parallel/vocab_dtensor.dl MaskedAssign, here with the lookup's own mask:
MaskedLookup) and ``logits_2d[arange, target]`` as ``GatherND(logits_2d, Concat(arange column,
target column))`` (parallel/vocab.dl RangeLookup, RowIota). The seq's masked lookup of the
whole range against the ranks' masked lookups of their chunks is vocab.dl's Partial(sum) rule;
the rest (the row max all-reduced with MAX, the sum of exponentials) is the generic rules'.
Correct ranks verify; a range end taken inclusive is flagged at the seq's range mask with the
hint ``vocab-range`` (diagnose/hints_forms.dl RangeMaskNode); a row index column that is not
``arange`` proves nothing."""

from __future__ import annotations

import onnx.parser
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
V, N, R = 16, 2, 4
CHUNK = V // N


def _program(lo: int, hi: int, *, world: int, edits: dict[str, str] | None = None) -> str:
    """Megatron-core's calculate_predicted_logits / cross-entropy in torch.onnx's form on logits
    [S, B, V/world] = [R, 1, V/world] (its 2-D view [R, V/world] for the lookup), targets [R, 1];
    ``world`` 1 (the seq: its collectives over one rank trace to nothing) or N; ``edits``
    replaces lines by the value they define ("" drops the line)."""
    width = V if world == 1 else CHUNK
    reduce = world > 1
    consts = (
        f"int64[1] ax = {{-1}}, int64 lo = {{{lo}}}, int64 hi = {{{hi}}}, int64 zi = {{0}}, float zf = {{0.0}}, "
        f"int64[2] flat = {{{R}, {width}}}, int64[2] rows1 = {{{R}, 1}}, "
        f"int64[{R}, 1] iota = {{{', '.join(str(i) for i in range(R))}}}"
        # the all-reduces' outputs (shape inference does not know com.microsoft ops)
        + (f", float[{R}, 1] gm, float[{R}, 1] P, float[{R}, 1] S" if world > 1 else "")
    )
    lines = {
        "l": "l = MatMul(x, w)",
        "m": "m = ReduceMax<keepdims=0>(l, ax)",
        "gm": 'gm = com.microsoft.AllReduce<reduction="max">(m)' if reduce else "",
        "c": f"c = Unsqueeze({'gm' if reduce else 'm'}, ax)",
        "z": "z = Sub(l, c)",
        "z2": "z2 = Reshape(z, flat)",
        "below": "below = Less(t, lo)",
        "above": "above = GreaterOrEqual(t, hi)",
        "mask": "mask = Or(below, above)",
        "nz": "nz = NonZero(mask)",
        "nzt": "nzt = Transpose<perm=[1, 0]>(nz)",
        "mi": "mi = Reshape(mask, ax)",
        "mc": "mc = Cast<to=7>(mi)",
        "cnt": "cnt = ReduceSum<keepdims=1>(mc)",
        "sh": "sh = Sub(t, lo)",
        "fi": "fi = Expand(zi, cnt)",
        "fi2": "fi2 = Reshape(fi, ax)",
        "idx": "idx = ScatterND(sh, nzt, fi2)",
        "idxf": "idxf = Reshape(idx, ax)",
        "col": "col = Unsqueeze(idxf, ax)",
        "ind": "ind = Concat<axis=-1>(iota, col)",
        "pv0": "pv0 = GatherND(z2, ind)",
        "pv1": "pv1 = Reshape(pv0, rows1)",
        "ff": "ff = Expand(zf, cnt)",
        "ff2": "ff2 = Reshape(ff, ax)",
        "pv": "pv = ScatterND(pv1, nzt, ff2)",
        "P": "P = com.microsoft.AllReduce(pv)" if reduce else "",
        "e": "e = Exp(z)",
        "se": "se = ReduceSum<keepdims=0>(e, ax)",
        "S": "S = com.microsoft.AllReduce(se)" if reduce else "",
        "ls": f"ls = Log({'S' if reduce else 'se'})",
        "loss": f"loss = Sub(ls, {'P' if reduce else 'pv'})",
    }
    lines.update(edits or {})
    body = "\n  ".join(v for v in lines.values() if v)
    sig = f"g (float[{R}, 1, 8] x, float[8, {width}] w, int64[{R}, 1] t) => (float[{R}, 1] loss)"
    text = f"{HEADER}\n{sig} <{consts}> {{\n  {body}\n}}"
    onnx.parser.parse_model(text)  # a typo in a program is a test bug: fail here
    return text


def _run(write_models, ranges=None, edits=None, seq_edits=None):
    ranges = ranges or {}
    ranks = [_program(*ranges.get(r, (r * CHUNK, (r + 1) * CHUNK)), world=N, edits=edits) for r in range(N)]
    seq = _program(0, V, world=1, edits=seq_edits)
    return check_text_graphs(write_models, seq, ranks, infer_shapes=True)[0]


def test_megatron_cross_entropy_at_tp1_and_tp2_verifies(write_models):
    result = _run(write_models)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.verdict_.outputs[0].relation == "Replicate"
    assert result.numeric["loss"] < 1e-5


def test_a_range_end_taken_inclusive_is_flagged_at_the_range_mask_with_vocab_range(write_models):
    result = _run(write_models, ranges={r: (r * CHUNK, (r + 1) * CHUNK - 1) for r in range(N)})
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type in ("Less", "GreaterOrEqual", "Or"), first.op_type
    assert "vocab-range" in first.hint_ids, first.hint_ids
    assert result.numeric["loss"] > 1e-2


def test_a_row_index_that_is_not_arange_proves_nothing(write_models):
    """Row index column {0, 1, 2, 2} on every side (row 2 read twice, row 3 never): the numbers of
    the two sides may agree, but no rule makes it a lookup of the ranks' chunks (RowIota), so the
    check never says verified."""
    edits = {"ind": "ind = Concat<axis=-1>(rows, col)"}
    rows = f"int64[{R}, 1] rows = {{0, 1, 2, 2}}, "
    ranks = [_program(r * CHUNK, (r + 1) * CHUNK, world=N, edits=edits) for r in range(N)]
    seq = _program(0, V, world=1, edits=edits)
    with_rows = [p.replace(f"int64[{R}, 1] iota =", rows + f"int64[{R}, 1] iota =") for p in (seq, *ranks)]
    result = check_text_graphs(write_models, with_rows[0], with_rows[1:], infer_shapes=True)[0]
    assert result.verdict != "verified"
    assert result.verdict_.outputs[0].relation is None
