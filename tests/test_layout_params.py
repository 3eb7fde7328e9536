"""The typed fields of layout params (schemas/layouts.dl): the rows analyzer/layout.py writes for
each of the six forms fit the schema's Param_* declarations and say what the text says."""

from __future__ import annotations

import pytest

from analyzer.facts import FactTables
from analyzer.layout import Layout
from analyzer.solve.program import load_program_cached
from analyzer.solve.rulebook import rule_files, schema_files

FORMS = [
    (Layout("Replicate"), "", {}),
    (Layout("Shard", axis=1), "", {}),
    (Layout("Partial", reduce="max"), "max", {}),
    (Layout("Shard", axis=0, sections=(64, 16, 16)), "64,16,16",
     {"Param_Section": [(0, 0, 64, 1), (1, 64, 16, 1), (2, 80, 16, 1)]}),
    (Layout("Shard", axis=0, sections=(8, 4, 4), replicas=(1, 2, 2)), "8,4:rep2,4:rep2",
     {"Param_Section": [(0, 0, 8, 1), (1, 8, 4, 2), (2, 12, 4, 2)]}),
    (Layout("Shard", axis=1, replicas=2), "rep2", {"Param_Replicas": [(2, -1)]}),
    (Layout("Shard", axis=1, replicas=2, inner=2), "rep2/2", {"Param_Replicas": [(2, 2)]}),
    (Layout("Shard", axis=0, micro=(4, 1)), "mb4:1", {"Param_Micro": [(4, 1, "mb4")]}),
    (Layout("Partial", reduce="sum", micro=(2, 0)), "mb2:0", {"Param_Micro": [(2, 0, "mb2")]}),
    (Layout("Partial", reduce="sum", even=True), "sum:even", {}),
]


@pytest.mark.parametrize(("layout", "text", "fields"), FORMS, ids=[str(f[0]) for f in FORMS])
def test_param_fields_of_every_form(layout, text, fields):
    axis = -1 if layout.axis is None else layout.axis
    assert layout.param == text and Layout.from_row(layout.kind, axis, text) == layout
    facts = FactTables()
    for name, row in layout.param_facts():
        facts.add(name, **row)
    decls = load_program_cached([*schema_files(), *rule_files([])]).decls
    got = {name: sorted(row[1:] for row in rows) for name, rows in facts.tuples(decls).items()}
    assert got == fields
    assert all(row[0] == text for rows in facts.tuples(decls).values() for row in rows)


def test_even_split_is_its_own_relation():
    """Partial(sum, even): every rank holds s / N (docs/soundness.md, 4.), not Partial(sum)."""
    import numpy as np

    from analyzer.layout import PARTIAL_SUM
    from analyzer.witness.layouts import distribute

    even = Layout.from_row("Partial", -1, "sum:even")
    assert even != PARTIAL_SUM and str(even) == "Partial(sum, even)"
    value = np.arange(6.0).reshape(2, 3)
    assert all(np.array_equal(p, value / 3) for p in distribute(even, value, 3))
    with pytest.raises(ValueError):
        Layout("Partial", reduce="max", even=True)
