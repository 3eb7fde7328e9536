"""A spec cannot lie: its relations are checked against the ranks' shapes and stored values,
DTensor's own spelling of a placement is read, and the published JSON Schema validates it."""

from __future__ import annotations

import onnx
import pytest
import yaml
from click.testing import CliRunner
from conftest import EXAMPLES, model_from_text

from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.inputs.infer import load_spec
from analyzer.layout import PARTIAL_SUM, REPLICATE, Layout

LLAMA = EXAMPLES / "llama_tp2"
needs_llama = pytest.mark.skipif(not LLAMA.is_dir(), reason="examples/llama_tp2 not present")
DOWN = "model.layers.0.mlp.down_proj.weight"  # RowwiseParallel: Shard(1) by its rank shapes


def _check(spec_text: str, tmp_path, files=None):
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text)
    files = files or [str(LLAMA / "seq.onnx"), str(LLAMA / "rank0.onnx"), str(LLAMA / "rank1.onnx")]
    result = CliRunner().invoke(main, ["check", *files, "--relations", str(spec), "-q"])
    return result.exit_code, result.output


def _one_line(code, out):
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1, out
    assert "Traceback" not in out
    return out.strip()


@needs_llama
def test_shard_axis_the_rank_shapes_contradict_is_refused(tmp_path):
    text = _one_line(*_check(f"relations:\n  {DOWN}: {{shard: 0}}\n", tmp_path))
    assert f"relations.{DOWN}: Shard(0) gives rank 0 shape [32, 128], but rank 0 records [64, 64]" in text
    assert "the shapes fit Shard(1)" in text


@needs_llama
def test_replicate_on_a_sharded_weight_is_refused(tmp_path):
    text = _one_line(*_check(f"relations:\n  {DOWN}: replicate\n", tmp_path))
    assert f"relations.{DOWN}: Replicate gives rank 0 shape [64, 128]" in text


@needs_llama
def test_a_renamed_intermediate_of_another_shape_is_refused(tmp_path):
    # _unsafe_view_5 names different tensors on seq ([1, 4, 8, 8]) and on the ranks ([1, 8, 64])
    text = _one_line(*_check("relations:\n  _unsafe_view_5: Partial()\n", tmp_path))
    assert "relations._unsafe_view_5: Partial(sum) gives rank 0 shape [1, 4, 8, 8]" in text
    assert "but rank 0 records [1, 8, 64]" in text


@needs_llama
def test_partial_on_a_stored_replicated_weight_is_refused_by_its_values(tmp_path):
    text = _one_line(*_check("relations:\n  model.norm.weight: {partial: sum}\n", tmp_path))
    assert "relations.model.norm.weight: the stored values contradict Partial(sum)" in text


def _swapped_chunks(write_models, tmp_path):
    """seq stores w (4x2); rank 0 stores rows 2..3 and rank 1 rows 0..1 (shapes fit Shard(0))."""
    seq = model_from_text(
        """<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[4] y) <float[4, 2] w = {1., 2., 3., 4., 5., 6., 7., 8.}> {
            y = MatMul(w, x)
        }"""
    )
    ranks = {}
    for r, rows in enumerate(("5., 6., 7., 8.", "1., 2., 3., 4.")):
        ranks[f"rank{r}"] = model_from_text(
            f"""<ir_version: 8, opset_import: ["" : 17]>
            g (float[2] x) => (float[2] y) <float[2, 2] w = {{{rows}}}> {{
                y = MatMul(w, x)
            }}"""
        )
    paths = write_models({"seq": seq, **ranks})
    return [str(paths["seq"]), str(paths["rank0"]), str(paths["rank1"])]


def test_shard_the_stored_values_contradict_is_refused(write_models, tmp_path):
    files = _swapped_chunks(write_models, tmp_path)
    text = _one_line(*_check("relations:\n  w: Shard(0)\n", tmp_path, files))
    assert "relations.w: the stored values contradict Shard(0): rank 0 does not hold its piece of Shard(0)" in text


