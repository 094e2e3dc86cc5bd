"""Rank script: distributed corner cases; rank 0 writes what the test compares.

argv: K, out_dir, case
  feval       data-parallel, a custom feval with early stopping on sharded
              validation rows (one rank empty): values over all rows, one stop
  init_score  data-parallel, init scores on every rank but the empty one
  blocks_tie  feature-parallel column blocks where rank 0 holds columns 25, 8, 0
              and column 25 = 2 x column 8 (an exact tie in gain)
  valid_rows  feature-parallel with validation rows that differ by rank
"""

import json
import sys

import numpy as np
from shard_data import make_data, shard_bounds

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out_dir, case = int(sys.argv[1]), sys.argv[2], sys.argv[3]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
X, y, Xv, yv = make_data()
lo, hi = shard_bounds(len(y), k)[comm.rank]
vlo, vhi = shard_bounds(len(yv), k)[comm.rank]
out = {}


def mean_prediction(preds, data):
    return "mean_pred", float(np.mean(preds) + 0.0 * len(data.get_label())), True


if case == "feval":
    train = dgbdt.Dataset(X[lo:hi], y[lo:hi])
    valid = dgbdt.Dataset(Xv[vlo:vhi], yv[vlo:vhi], reference=train)
    evals = {}
    booster = dgbdt.train(
        {
            "objective": "binary",
            "num_leaves": 7,
            "verbosity": -1,
            "tree_learner": "data",
            "metric": "None",
            "early_stopping_round": 2,
        },
        train,
        30,
        valid_sets=[valid],
        feval=mean_prediction,
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    out = {"evals": evals, "best_iteration": booster.best_iteration}
elif case == "init_score":
    init = None if hi == lo else np.full(hi - lo, 0.25)
    booster = dgbdt.train(
        {"objective": "regression", "num_leaves": 7, "verbosity": -1, "tree_learner": "data"},
        dgbdt.Dataset(X[lo:hi], y[lo:hi], init_score=init),
        3,
    )
    out = {"raw": booster.predict(Xv, raw_score=True).tolist()}
elif case == "blocks_tie":
    X = X.copy()
    X[:, 25] = 2.0 * X[:, 8]
    columns = [[25, 8, 0], [c for c in range(X.shape[1]) if c not in (25, 8, 0)]][comm.rank]
    booster = dgbdt.train(
        {"objective": "binary", "num_leaves": 7, "verbosity": -1, "tree_learner": "feature"},
        dgbdt.Dataset(X[:, columns], y, feature_indices=columns),
        2,
    )
    out = {"model": booster.dump_model(format="json")["trees"]}
elif case == "valid_rows":
    train = dgbdt.Dataset(X, y)
    valid = dgbdt.Dataset(Xv[vlo:vhi], yv[vlo:vhi], reference=train)
    dgbdt.train(
        {"objective": "binary", "verbosity": -1, "tree_learner": "feature"},
        train,
        2,
        valid_sets=[valid],
    )
if comm.rank == 0:
    with open(f"{out_dir}/result.json", "w") as fh:
        json.dump(out, fh)
