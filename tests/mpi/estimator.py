"""Rank script: the scikit-learn classifier on row shards (rank 0 lacks class 'c').

argv: K, out_npy[, class_weight[, "tiny": rank 0 holds one row, "weights0": only rank 0
passes sample_weight (2 on its rows)]]
"""

import sys

import numpy as np
from shard_data import make_data

from dgbdt import DGBDTClassifier
from dgbdt.distributed.comm import world_comm

k, out = int(sys.argv[1]), sys.argv[2]
class_weight = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "none" else None
tiny = len(sys.argv) > 4 and sys.argv[4] == "tiny"
weights0 = len(sys.argv) > 4 and sys.argv[4] == "weights0"
comm = world_comm()
assert comm.size == k
X, y, X_valid, _ = make_data()
labels = np.where(X[:, 0] > 1.0, "c", np.where(y > 0, "b", "a"))
order = np.argsort(labels == "c", kind="stable")  # every 'c' row at the end
X, labels = X[order], labels[order]
lo, hi = comm.rank * len(X) // k, (comm.rank + 1) * len(X) // k
if tiny:  # rank 0: one row (scikit-learn's checks want 2)
    lo, hi = (0, 1) if comm.rank == 0 else (1, len(X))
weight = np.full(hi - lo, 2.0) if weights0 and comm.rank == 0 else None
clf = DGBDTClassifier(
    n_estimators=10, num_leaves=15, tree_learner="data", class_weight=class_weight
).fit(X[lo:hi], labels[lo:hi], sample_weight=weight)
if comm.rank == 0:
    assert "c" not in set(labels[lo:hi])
    assert list(clf.classes_) == ["a", "b", "c"], clf.classes_  # every class, globally
    np.save(out, clf.predict_proba(X_valid))
