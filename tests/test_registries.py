"""The objective and metric registries: what params, docs and model loading read."""

import json

import numpy as np
import pytest
from dgbdt.native import common

import dgbdt
from dgbdt.objective.metrics import METRIC_ALIASES, METRICS
from dgbdt.objective.objectives import (
    OBJECTIVES,
    Regression,
    model_objective,
    model_objective_names,
)
from dgbdt.params.lightgbm_keys import LIGHTGBM_ONLY_METRICS, LIGHTGBM_ONLY_OBJECTIVES
from dgbdt.params.table import PARAMS, params_table_text, resolve_params
from dgbdt.registry import Registry


def test_every_objective_states_a_registered_default_metric_that_fits_it():
    for name, spec in OBJECTIVES.entries.items():
        assert spec.name == name
        metric = METRICS[spec.default_metric]
        assert metric.multiclass == spec.multiclass, name


def test_kernel_codes_are_distinct():
    # the ranking objectives have kernels of their own (native/rank.py)
    codes = [spec.code for spec in OBJECTIVES.entries.values() if not spec.uses_queries]
    assert len(set(codes)) == len(codes)
    assert set(codes) <= {v for k, v in vars(common).items() if k.startswith("OBJ_")}


def test_registered_names_are_not_listed_as_lightgbm_only():
    assert not set(OBJECTIVES.aliases) & LIGHTGBM_ONLY_OBJECTIVES
    assert not set(METRIC_ALIASES) & LIGHTGBM_ONLY_METRICS


def test_params_choices_are_the_registries():
    assert PARAMS["objective"].choices is OBJECTIVES.aliases
    assert PARAMS["metric"].choices is METRIC_ALIASES


def test_a_repeated_alias_is_refused():
    class Entry:
        def __init__(self, name, aliases):
            self.name, self.aliases = name, aliases

    table = Registry()
    table.add(Entry("a", ("x",)))
    with pytest.raises(RuntimeError, match="alias 'x' is listed for both 'a' and 'b'"):
        table.add(Entry("b", ("x",)))
    assert list(table.entries) == ["a"] and table.aliases == {"a": "a", "x": "a"}


@pytest.fixture
def scaled_l2():
    """A new objective: one class (it reuses the L2 kernel branch)."""

    class ScaledL2(Regression):
        name = "scaled_l2"
        aliases = ("sl2",)

        @classmethod
        def output(cls, raw, params):
            return 2.0 * raw[:, 0]

    OBJECTIVES.add(ScaledL2)
    yield ScaledL2
    del OBJECTIVES.entries["scaled_l2"]
    for spelling in ("scaled_l2", "sl2"):
        del OBJECTIVES.aliases[spelling]


def test_adding_an_objective_is_one_class(scaled_l2):
    assert resolve_params({"objective": "SL2"})["objective"] == "scaled_l2"
    assert resolve_params({"objective": "sl2"})["metric"] == ["l2"]
    assert "'scaled_l2'" in PARAMS["objective"].allowed
    assert "scaled_l2 (aliases sl2)" in params_table_text(10_000)
    assert "scaled_l2" in model_objective_names()
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    params = {"verbosity": -1, "num_leaves": 4}
    plain = dgbdt.train({**params, "objective": "regression"}, dgbdt.Dataset(X, y), 3)
    scaled = dgbdt.train({**params, "objective": "sl2"}, dgbdt.Dataset(X, y), 3)
    assert np.array_equal(scaled.predict(X), 2.0 * plain.predict(X))
    reloaded = dgbdt.Booster(model_str=scaled.model_to_string())
    assert json.loads(scaled.model_to_string(format="json"))["objective"] == "scaled_l2"
    assert np.array_equal(reloaded.predict(X), scaled.predict(X))


def test_model_objectives_include_custom():
    assert model_objective_names() == sorted([*OBJECTIVES.entries, "custom"])
    raw = np.arange(6.0).reshape(3, 2)
    assert model_objective("custom").output(raw, {}) is raw
    assert np.array_equal(model_objective("custom").output(raw[:, :1], {}), raw[:, 0])
    assert model_objective("custom").num_class_error(5) is None
    assert model_objective("binary").num_class_error(2) == "must be 1"
    assert model_objective("multiclass").num_class_error(1) == "must be >= 2"


def test_random_stream_ids_are_one_registry_of_distinct_ids():
    from dgbdt import streams
    from dgbdt.boosting import sampling
    from dgbdt.data import binning
    from dgbdt.treelearner import quantization

    ids = {
        k: v for k, v in vars(streams).items() if k.startswith("STREAM_") and k != "STREAM_STRIDE"
    }
    assert len(set(ids.values())) == len(ids)
    assert max(ids.values()) < streams.STREAM_STRIDE
    # the modules that draw use the registry's ids, not ids of their own
    assert binning.STREAM_BIN_SAMPLE is streams.STREAM_BIN_SAMPLE
    assert quantization.STREAM_QUANTIZE is streams.STREAM_QUANTIZE
    assert sampling.STREAM_BAGGING is streams.STREAM_BAGGING
    assert streams.stream_key(streams.STREAM_BAGGING, 7) == 2 * 1_000_003 + 7
