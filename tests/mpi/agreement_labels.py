"""Rank script: DGBDTClassifier under mpiexec, each rank fitting its own shard:
rank 1 has integer labels 0/1, the others strings "a"/"b".  Every rank must
refuse at once, naming the ranks and their labels' types (joined, they made a
model of four classes).

argv: K
"""

import sys

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k = int(sys.argv[1])
comm = world_comm()
assert comm.size == k
rng = np.random.default_rng(comm.rank)
X = rng.normal(size=(150, 3))
y = (X[:, 0] > 0).astype(np.int64)
if comm.rank != 1:
    y = np.where(y == 1, "b", "a")
params = {"tree_learner": "data", "n_estimators": 3, "num_leaves": 4, "verbose": -1}
model = dgbdt.DGBDTClassifier(**params).fit(X, y)
print("finished", model.classes_.tolist(), flush=True)
