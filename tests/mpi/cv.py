"""Rank script: dgbdt.cv on this rank's rows (unequal shards); rank 0 writes
the results.  The data and the cv calls are functions here, which
tests/test_cv.py also runs on one process with the keyed folds.

argv: K, out_dir
"""

import json
import pathlib
import sys

import numpy as np

import dgbdt

# beside this file (a rank script's path; tests/test_cv.py loads it by path too)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from shard_data import make_data, shard_bounds  # noqa: E402

NFOLD, SEED = 3, 7
BINARY = {
    "objective": "binary",
    "num_leaves": 7,
    "learning_rate": 0.3,
    "min_data_in_leaf": 10,
    "metric": ["binary_logloss", "auc"],
    "early_stopping_round": 3,
    "verbosity": -1,
}
RANKING = {
    "objective": "lambdarank",
    "num_leaves": 7,
    "learning_rate": 0.3,
    "min_data_in_leaf": 5,
    "eval_at": [3],
    "verbosity": -1,
}


def binary_data():
    X, y, _, _ = make_data(n=1500, n_valid=0)
    return X, y


def ranking_data():
    rng = np.random.default_rng(11)
    group = rng.integers(5, 16, size=60)
    X = rng.normal(size=(int(group.sum()), 4))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=len(X)) + 1.5), 0, 3)
    return X, y, group


def query_shard(group, k, rank):
    """(first row, end row, this rank's query sizes): whole queries, cut near
    the row shards of shard_bounds."""
    bounds = np.concatenate([[0], np.cumsum(group)])
    cuts = [np.searchsorted(bounds, lo) for lo, _ in shard_bounds(int(bounds[-1]), k)]
    cuts.append(len(group))
    q0, q1 = cuts[rank], cuts[rank + 1]
    return int(bounds[q0]), int(bounds[q1]), group[q0:q1]


def run_cv(params, train_set, n_rounds, **kwargs):
    """The cv of the test: its results (lists) and the CVBooster's best iteration."""
    out = dgbdt.cv(
        params,
        train_set,
        n_rounds,
        nfold=NFOLD,
        seed=SEED,
        return_cvbooster=True,
        **kwargs,
    )
    booster = out.pop("cvbooster")
    return {"results": out, "best_iteration": booster.best_iteration}


def main():
    from dgbdt.distributed.comm import world_comm

    k, out_dir = int(sys.argv[1]), sys.argv[2]
    comm = world_comm()
    assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
    X, y = binary_data()
    lo, hi = shard_bounds(len(y), k)[comm.rank]
    params = {**BINARY, "tree_learner": "data"}
    binary = run_cv(
        params,
        dgbdt.Dataset(X[lo:hi], y[lo:hi]),
        30,
        eval_train_metric=True,
        callbacks=[dgbdt.log_evaluation(1)],  # rank 0 prints
    )
    X, y, group = ranking_data()
    lo, hi, sizes = query_shard(group, k, comm.rank)
    ranked = dgbdt.Dataset(X[lo:hi], y[lo:hi], group=sizes)
    ranking = run_cv({**RANKING, "tree_learner": "data"}, ranked, 5)
    refused = None
    try:
        dgbdt.cv(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), 2, folds=[([0], [1])])
    except ValueError as exc:
        refused = str(exc)
    if comm.rank == 0:
        with open(f"{out_dir}/result.json", "w") as fh:
            json.dump({"binary": binary, "ranking": ranking, "refused": refused}, fh)


if __name__ == "__main__":
    main()
