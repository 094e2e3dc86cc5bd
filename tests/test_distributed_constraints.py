"""Constraints on every distributed learner: predictions monotone along each
constrained feature (grid sweeps over 1,000 rows) for data, voting and
feature-parallel on K = 2, 3; data- and feature-parallel grow the trees one
process grows (the same splits); every branch within one interaction set."""

import json
import sys

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi

import dgbdt

sys.path.insert(0, str(TESTS / "mpi"))
from constraint_cases import CASES, SWEEP_MONO, case_params, sweep_data  # noqa: E402
from test_constraints import monotone_violation  # noqa: E402

N_ROUNDS = 8


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    out = {}
    for k in (2, 3):
        path = tmp_path_factory.mktemp(f"k{k}")
        result = run_mpi(k, "train_constraints.py", path, N_ROUNDS, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        out[k] = json.loads((path / "constraints.json").read_text())
    return out


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("learner", ["data", "voting", "feature"])
def test_distributed_predictions_are_monotone(distributed, name, learner):
    X, _ = sweep_data()
    for k in (2, 3):
        model = dgbdt.Booster(model_str=distributed[k][f"{name}-{learner}"])
        assert model.num_trees() == N_ROUNDS
        assert monotone_violation(model, X, SWEEP_MONO) == 0.0, f"K={k}"


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("learner", ["data", "feature"])
def test_distributed_trees_equal_one_process(distributed, name, learner):
    X, y = sweep_data()
    serial = dgbdt.train(case_params(name, "serial"), dgbdt.Dataset(X, y), N_ROUNDS)
    for k in (2, 3):
        model = dgbdt.Booster(model_str=distributed[k][f"{name}-{learner}"])
        for i, (a, b) in enumerate(zip(model.trees, serial.trees, strict=True)):
            np.testing.assert_array_equal(a.split_feature, b.split_feature, err_msg=f"K={k} {i}")
            np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin, err_msg=f"K={k} {i}")
        np.testing.assert_allclose(model.predict(X), serial.predict(X), atol=1e-9)
