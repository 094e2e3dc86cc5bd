"""Ranking data and cases the distributed ranking tests train (shared by
tests/mpi/train_ranking.py and tests/test_distributed_ranking.py): queries of
1..29 rows, graded labels 0..4, shards cut at query boundaries."""

import numpy as np
from shard_data import make_data, shard_bounds

#: name -> params
CASES = {
    "lambdarank": {"objective": "lambdarank", "weighted": True},
    "xendcg": {"objective": "rank_xendcg", "weighted": True},
    "positions": {"objective": "lambdarank", "positions": True,
                  "lambdarank_position_bias_regularization": 0.1},
    "by_query": {"objective": "lambdarank", "bagging_by_query": True,
                 "bagging_fraction": 0.6, "bagging_freq": 1},
    "voting": {"objective": "lambdarank", "tree_learner": "voting", "top_k": 28},
    "quantized": {"objective": "lambdarank", "use_quantized_grad": True},
    "feature": {"objective": "lambdarank", "tree_learner": "feature", "weighted": True},
}  # fmt: skip


def _sizes(n, seed):
    sizes = np.random.default_rng(seed).integers(1, 30, n)
    sizes = sizes[np.cumsum(sizes) <= n]
    return np.append(sizes, n - sizes.sum()) if sizes.sum() < n else sizes


def rank_data(n=1500, n_valid=500):
    """(X, y, weight, sizes, positions, X_valid, y_valid, valid_sizes)."""
    X, y, Xv, yv = make_data(n, n_valid)

    def grades(X, y):
        z = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + y
        return np.digitize(z, np.quantile(z, [0.3, 0.6, 0.8, 0.95])).astype(np.float64)

    sizes, vsizes = _sizes(n, 1), _sizes(n_valid, 2)
    w = np.random.default_rng(3).uniform(0.5, 2.0, n).astype(np.float32).astype(np.float64)
    pos = np.concatenate([np.arange(s) for s in sizes]) % 6
    return X, grades(X, y), w, sizes, pos, Xv, grades(Xv, yv), vsizes


def query_shards(sizes, k):
    """Per rank (first query, end query): the row shards of shard_bounds moved to
    the next query boundary (unequal; one empty for k >= 3)."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cuts = [int(np.searchsorted(starts, lo)) for lo, _ in shard_bounds(int(starts[-1]), k)]
    cuts.append(len(sizes))
    return [(cuts[r], cuts[r + 1]) for r in range(k)]


def queries_seen(preds, data):
    """A custom feval: the number of queries (and rows) it is given, which under
    mpiexec must be every rank's."""
    return ("queries_seen", len(data.get_group()) + len(preds) / 1e6, True)


def case_params(name):
    params = {k: v for k, v in CASES[name].items() if k not in ("weighted", "positions")}
    return {
        "num_leaves": 7, "learning_rate": 0.2, "min_data_in_leaf": 10,
        "metric": ["ndcg", "map"], "eval_at": [1, 3], "verbosity": -1,
        "num_threads": 1, **params,
    }  # fmt: skip


def case_datasets(name, rank=0, k=1):
    """(train, valid) Datasets of this rank's whole queries (all with k = 1)."""
    X, y, w, sizes, pos, Xv, yv, vsizes = rank_data()
    spec = CASES[name]
    (a, b), (va, vb) = query_shards(sizes, k)[rank], query_shards(vsizes, k)[rank]
    starts, vstarts = np.cumsum(np.r_[0, sizes]), np.cumsum(np.r_[0, vsizes])
    rows, vrows = slice(starts[a], starts[b]), slice(vstarts[va], vstarts[vb])
    train = __import__("dgbdt").Dataset(
        X[rows], y[rows], weight=w[rows] if spec.get("weighted") else None,
        group=sizes[a:b], position=pos[rows] if spec.get("positions") else None,
    )  # fmt: skip
    valid = train.create_valid(Xv[vrows], label=yv[vrows], group=vsizes[va:vb])
    return train, valid
