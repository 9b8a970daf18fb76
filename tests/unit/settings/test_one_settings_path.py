"""One settings path: config slice -> --settings -> command-line options -> frozen dataclasses.

Every shipped configuration goes through that path into the dataclasses; the
schema and the dataclass metadata agree on every key they share; each default
lives in the dataclasses only.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml
from support.paths import ROOT

from nllbench.cli import parse
from nllbench.cli.data import parsed_filter_settings
from nllbench.cli.evaluate import parsed_evaluation_settings
from nllbench.filters import PHDSettings, PMBMSettings
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.options import options_of
from nllbench.pipeline.config import validated_config
from nllbench.pipeline.workflow import (
    Sweep,
    evaluate_settings,
    filter_settings,
    score_settings,
)
from nllbench.settings import SECTIONS, FilterRunSettings, config_defaults

SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
SHIPPED = sorted(
    [str(p.relative_to(ROOT)) for p in (ROOT / "config").glob("*.yaml")] + [".test/config/config.yaml"]
)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_config_reaches_the_dataclasses(name):
    config = validated_config(yaml.safe_load((ROOT / name).read_text()), SCHEMA)
    f, e = config["filter"], config["evaluation"]
    for filt in Sweep.from_config(config).filters:
        _, args = parse(["filter", "--settings", filter_settings(config, filt, [0, 1])])
        phd, pmbm, run = parsed_filter_settings(args)
        assert args.filter == filt
        assert pmbm == PMBMSettings(**{k: f[k] for k in options_of(PMBMSettings)})
        assert phd == PHDSettings(f["phd_prune"], f["phd_merge"], f["phd_cap"])
        assert (run.cphd_max_card, run.estimate_at) == (f["cphd_max_card"], f["estimate_at"])
        _, args = parse(["evaluate", "--settings", evaluate_settings(config, filt, 0)])
        s = parsed_evaluation_settings(args)
        assert s.qs == tuple(sorted(e["q"])) and s.estimator == e["estimators"][filt]
        for key in ("marginal", "cutoff", "p", "threshold", "existence_threshold", "theorem_rho", "budget"):
            assert getattr(s, key) == e[key], (name, key)
        assert s.exact is e["exact"] and args.cov_scales == e["cov_scales"] and args.probe_q == e["probe_q"]
    for tracker in config["trackers"]:
        _, args = parse(["score", "--settings", score_settings(config, tracker, e["q"][0], 1.0, 0)])
        assert parsed_evaluation_settings(args).cutoff == e["cutoff"] and args.tracker == tracker


def test_options_given_on_the_command_line_win_over_the_settings_object():
    _, args = parse(["filter", "--settings", json.dumps({"filter": "pmb", "gate": 9.0}), "--gate", "12"])
    assert parsed_filter_settings(args)[1].gate == 12.0 and args.filter == "pmb"


def test_the_command_line_defaults_are_the_dataclasses():
    _, args = parse(["filter", "--filter", "pmbm"])
    assert parsed_filter_settings(args) == (PHDSettings(), PMBMSettings(), FilterRunSettings())
    _, args = parse(["evaluate"])
    assert parsed_evaluation_settings(args) == EvaluationSettings()


def _expected_schema(field: dataclasses.Field) -> dict:
    """The JSON-schema keywords that say what the field's option accepts."""
    meta = field.metadata
    kind = {"number": "number", "integer": "integer", "bool": "boolean", "choice": "string"}[meta["kind"]]
    out = {"type": [kind, "null"] if field.default is None else kind}
    if meta["kind"] == "choice":
        out["enum"] = list(meta["choices"])
    for end, plain, strict in (
        ("low", "minimum", "exclusiveMinimum"),
        ("high", "maximum", "exclusiveMaximum"),
    ):
        if meta.get(end) is not None:
            out[strict if meta.get(f"open_{end}") else plain] = meta[end]
    return out


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_schema_and_dataclasses_agree_and_only_the_dataclasses_hold_defaults(section):
    schema = yaml.safe_load(SCHEMA.read_text())["properties"][section]
    backed = {}
    for cls, prefix in SECTIONS[section]:
        backed.update({k: f for k, f in options_of(cls, prefix).items() if f.metadata.get("config", True)})
    assert set(backed) == set(config_defaults(section))
    keywords = ("type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    for key, f in backed.items():
        spec = schema["properties"][key]
        assert "default" not in spec, f"{section}.{key}: its default is the dataclass's"
        assert key not in schema.get("required", []), f"{section}.{key}: optional (dataclass default)"
        if f.metadata.get("many"):
            assert spec["type"] == "array", key
            spec = spec["items"]
        assert {k: spec[k] for k in keywords if k in spec} == _expected_schema(f), f"{section}.{key}"
    # every other key of the section has no dataclass field: the sweep's shape, the estimators' table
    assert set(schema["properties"]) - set(backed) <= {"cov_scales", "probe_q", "estimators"}


def test_an_absent_key_takes_the_dataclass_default():
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    del config["filter"]["gate"], config["evaluation"]["cutoff"], config["evaluation"]["q"]
    out = validated_config(config, SCHEMA)
    assert out["filter"]["gate"] == PMBMSettings().gate
    assert out["evaluation"]["cutoff"] == EvaluationSettings().cutoff
    assert tuple(out["evaluation"]["q"]) == EvaluationSettings().qs


def test_a_bad_value_names_its_config_key():
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    config["filter"]["phd_cap"] = 0
    with pytest.raises(ValueError, match="config key filter.phd_cap"):
        validated_config(config, SCHEMA)
