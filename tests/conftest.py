"""Shared test helpers: paths, small ONNX graphs written in ONNX text syntax."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.parser
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_DATA = ROOT.parent / "shared" / "data"


def model_from_text(text: str) -> onnx.ModelProto:
    """Parse an ONNX text model and check it."""
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model)
    return model


@pytest.fixture
def write_models(tmp_path):
    """Write {name: ModelProto} into tmp_path and return {name: path}."""

    def _write(models: dict[str, onnx.ModelProto]) -> dict[str, Path]:
        paths = {}
        for name, model in models.items():
            path = tmp_path / f"{name}.onnx"
            onnx.save(model, str(path))
            paths[name] = path
        return paths

    return _write
