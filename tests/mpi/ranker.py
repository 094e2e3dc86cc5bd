"""Rank script: DGBDTRanker with tree_learner="data" on K ranks, each passing
whole queries (unequal shards) of the training and the validation data and
their own group sizes; rank 0 writes its validation predictions, best
iteration and evals_result_.  Also the data and settings of the test
(tests/test_ranker.py), which fits the same on one process.

argv: K, out_dir (rank 0 writes ranker.json)
"""

import json
import pathlib
import sys

import numpy as np

#: the estimator's parameters (tree_learner="data" added on the ranks)
PARAMS = {"n_estimators": 20, "learning_rate": 0.2, "num_leaves": 7, "min_child_samples": 5}
#: fit's arguments besides the data and the callbacks
FIT = {"eval_at": [3, 5], "eval_metric": "map"}


def rank_data(seed=0, n_queries=60):
    """(X, y, query sizes): graded labels 0..4 from a noisy score."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 16, n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 6))
    X[::13, 4] = np.nan  # a feature with missing values
    s = X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + 0.3 * X[:, 2] * X[:, 3]
    y = np.clip(np.round(s + rng.normal(0, 0.8, n) + 1.5), 0, 4)
    return X, y, sizes


def query_shard(X, y, sizes, rank, k, share=0.35):
    """Rank ``rank``'s whole queries: the first ``share`` of the queries on
    rank 0 and the rest on the last rank when k == 2, even shares otherwise."""
    cuts = [0, round(share * len(sizes)), len(sizes)] if k == 2 else None
    if cuts is None:
        cuts = np.round(np.linspace(0, len(sizes), k + 1)).astype(int)
    rows = np.concatenate([[0], np.cumsum(sizes)])
    lo, hi = rows[cuts[rank]], rows[cuts[rank + 1]]
    return X[lo:hi], y[lo:hi], sizes[cuts[rank] : cuts[rank + 1]]


def main():
    import dgbdt
    from dgbdt.distributed.comm import world_comm

    k, out_dir = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    comm = world_comm()
    assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
    X, y, g = query_shard(*rank_data(0), comm.rank, k)
    Xv_all, yv_all, gv_all = rank_data(1, n_queries=40)
    Xv, yv, gv = query_shard(Xv_all, yv_all, gv_all, comm.rank, k, share=0.6)
    est = dgbdt.DGBDTRanker(**PARAMS, tree_learner="data").fit(
        X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv], **FIT,
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )  # fmt: skip
    if comm.rank == 0:
        out = {
            "predict": est.predict(Xv_all).tolist(),
            "best_iteration": est.best_iteration_,
            "evals": est.evals_result_,
        }
        (out_dir / "ranker.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main()
