"""Rank script: the ranks differ in their categorical features; every rank must
refuse at once, naming categorical_feature and the ranks (the bins of
categorical features are counted over the ranks: a difference used to end the
job with MPI's "Message truncated").

argv: K, case   (case: train | cv)
  train  train(): rank K-1 gives categorical_feature=[1, 2], the others [2]
  cv     cv(): rank 0 gives categorical_feature=[2], the others "auto" (none, for
         an array), caught when cv bins the data, before any fold's train()
"""

import sys

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k, case = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k
rng = np.random.default_rng(comm.rank)
n = 200
X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, n), rng.integers(0, 5, n)])
y = (X[:, 0] > 0).astype(float)
params = {"objective": "binary", "tree_learner": "data", "verbosity": -1}
if case == "train":
    categorical = [1, 2] if comm.rank == k - 1 else [2]
    dgbdt.train(params, dgbdt.Dataset(X, label=y, categorical_feature=categorical), 3)
elif case == "cv":
    categorical = [2] if comm.rank == 0 else "auto"
    dgbdt.cv(params, dgbdt.Dataset(X, label=y, categorical_feature=categorical), 3, nfold=2)
print("finished", flush=True)