def test_partial_whose_stored_pieces_sum_to_the_value_is_accepted(write_models, tmp_path):
    """The value check is not a blanket refusal: pieces that do add up pass it."""
    seq = model_from_text(
        """<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) <float[2] w = {3., 5.}> { y = Add(w, x) }"""
    )
    pieces = {
        f"rank{r}": onnx.parser.parse_model(
            f"""<ir_version: 8, opset_import: ["" : 17]>
            g (float[2] x) => (float[2] y) <float[2] w = {{{v}}}> {{ y = Add(w, x) }}"""
        )
        for r, v in enumerate(("1., 2.", "2., 3."))
    }
    paths = write_models({"seq": seq, **pieces})
    from analyzer.inputs.load import load_inputs

    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: Partial()\n")
    inp = load_inputs(paths["seq"], [paths["rank0"], paths["rank1"]], spec)
    assert [(r.seq_value, r.layout, r.source) for r in inp.relations if r.seq_value == "w"] == [
        ("w", PARTIAL_SUM, "spec")
    ]
    spec.write_text("relations:\n  w: Replicate()\n")
    with pytest.raises(InputError, match="rank 0 does not hold the sequential value"):
        load_inputs(paths["seq"], [paths["rank0"], paths["rank1"]], spec)


@pytest.mark.parametrize(
    "spelling, layout",
    [
        ("Shard(1)", Layout("Shard", axis=1)),
        ("Shard(dim=1)", Layout("Shard", axis=1)),
        ("'  Shard( 1 ) '", Layout("Shard", axis=1)),
        ("{placement: Shard(1)}", Layout("Shard", axis=1)),
        ("{placement: Shard(0), sections: [64, 64]}", Layout("Shard", axis=0, sections=(64, 64))),
        ("Replicate()", REPLICATE),
        ("Partial()", PARTIAL_SUM),
        ("Partial(sum)", PARTIAL_SUM),  # DTensor's repr
        ("'Partial(\"sum\")'", PARTIAL_SUM),
        ("'Partial(reduce_op=\"max\")'", Layout("Partial", reduce="max")),
    ],
)
def test_dtensor_spellings_read_as_the_mapping_form(tmp_path, spelling, layout):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"relations:\n  w: {spelling}\n")
    assert load_spec(spec).relations["w"] == (layout, None)


@pytest.mark.parametrize(
    "spelling, message",
    [
        ("'Partial(\"avg\")'", 'Partial("avg") is not supported: the rules relate Partial("sum") and Partial("max")'),
        ("'Partial(\"min\")'", "is not supported"),
        ("Shard(-1)", "Shard needs a non-negative dim"),
        ("Shard(x)", "Shard needs a non-negative dim"),
        ("Shard(0, 1)", "Shard takes one argument (dim)"),
        ("Shard(0", "is not a DTensor placement"),
        ("Replicate(1)", "Replicate() takes no arguments"),
        ("{placement: Shard(0), shard: 1}", "give exactly one of replicate, shard, partial, placement"),
    ],
)
def test_bad_dtensor_spellings_are_one_line_errors(tmp_path, spelling, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"relations:\n  w: {spelling}\n")
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert message in str(err.value) and "relations.w" in str(err.value)
    assert len(str(err.value).splitlines()) == 1


@needs_llama
def test_a_check_with_dtensor_spellings_verifies(tmp_path):
    code, out = _check(
        "relations:\n"
        "  _unsafe_view_7: {placement: Partial(), ranks: [_unsafe_view_5, _unsafe_view_5]}\n"
        f"  {DOWN}: Shard(dim=1)\n"
        "  input_ids: Replicate()\n",
        tmp_path,
    )
    assert code == 0 and out.strip() == "verified", out


@needs_llama
def test_partial_avg_is_refused_on_the_command_line(tmp_path):
    text = _one_line(*_check(f"relations:\n  {DOWN}: Partial(avg)\n", tmp_path))
    assert "is not supported" in text


def _schema_errors(data) -> list:
    import jsonschema

    from analyzer.inputs.spec_schema import _json_keys, spec_schema

    return list(jsonschema.Draft202012Validator(spec_schema()).iter_errors(_json_keys(data)))


def test_the_schema_is_a_valid_json_schema():
    import jsonschema

    from analyzer.inputs.spec_schema import spec_schema

    jsonschema.Draft202012Validator.check_schema(spec_schema())


def test_every_bundled_spec_validates_against_the_schema():
    specs = [p for p in EXAMPLES.rglob("*.yaml") if p.name in ("spec.yaml", "mesh.yaml")]
    assert len(specs) >= 5
    for p in specs:
        assert _schema_errors(yaml.safe_load(p.read_text())) == [], p


