"""Rank script: data- and voting-parallel on the same shuffled shards, for each
(n_noise_features, top_k) case in one launch; rank 0 writes both validation AUCs
and bytes per tree of each case, keyed "n_noise-top_k".

argv: K, out_json, cases_json ([[n_noise_features, top_k], ...])
"""

import json
import sys

import numpy as np
from dgbdt.datasets import make_higgs_like

import dgbdt
from dgbdt.distributed.comm import world_comm

k, out, cases = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
comm = world_comm()
assert comm.size == k
result = {}
for n_noise, top_k in cases:
    X, y = make_higgs_like(12000, seed=7)
    X = np.hstack([X, np.random.default_rng(0).standard_normal((len(X), n_noise))])
    order = np.random.default_rng(1).permutation(len(X))  # shuffled shards
    X, y = X[order], y[order]
    X_train, y_train, X_valid, y_valid = X[:9000], y[:9000], X[9000:], y[9000:]
    lo, hi = comm.rank * 9000 // k, (comm.rank + 1) * 9000 // k
    vlo, vhi = comm.rank * 3000 // k, (comm.rank + 1) * 3000 // k
    case = result[f"{n_noise}-{top_k}"] = {}
    for learner in ("data", "voting"):
        train_set = dgbdt.Dataset(X_train[lo:hi], y_train[lo:hi])
        evals = {}
        booster = dgbdt.train(
            {
                "objective": "binary",
                "tree_learner": learner,
                "top_k": top_k,
                "num_leaves": 31,
                "metric": "auc",
                "verbosity": -1,
            },
            train_set,
            30,
            valid_sets=[dgbdt.Dataset(X_valid[vlo:vhi], y_valid[vlo:vhi], reference=train_set)],
            valid_names=["valid"],
            callbacks=[dgbdt.record_evaluation(evals)],
        )
        case[learner] = {
            "auc": evals["valid"]["auc"][-1],
            "bytes_per_tree": float(np.median(booster.comm_stats()["bytes_per_tree"])),
        }
if comm.rank == 0:
    with open(out, "w") as fh:
        json.dump(result, fh)
