"""One spelling of output options: --out (import-fx's old --output still works, hidden)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import ENTANGLE_BUNDLED

from analyzer.cli import main

DUMP = ENTANGLE_BUNDLED / "gpt" / "paral1_layer1" / "fw.g0.r0.py"
pytestmark = pytest.mark.skipif(not DUMP.is_file(), reason="examples/entangle/published not present")


@pytest.mark.parametrize("flag", ["-o", "--out", "--output"])
def test_import_fx_writes_to_out(tmp_path, flag):
    out = tmp_path / "seq.onnx"
    result = CliRunner().invoke(main, ["import-fx", str(DUMP), flag, str(out), "--world-size", "1"])
    assert result.exit_code == 0 and out.is_file(), result.output


def test_import_fx_without_an_output_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(main, ["import-fx", str(DUMP), "--world-size", "1"])
    assert (
        result.exit_code == 2
        and result.output.strip() == "shardlog: error: shardlog import-fx: missing option '-o' / '--out'"
    )
    help_text = CliRunner().invoke(main, ["import-fx", "--help"]).output
    assert "--out FILE" in help_text and "--output " not in help_text
