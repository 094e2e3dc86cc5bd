"""dgbdt.dask on a LocalCluster (3 worker processes, one thread each, on
127.0.0.1): models equal to one process's and to mpiexec's on the same shards,
the estimators, placement, and the errors that name what is wrong.

Faults (killed, stopped, failing workers; restarts from snapshots) are in
tests/test_dask_faults.py.
"""

import json
import pickle

import numpy as np
import pytest
from dask_cluster import local_client
from mpi_launch import run_mpi

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import dgbdt  # noqa: E402
import dgbdt.dask  # noqa: E402
from dgbdt.dask.collections import bundles  # noqa: E402
from dgbdt.dask.placement import assign_partitions, split_runs  # noqa: E402

N, CHUNK = 1800, 300  # six partitions


@pytest.fixture(scope="module")
def client():
    with local_client(3) as c:
        yield c


def _data(objective, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 6))
    z = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=N)
    if objective == "binary":
        return X, (z > 0).astype(float)
    if objective == "multiclass":
        return X, np.digitize(z, [-1.0, 1.0]).astype(float)
    if objective == "lambdarank":
        return X, np.digitize(z, [-1.0, 0.0, 1.0]).astype(float)
    return X, z


def _trees(booster):
    """The trees of a model's LightGBM text (params and names aside)."""
    text = booster.model_to_string()
    return text[text.index("Tree=0") : text.index("end of trees")]


