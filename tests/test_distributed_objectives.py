"""Every objective data-parallel on K = 2, 3 ranks equals one process (the
same splits; metrics within 1e-9 relative), and quantized training is byte
for byte the same model on K = 1, 2, 3, 4 (integer histograms are exact in
any order).  Global statistics do the work: starting scores, the class
counts of is_unbalance, the weighted quantiles of quantile / MAPE / L1 leaf
renewal are over every rank's rows."""

import json
import sys
import warnings

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi

import dgbdt

sys.path.insert(0, str(TESTS / "mpi"))
from objective_cases import CASES, case_data, case_params  # noqa: E402

N_ROUNDS = 4


def _serial(name, quantized):
    X, y, w, Xv, yv = case_data(name)
    train = dgbdt.Dataset(X, y, weight=w)
    evals = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster = dgbdt.train(
            case_params(name, quantized),
            train,
            N_ROUNDS,
            valid_sets=[dgbdt.Dataset(Xv, yv, reference=train)],
            valid_names=["valid"],
            callbacks=[dgbdt.record_evaluation(evals)],
        )
    return booster, evals


def _canonical(text):
    """The model document without its params (tree_learner differs)."""
    doc = json.loads(text)
    doc.pop("params")
    return json.dumps(doc, sort_keys=True)


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    out = {}
    for k in (2, 3, 4):
        path = tmp_path_factory.mktemp(f"k{k}")
        result = run_mpi(k, "train_objectives.py", path, N_ROUNDS, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        out[k] = json.loads((path / "objectives.json").read_text())
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_data_parallel_equals_one_process(distributed, name):
    serial, serial_evals = _serial(name, quantized=False)
    _, _, _, Xv, _ = case_data(name)
    for k in (2, 3):
        got = distributed[k][f"{name}-0"]
        model = dgbdt.Booster(model_str=got["model"])
        assert model.num_trees() == serial.num_trees()
        for i, (a, b) in enumerate(zip(model.trees, serial.trees, strict=True)):
            np.testing.assert_array_equal(
                a.split_feature, b.split_feature, err_msg=f"K={k} tree {i}"
            )
            np.testing.assert_array_equal(a.threshold, b.threshold, err_msg=f"K={k} tree {i}")
        np.testing.assert_allclose(model.init_score, serial.init_score, rtol=1e-12)
        np.testing.assert_allclose(
            model.predict(Xv, raw_score=True), serial.predict(Xv, raw_score=True), atol=1e-9
        )
        for metric, values in serial_evals["valid"].items():
            np.testing.assert_allclose(got["evals"]["valid"][metric], values, rtol=1e-9)


@pytest.mark.parametrize("name", list(CASES))
def test_quantized_models_are_byte_identical_on_any_number_of_ranks(distributed, name):
    serial, _ = _serial(name, quantized=True)
    want = _canonical(serial.model_to_string(format="json"))
    for k in (2, 3, 4):
        assert _canonical(distributed[k][f"{name}-1"]["model"]) == want, f"K={k}"
