"""Rank script: data-parallel with the histogram pipelined in pieces (the
communication thread) gives the model of the one-exchange learner, with the
same bytes; it also equals the one-process model on the same rows.

argv: K, layout   (layout: col | blocks | sparse)
  col     80 features, column-wise builder
  blocks  300 features, the blocked builder (cuts on its 64-feature blocks)
  sparse  EFB-packed sparse columns: no pipeline (every bin of the wire is not
          sent), the model as without it
Pieces -1 (auto) is run as if the ranks spanned machines: the first 32
histograms are timed, one allreduce agrees on the pipeline (either way: the
same model and bytes).  Prints one line per (quantized, pieces): the trees'
digest, reduce-scatter calls and bytes.
"""

import hashlib
import sys

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k, layout = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k
rng = np.random.default_rng(0)
n, f = 3000, {"col": 80, "blocks": 300, "sparse": 60}[layout]
X = rng.normal(size=(n, f))
X[rng.random(X.shape) < 0.05] = np.nan
if layout == "sparse":
    X[rng.random(X.shape) < 0.9] = 0.0
y = (np.nan_to_num(X[:, 0]) + 2 * np.nan_to_num(X[:, 1]) + rng.normal(size=n) > 0).astype(float)
lo, hi = comm.rank * n // k, (comm.rank + 1) * n // k


def trees(booster):
    text = booster.model_to_string()
    return hashlib.sha256(text[text.index("Tree=0") : text.index("end of trees")].encode())


for quantized in (False, True):
    base = {"objective": "binary", "verbosity": -1, "num_leaves": 15, "min_data_in_leaf": 5}
    base.update(force_col_wise=True, use_quantized_grad=quantized, seed=3)
    single = dgbdt.train({**base, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 6)
    seen, calls, sent, allreduces = {}, {}, {}, {}
    for pieces in (0, 3, -1):
        params = {**base, "tree_learner": "data", "comm_pipeline": pieces}
        comm.local_size = 1 if pieces == -1 else k  # -1: as on k machines
        booster = dgbdt.train(params, dgbdt.Dataset(X[lo:hi], y[lo:hi]), 6)
        stats = booster.comm_stats()
        allreduces[pieces] = stats["calls"]["allreduce"]
        seen[pieces] = trees(booster).hexdigest()
        calls[pieces] = stats["calls"]["reduce_scatter"]
        sent[pieces] = stats["bytes"]["reduce_scatter"]
        assert stats["seconds"]["reduce_scatter"] > 0
        if comm.rank == 0:
            print(quantized, pieces, seen[pieces][:12], calls[pieces], sent[pieces])
    assert len(set(seen.values())) == 1, seen
    assert len(set(sent.values())) == 1, sent  # the same bytes, in more calls
    if layout == "sparse":
        assert calls[3] == calls[0] == calls[-1], calls
        assert allreduces[-1] == allreduces[0]
    else:
        assert calls[3] == 3 * calls[0], calls
        assert allreduces[-1] == allreduces[0] + 1  # the decision's, once
        assert calls[-1] in (calls[0], calls[0] + 3 * (calls[0] - 32)), calls
    if quantized or k == 2:  # float sums in another order may differ in the last bits
        assert seen[0] == trees(single).hexdigest()
print("finished", flush=True)
