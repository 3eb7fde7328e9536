"""ops/Linear.dl carries Partial(sum) through ops linear in it; a Pad whose fill is not 0 and a
Cast to an integer type are not linear (the fill would be added once per rank; each summand
would be truncated), so a Partial through them is no Partial, while a zero fill and a float cast
keep it. Each case runs with the numeric witness: the verified ones agree on numbers, the others
differ."""

from __future__ import annotations

import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>\n'


def _graphs(op_line: str, out_type: str, cols: int) -> tuple[str, list[str]]:
    seq = HEADER + f"""
seq (float[4, 8] x, float[8, 6] W) => ({out_type}[4, {cols}] y) {{
    h = MatMul(x, W)
{op_line.replace("SRC", "h").replace("DST", "y")}
}}
"""
    ranks = []
    for r in range(2):
        ranks.append(HEADER + f"""
rank{r} (float[4, 4] x, float[4, 6] W) => ({out_type}[4, {cols}] y) {{
    h = MatMul(x, W)
{op_line.replace("SRC", "h").replace("DST", "t")}
    y = com.microsoft.AllReduce(t)
}}
""")
    return seq, ranks


PAD = """    pads = Constant<value = int64[4] {0, 1, 0, 1}>()
    fill = Constant<value = float {FILL}>()
    DST = Pad(SRC, pads, fill)"""
CAST_INT = """    DST = Cast<to = 7>(SRC)"""
CAST_DOUBLE = """    DST = Cast<to = 11>(SRC)"""


@pytest.mark.parametrize(
    "line, out_type, cols, verified",
    [
        (PAD.replace("FILL", "0.0"), "float", 8, True),
        (PAD.replace("FILL", "1.0"), "float", 8, False),
        (CAST_DOUBLE, "double", 6, True),
        (CAST_INT, "int64", 6, False),
    ],
    ids=["pad-zero", "pad-one", "cast-double", "cast-int64"],
)
def test_partial_through_pad_and_cast(write_models, line, out_type, cols, verified):
    seq, ranks = _graphs(line, out_type, cols)
    result, _, _, _ = check_text_graphs(write_models, seq, ranks, triage=False)
    if verified:
        assert result.verdict == "verified", result.verdict_.discrepancies
        assert result.numeric["y"] < 1e-4
    else:
        assert result.verdict == "discrepancy"
        assert result.numeric["y"] > 0.5
