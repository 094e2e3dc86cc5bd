"""dgbdt.dask when things go wrong, on a 4-worker LocalCluster: a worker killed,
one paused (SIGSTOP), one raising inside a custom objective; each ends with an
error naming the worker within time_out + 10 s, and the next fit on the same
cluster succeeds.  With snapshots, a worker killed mid-training costs a
restart and the model is the uninterrupted one.  Two fits at once both finish.
"""

import os
import re
import signal
import sys
import threading
import time

import numpy as np
import pytest
from dask_cluster import local_client

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
cloudpickle = pytest.importorskip("cloudpickle")
psutil = pytest.importorskip("psutil")

import dgbdt  # noqa: E402
import dgbdt.dask  # noqa: E402
from dgbdt.dask import driver  # noqa: E402
from dgbdt.distributed.comm import launched_rank  # noqa: E402

# The callbacks below run in the ranks' processes, which cannot import this file.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N, CHUNK = 1600, 200
TIME_OUT = 0.1  # minutes: a collective waits 6 s
PARAMS = {"objective": "binary", "verbosity": -1, "min_data_in_leaf": 5, "time_out": TIME_OUT}


@pytest.fixture(scope="module")
def client():
    with local_client(4) as c:
        yield c


@pytest.fixture(autouse=True)
def quick_pings(monkeypatch):
    monkeypatch.setattr(driver, "PING_SECONDS", 2.0)
    monkeypatch.setattr(driver, "REPORT_SECONDS", 2.0)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 5))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=N) > 0).astype(float)
    return X, y


def _dask(X, y):
    return da.from_array(X, chunks=(CHUNK, X.shape[1])), da.from_array(y, chunks=CHUNK)


def _trees(booster):
    text = booster.model_to_string()
    return text[text.index("Tree=0") : text.index("end of trees")]


def _worker_pid():
    return int(os.environ["DGBDT_DASK_WORKER_PID"])


class _Fault:
    """A callback: rank ``rank`` does ``what`` at ``iteration``, once (a marker file
    keeps a restarted training from doing it again)."""

    def __init__(self, what, iteration, marker, rank=1):
        self.what, self.iteration, self.marker, self.rank = what, iteration, str(marker), rank
        self.order, self.before_iteration = 5, False

    def __call__(self, env):
        if env.iteration != self.iteration or launched_rank() != self.rank:
            return
        if os.path.exists(self.marker):
            return
        with open(self.marker, "w") as out:
            out.write(str(_worker_pid()))
        if self.what == "kill":
            os.kill(_worker_pid(), signal.SIGKILL)
        elif self.what == "stop":  # the machine pauses: the worker and what it started
            worker = psutil.Process(_worker_pid())
            for proc in [worker, *worker.children(recursive=True)]:
                if proc.pid != os.getpid():
                    proc.suspend()
            os.kill(os.getpid(), signal.SIGSTOP)


def _fails_naming_the_worker(client, params, callbacks=(), fobj=None):
    X, y = _data()
    started = time.monotonic()
    with pytest.raises(dgbdt.dask.TrainingError) as info:
        dgbdt.dask.train(
            client, {**params, **({"objective": fobj} if fobj else {})}, *_dask(X, y),
            num_boost_round=20, callbacks=list(callbacks),
        )  # fmt: skip
    elapsed = time.monotonic() - started
    print(f"\nthe error arrived after {elapsed:.1f} s:\n{info.value}")
    assert elapsed < TIME_OUT * 60 + 10 + 15  # + the fit's own start on a busy machine
    return str(info.value), elapsed


def _a_fit_succeeds(client):
    X, y = _data(seed=1)
    booster = dgbdt.dask.train(client, PARAMS, *_dask(X, y), num_boost_round=5)
    single = dgbdt.train({**PARAMS, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 5)
    assert _trees(booster) == _trees(single)


def test_two_fits_at_once_both_finish(client):
    X, y = _data(seed=2)
    single = dgbdt.train({**PARAMS, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 5)
    results = {}

    def fit(name):
        results[name] = dgbdt.dask.train(client, PARAMS, *_dask(X, y), num_boost_round=5)

    threads = [threading.Thread(target=fit, args=(name,)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert sorted(results) == ["a", "b"]
    assert _trees(results["a"]) == _trees(results["b"]) == _trees(single)


def _objective_failing_on_rank_1(preds, dataset):
    if launched_rank() == 1:
        raise RuntimeError("boom in the custom objective")
    p = 1.0 / (1.0 + np.exp(-preds))
    return p - dataset.get_label(), p * (1.0 - p)


def test_a_rank_raising_in_a_custom_objective_ends_the_fit_by_name(client):
    message, _ = _fails_naming_the_worker(client, PARAMS, fobj=_objective_failing_on_rank_1)
    assert re.search(
        r"rank 1 of \d on worker tcp://127.0.0.1:\d+: .*\n(.*\n)*RuntimeError: boom in the custom objective",
        message,
    )
    _a_fit_succeeds(client)


def test_a_killed_worker_ends_the_fit_by_name(client, tmp_path):
    marker = tmp_path / "killed"
    message, _ = _fails_naming_the_worker(client, PARAMS, [_Fault("kill", 5, marker)])
    assert marker.exists()
    assert re.search(
        r"rank 1 of \d on worker tcp://127.0.0.1:\d+: the worker left the cluster", message
    )
    assert "snapshot_freq" in message  # the way to survive it
    _a_fit_succeeds(client)


def test_a_paused_worker_ends_the_fit_by_name_and_is_left_out_of_the_next(client, tmp_path):
    marker = tmp_path / "stopped"
    try:
        message, elapsed = _fails_naming_the_worker(client, PARAMS, [_Fault("stop", 3, marker)])
        assert elapsed >= TIME_OUT * 60  # the others waited their time_out
        # (a worker killed by the test before may still be restarting: 3 or 4 ranks)
        assert re.search(
            r"rank 1 of \d on worker tcp://127.0.0.1:\d+: did not answer \(paused", message
        )
        assert "did not complete within 6 s" in message  # the survivors' collective
        _a_fit_succeeds(client)  # on the three others
    finally:
        if marker.exists():
            worker = psutil.Process(int(marker.read_text()))
            for proc in [worker, *worker.children(recursive=True)]:
                proc.resume()


def test_a_worker_killed_mid_training_costs_a_restart_from_its_snapshot(client, tmp_path):
    X, y = _data(seed=4)
    params = {**PARAMS, "snapshot_freq": 10, "bagging_fraction": 0.8, "bagging_freq": 1}
    marker = tmp_path / "killed"
    started = time.monotonic()
    resumed = dgbdt.dask.train(
        client, params, *_dask(X, y), num_boost_round=60, callbacks=[_Fault("kill", 30, marker)]
    )
    elapsed = time.monotonic() - started
    assert marker.exists()
    # the uninterrupted fit: one process's (the Dask fit's model, tests/test_dask.py)
    whole = dgbdt.train(
        {**params, "tree_learner": "serial", "snapshot_freq": -1}, dgbdt.Dataset(X, y), 60
    )
    print(
        f"\nkilled at round 31 of 60, finished after {elapsed:.1f} s: {resumed.num_trees()} trees; "
        f"trees equal to the uninterrupted fit's: {_trees(resumed) == _trees(whole)}; "
        f"max |prediction difference| {np.abs(resumed.predict(X) - whole.predict(X)).max():.3g}"
    )
    assert resumed.num_trees() == whole.num_trees() == 60
    assert _trees(resumed) == _trees(whole)
