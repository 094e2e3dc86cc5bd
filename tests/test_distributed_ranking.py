"""Ranking data-parallel (and voting-parallel) on K = 2, 3 ranks, each with whole
queries of unequal shards, equals one process: the same trees, predictions to
1e-9 and every round's NDCG / MAP over the sharded validation set to 1e-12
(they are sums of per-query values, added over the ranks).  Position bias
factors and bagging_by_query draws are global, so those runs agree too; the
quantized model is byte-identical.  Feature-parallel ranks hold every row and
grow the same trees."""

import json
import sys
import warnings

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi

import dgbdt

sys.path.insert(0, str(TESTS / "mpi"))
from rank_cases import CASES, case_datasets, case_params, queries_seen, rank_data  # noqa: E402

N_ROUNDS = 4


def _serial(name):
    train, valid = case_datasets(name)
    params = {k: v for k, v in case_params(name).items() if k not in ("tree_learner", "top_k")}
    evals = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster = dgbdt.train(
            params, train, N_ROUNDS, valid_sets=[valid], valid_names=["valid"], feval=queries_seen,
            callbacks=[dgbdt.record_evaluation(evals)],
        )  # fmt: skip
    return booster, evals


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    out = {}
    for k in (2, 3):
        path = tmp_path_factory.mktemp(f"k{k}")
        result = run_mpi(k, "train_ranking.py", path, N_ROUNDS, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        out[k] = json.loads((path / "ranking.json").read_text())
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_ranking_on_k_ranks_equals_one_process(distributed, name):
    serial, serial_evals = _serial(name)
    Xv = rank_data()[5]
    assert set(serial_evals["valid"]) == {"ndcg@1", "ndcg@3", "map@1", "map@3", "queries_seen"}
    for k in (2, 3):
        got = distributed[k][name]
        model = dgbdt.Booster(model_str=got["model"])
        assert model.num_trees() == serial.num_trees() == N_ROUNDS
        for i, (a, b) in enumerate(zip(model.trees, serial.trees, strict=True)):
            np.testing.assert_array_equal(a.split_feature, b.split_feature, err_msg=f"K={k} {i}")
            np.testing.assert_array_equal(a.threshold, b.threshold, err_msg=f"K={k} tree {i}")
        np.testing.assert_allclose(
            model.predict(Xv, raw_score=True), serial.predict(Xv, raw_score=True), atol=1e-9
        )
        for metric, values in serial_evals["valid"].items():
            np.testing.assert_allclose(got["evals"]["valid"][metric], values, rtol=1e-12)
        if name == "quantized":
            assert (
                json.loads(got["model"])["trees"]
                == json.loads(serial.model_to_string(format="json"))["trees"]
            )


def test_a_query_spanning_two_ranks_is_refused_on_every_rank():
    result = run_mpi(2, "rank_split_query.py", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count(" ok") == 2
