"""ONNX graphs flattened into fact tables (relations declared in ``schemas/facts.dl``)."""

from __future__ import annotations

from analyzer.facts.extract import FactTables, extract_graph_facts, load_model
from analyzer.facts.source import parse_source

__all__ = ["FactTables", "extract_graph_facts", "load_model", "parse_source"]