def _shards_on_workers(client, X, y):
    """X and y as dask arrays whose partitions 2r and 2r+1 live on the r-th worker
    (by address): the shards mpiexec's rank r gets."""
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    xs, ys = [], []
    for i in range(N // CHUNK):
        rows = slice(i * CHUNK, (i + 1) * CHUNK)
        where = [workers[i * len(workers) // (N // CHUNK)]]
        fx = client.scatter(X[rows], workers=where)
        fy = client.scatter(y[rows], workers=where)
        xs.append(da.from_delayed(fx, shape=(CHUNK, X.shape[1]), dtype=X.dtype))
        ys.append(da.from_delayed(fy, shape=(CHUNK,), dtype=y.dtype))
    return da.concatenate(xs), da.concatenate(ys)


CASES = {
    "binary-data": ("binary", {}),
    "regression-data": ("regression", {}),
    "multiclass-data": ("multiclass", {"num_class": 3}),
    "lambdarank-data": ("lambdarank", {}),
    "binary-feature": ("binary", {"tree_learner": "feature"}),
    "regression-quantized": ("regression", {"use_quantized_grad": True}),
}


@pytest.mark.parametrize("case", CASES)
def test_train_on_a_dask_array_gives_the_one_process_model(client, case):
    objective, extra = CASES[case]
    X, y = _data(objective)
    params = {"objective": objective, "verbosity": -1, "min_data_in_leaf": 5, **extra}
    group = np.full(N // 20, 20) if objective == "lambdarank" else None
    dgroup = None if group is None else da.from_array(group, chunks=CHUNK // 20)
    dX, dy = da.from_array(X, chunks=(CHUNK, 6)), da.from_array(y, chunks=CHUNK)
    booster = dgbdt.dask.train(client, params, dX, dy, group=dgroup, num_boost_round=8)
    local = {**params, "tree_learner": "serial"}
    single = dgbdt.train(local, dgbdt.Dataset(X, y, group=group), 8)
    assert booster.num_trees() == single.num_trees() > 0
    assert _trees(booster) == _trees(single)


def test_train_on_a_dask_dataframe_with_weights_and_validation(client):
    X, y = _data("binary")
    w = np.linspace(0.5, 2.0, N)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    ddf = dd.from_pandas(frame, npartitions=4)
    label = dd.from_pandas(pd.Series(y), npartitions=4)
    weight = dd.from_pandas(pd.Series(w), npartitions=4)
    valid = (ddf.partitions[:2], label.partitions[:2])
    params = {"objective": "binary", "verbosity": -1, "metric": ["auc", "binary_logloss"]}
    record = {}
    booster = dgbdt.dask.train(
        client,
        params,
        ddf,
        label,
        weight=weight,
        valid_sets=[valid],
        valid_names=["first_half"],
        num_boost_round=6,
        callbacks=[dgbdt.record_evaluation(record)],
    )
    half = frame.index < 2 * (N // 4)
    vset = dgbdt.Dataset(frame[half], y[half])
    single_record = {}
    dset = dgbdt.Dataset(frame, y, weight=w)
    single = dgbdt.train(
        params,
        dset,
        6,
        valid_sets=[vset],
        valid_names=["first_half"],
        callbacks=[dgbdt.record_evaluation(single_record)],
    )
    assert _trees(booster) == _trees(single)
    assert booster.feature_name() == list(frame.columns)
    # the callbacks ran in the rank processes: the record stays there
    assert record == {}
    assert booster.best_score["first_half"]["auc"] == pytest.approx(
        single_record["first_half"]["auc"][-1], abs=1e-12
    )


def test_voting_equals_voting_under_mpiexec_on_the_same_shards(client, tmp_path):
    X, y = _data("binary", seed=3)
    params = {"objective": "binary", "verbosity": -1, "tree_learner": "voting", "top_k": 2}
    dX, dy = _shards_on_workers(client, X, y)
    booster = dgbdt.dask.train(client, params, dX, dy, num_boost_round=6)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    runs = [[r * 2 * CHUNK, (r + 1) * 2 * CHUNK] for r in range(3)]
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    (tmp_path / "params.json").write_text(json.dumps(params))
    (tmp_path / "rounds.txt").write_text("6")
    proc = run_mpi(3, "dask_shards.py", tmp_path)
    assert proc.returncode == 0, proc.stderr
    under_mpiexec = dgbdt.Booster(model_file=str(tmp_path / "model.txt"))
    assert _trees(booster) == _trees(under_mpiexec)
    single = dgbdt.train({**params, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 6)
    assert _trees(booster) != _trees(single)  # the election depends on the shards


def test_the_classifier_fits_and_predicts_dask_collections(client):
    X, y = _data("multiclass")
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    labels = np.array(["low", "mid", "high"])[y.astype(int)]
    ddf = dd.from_pandas(frame, npartitions=3)
    dlabels = dd.from_pandas(pd.Series(labels), npartitions=3)
    model = dgbdt.dask.DaskDGBDTClassifier(n_estimators=6, min_child_samples=5, client=client)
    model.fit(ddf, dlabels)
    local = dgbdt.DGBDTClassifier(n_estimators=6, min_child_samples=5).fit(frame, labels)
    proba = model.predict_proba(ddf)
    assert isinstance(proba, da.Array)
    np.testing.assert_array_equal(proba.compute(), local.predict_proba(frame))
    dX = da.from_array(X, chunks=(CHUNK, 6))
    assert list(model.predict(dX).compute()) == list(local.predict(X))
    contrib = model.predict(dX, pred_contrib=True).compute()
    np.testing.assert_allclose(contrib, local.predict(X, pred_contrib=True), atol=1e-12)
    assert list(model.classes_) == list(local.classes_)
    sparse = pytest.importorskip("scipy.sparse")
    sparse_dX = dX.map_blocks(sparse.csr_matrix)
    with pytest.raises(NotImplementedError, match="pred_contrib on sparse input with several"):
        model.predict(sparse_dX, pred_contrib=True)
    assert type(model.to_local()) is dgbdt.DGBDTClassifier
    restored = pickle.loads(pickle.dumps(model))
    assert restored.client is None  # a client is not pickled
    np.testing.assert_array_equal(
        restored.to_local().predict_proba(X[:5]), local.predict_proba(X[:5])
    )
    with pytest.raises(TypeError, match="X must be a dask Array or DataFrame, got ndarray"):
        restored.predict(X)
    assert "client" not in model.to_local().get_params()


def test_the_regressor_and_ranker_fit_with_eval_sets(client):
    X, y = _data("regression")
    dX, dy = da.from_array(X, chunks=(CHUNK, 6)), da.from_array(y, chunks=CHUNK)
    reg = dgbdt.dask.DaskDGBDTRegressor(n_estimators=5, min_child_samples=5)
    reg.fit(dX, dy, eval_set=[(dX, dy)], eval_names=["train"])
    local = dgbdt.DGBDTRegressor(n_estimators=5, min_child_samples=5)
    local.fit(X, y, eval_set=[(X, y)], eval_names=["train"])
    np.testing.assert_array_equal(reg.predict(dX).compute(), local.predict(X))
    assert reg.evals_result_["train"]["l2"] == pytest.approx(local.evals_result_["train"]["l2"])
    Xr, yr = _data("lambdarank")
    group = np.full(N // 20, 20)
    dXr, dyr = da.from_array(Xr, chunks=(CHUNK, 6)), da.from_array(yr, chunks=CHUNK)
    dgroup = da.from_array(group, chunks=CHUNK // 20)
    ranker = dgbdt.dask.DaskDGBDTRanker(n_estimators=5, min_child_samples=5)
    ranker.fit(dXr, dyr, group=dgroup, eval_set=[(dXr, dyr)], eval_group=[dgroup], eval_at=[3])
    local_ranker = dgbdt.DGBDTRanker(n_estimators=5, min_child_samples=5)
    local_ranker.fit(Xr, yr, group=group, eval_set=[(Xr, yr)], eval_group=[group], eval_at=[3])
    np.testing.assert_array_equal(ranker.predict(dXr).compute(), local_ranker.predict(Xr))
    # the training collections given as an eval set are evaluated as the training
    # data, named "training" (as LightGBM)
    assert ranker.evals_result_["training"]["ndcg@3"] == pytest.approx(
        local_ranker.evals_result_["training"]["ndcg@3"]
    )


def test_misaligned_partitions_and_split_queries_are_refused_by_name(client):
    X, y = _data("lambdarank")
    dX = da.from_array(X, chunks=(CHUNK, 6))
    with pytest.raises(ValueError, match="data has 6 partitions but label has 3"):
        dgbdt.dask.train(client, {"verbosity": -1}, dX, da.from_array(y, chunks=2 * CHUNK))
    odd = np.full(N // 40, 40)  # queries of 40 rows: one crosses the boundary at row 300
    with pytest.raises(ValueError, match="partition 0: its query sizes sum to .* a query crosses"):
        dgbdt.dask.train(
            client,
            {"objective": "lambdarank", "verbosity": -1},
            dX,
            da.from_array(y, chunks=CHUNK),
            group=da.from_array(odd, chunks=[8, 7, 8, 7, 8, 7]),
        )
    with pytest.raises(TypeError, match="data must be a dask Array, DataFrame or Series"):
        dgbdt.dask.train(client, {"verbosity": -1}, X, y)


@pytest.mark.parametrize(
    "holders, allowed, expected",
    [
        # neighbouring partitions on one worker: nothing moves
        ([["a"], ["a"], ["b"], ["b"]], None, [("a", [0, 1]), ("b", [2, 3])]),
        # interleaved: runs start where each worker's first partition is
        ([["b"], ["a"], ["b"], ["a"]], None, [("b", [0]), ("a", [1, 2, 3])]),
        # a replica: the first holder by address, whatever order Dask reports
        ([["b", "a"], ["b"]], None, [("a", [0]), ("b", [1])]),
        # a worker left out (paused): its partition goes to the run it falls in
        ([["a"], ["c"], ["b"]], ["a", "b"], [("a", [0, 1]), ("b", [2])]),
        # a worker holding nothing takes no part
        ([["a"], ["a"]], ["a", "b"], [("a", [0, 1])]),
    ],
)
def test_partitions_go_to_contiguous_runs_where_they_live(holders, allowed, expected):
    assert assign_partitions(holders, allowed) == expected


def test_placement_errors_and_validation_runs():
    with pytest.raises(ValueError, match="no worker that may train holds any partition"):
        assign_partitions([["c"]], ["a"])
    assert split_runs(5, 2) == [[0, 1], [2, 3, 4]]
    assert split_runs(1, 3) == [[], [0], []]


def test_a_salt_gives_partitions_keys_of_their_own():
    # a training's partitions never reuse an earlier training's results (which
    # Dask would hand back from a worker that may no longer answer)
    X = da.from_array(np.arange(20.0).reshape(10, 2), chunks=(5, 2))
    y = da.from_array(np.arange(10.0), chunks=5)
    keys = {salt: [b.key for b in bundles([X, y, None, None, None], salt=salt)] for salt in "ab"}
    assert keys["a"] == [b.key for b in bundles([X, y, None, None, None], salt="a")]
    assert not set(keys["a"]) & set(keys["b"])


def test_importing_dgbdt_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, dgbdt; print('distributed' in sys.modules, 'dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_one_partition_trains_on_one_rank_and_errors_of_every_rank_come_as_they_are(client):
    X, y = _data("binary")
    dX, dy = da.from_array(X, chunks=(N, 6)), da.from_array(y, chunks=N)  # one rank
    params = {"objective": "binary", "verbosity": -1}
    booster = dgbdt.dask.train(client, params, dX, dy, num_boost_round=3)
    single = dgbdt.train(params, dgbdt.Dataset(X, y), 3)
    assert _trees(booster) == _trees(single)
    # every rank raises the same error: the user's own, not a TrainingError
    dX, dy = da.from_array(X, chunks=(CHUNK, 6)), da.from_array(y, chunks=CHUNK)
    with pytest.raises(ValueError, match="min_data_in_leaf"):
        dgbdt.dask.train(client, {**params, "min_data_in_leaf": -3}, dX, dy, num_boost_round=2)
    with pytest.raises(ValueError, match="max_restarts must be an integer >= 0, got -1"):
        dgbdt.dask.train(client, params, dX, dy, max_restarts=-1)


def test_an_eval_set_with_fewer_partitions_than_ranks_an_explicit_client_and_empty_chunks(
    client,
):
    X, y = _data("binary")
    other = distributed.Client(client.scheduler.address, set_as_default=False)
    try:
        dX, dy = da.from_array(X, chunks=(CHUNK, 6)), da.from_array(y, chunks=CHUNK)
        eX, ey = da.from_array(X[:CHUNK], chunks=(CHUNK, 6)), da.from_array(y[:CHUNK], chunks=CHUNK)
        model = dgbdt.dask.DaskDGBDTClassifier(n_estimators=4, min_child_samples=5, client=other)
        model.fit(dX, dy, eval_X=(eX,), eval_y=(ey,))
        local = dgbdt.DGBDTClassifier(n_estimators=4, min_child_samples=5)
        local.fit(X, y, eval_X=(X[:CHUNK],), eval_y=(y[:CHUNK],))
        assert model.evals_result_["valid_0"]["binary_logloss"] == pytest.approx(
            local.evals_result_["valid_0"]["binary_logloss"], abs=1e-12
        )
        gappy = da.from_array(X[:600], chunks=((300, 0, 300), (6,)))  # an empty partition
        np.testing.assert_array_equal(
            model.predict_proba(gappy).compute(), local.predict_proba(X[:600])
        )
    finally:
        other.close()
