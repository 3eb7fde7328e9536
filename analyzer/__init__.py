"""shardlog: prove that per-rank ONNX programs compute what a sequential ONNX model computes.

The analysis is written as Soufflé-syntax Datalog rules (``rules/``) over fact tables
extracted from ONNX graphs (``schemas/`` declares them); Python reads files, runs engines,
does shape algebra and reports. Entry points: :func:`check` and :func:`tables_of`.
"""

from __future__ import annotations

__all__ = ["__version__", "check", "CheckResult", "tables_of"]

__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("check", "CheckResult", "tables_of"):
        from analyzer import api

        return getattr(api, name)
    raise AttributeError(f"module 'analyzer' has no attribute {name!r}")
