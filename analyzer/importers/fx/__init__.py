"""Import torch.fx ATen graph dumps (TorchDynamo + AOTAutograd, one per rank) as ONNX models.

``import_fx(path)`` parses the printed graph with :mod:`ast` (never executing it) and writes
an ONNX model the checker can compare: see :mod:`analyzer.importers.fx.parse` for the input format and
:mod:`analyzer.importers.fx.to_onnx` for naming and the op mapping.
"""

from analyzer.importers.fx.parse import FxGraph, parse_fx, parse_fx_text
from analyzer.importers.fx.to_onnx import fx_to_onnx, import_fx

__all__ = ["FxGraph", "fx_to_onnx", "import_fx", "parse_fx", "parse_fx_text"]