@pytest.mark.parametrize(
    "body",
    [
        "relations:\n  input_ids: shrad\n",
        "relations:\n  input_ids: {shard: -1}\n",
        "relations:\n  w: {shard: 0, sections: [0]}\n",
        "relations:\n  w: {partial: avg}\n",
        "outputs: first\n",
        "outputs: []\n",
        "constants: {_tensor_constant0: zero}\n",
        "groups: {'1': 0}\n",
        "mesh: {tp: 2}\nreplica_seq: r.onnx\n",
        "meshes: {tp: 2}\n",
        "pipeline: {stages: 0}\n",
        "world_size: 0\n",
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(tmp_path, body):
    """The published schema is not looser than the loader on these malformed specs."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(body)
    with pytest.raises(InputError):
        load_spec(spec)
    assert _schema_errors(yaml.safe_load(body))


def test_the_schema_refuses_what_the_loader_would_have_read_as_a_claim(tmp_path):
    """``{replicate: false}`` reads as a claim of Replicate; the schema refuses it."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: {replicate: false}\n")
    with pytest.raises(InputError, match=r"relations\.w\.replicate: True was expected \(schemas/spec.schema.json\)"):
        load_spec(spec)


GPT = EXAMPLES / "entangle" / "published" / "gpt"


@pytest.mark.skipif(not GPT.is_dir(), reason="examples/entangle/published not present")
def test_spec_constants_apply_to_onnx_files_from_import_fx(tmp_path):
    """``shardlog import-fx`` without ``--constant`` leaves ``_tensor_constantN`` a graph input;
    the spec's ``constants:`` then binds it, as it does for the dump itself."""
    from analyzer import check
    from analyzer.importers.fx import import_fx

    dumps = [GPT / "paral1_layer1" / "fw.g0.r0.py"] + [GPT / "paral4_layer1" / f"fw.g0.r{r}.py" for r in range(4)]
    paths = []
    for k, dump in enumerate(dumps):
        model = import_fx(dump, world_size=1 if k == 0 else None, outputs=[0])
        assert any(i.name == "_tensor_constant0" for i in model.graph.input)
        paths.append(tmp_path / f"g{k}.onnx")
        onnx.save(model, paths[-1])
    spec = EXAMPLES / "entangle" / "gpt_tp2_layer1" / "spec.yaml"
    assert "constants:" in spec.read_text()
    assert check(paths[0], paths[1:], relations=spec).verdict == "verified"
    without = tmp_path / "spec.yaml"
    without.write_text("outputs: [0]\n")
    assert check(paths[0], paths[1:], relations=without).verdict == "discrepancy"
    assert any(i.name == "_tensor_constant0" for i in onnx.load(paths[1]).graph.input)  # file untouched


def test_a_constant_input_without_a_fixed_shape_is_a_one_line_error(write_models, tmp_path):
    text = """<ir_version: 8, opset_import: ["" : 17]>
        g (float[N] x, float[N] _tensor_constant0) => (float[N] y) { y = Add(x, _tensor_constant0) }"""
    paths = write_models({"seq": model_from_text(text), "rank0": model_from_text(text)})
    spec = tmp_path / "spec.yaml"
    spec.write_text("constants: {_tensor_constant0: 0}\n")
    from analyzer.inputs.load import load_inputs

    with pytest.raises(InputError, match="constant '_tensor_constant0' is a graph input without a fixed shape"):
        load_inputs(paths["seq"], [paths["rank0"]], spec)


def test_a_spec_that_passed_the_schema_is_not_validated_again_and_a_bad_one_always_is(tmp_path, monkeypatch):
    """The schema check is remembered by the digest of a spec that passed (importing jsonschema
    costs half a second); a spec that failed is checked, and refused, every time."""
    from analyzer.inputs import spec_schema

    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path / "cache"))
    calls = []
    real = spec_schema._validate
    monkeypatch.setattr(spec_schema, "_validate", lambda path, doc: calls.append(path) or real(path, doc))
    good = {"relations": {"w": {"shard": 0}}}
    spec_schema.validate_spec("good.yaml", good)
    spec_schema.validate_spec("good.yaml", good)
    assert calls == ["good.yaml"]
    spec_schema.validate_spec("other.yaml", {"relations": {"w": {"shard": 1}}})  # other data: validated
    assert calls == ["good.yaml", "other.yaml"]
    bad = {"relations": {"w": {"replicate": False}}}
    for _ in range(2):
        with pytest.raises(InputError, match=r"relations\.w\.replicate"):
            spec_schema.validate_spec("bad.yaml", bad)
    assert calls == ["good.yaml", "other.yaml", "bad.yaml", "bad.yaml"]
