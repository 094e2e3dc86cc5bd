"""Rank script: a query cut in two by the shards (its id ends rank 0's rows and
starts rank 1's) is refused by every rank alike, naming the id and the ranks;
with distinct ids the same shards train.

argv: K (2).
"""

import sys
import warnings

import numpy as np

import dgbdt
from dgbdt.distributed.comm import world_comm

k = int(sys.argv[1])
comm = world_comm()
assert comm.size == k == 2, f"world size {comm.size}, expected 2"
rng = np.random.default_rng(comm.rank)
X, y = rng.normal(size=(40, 3)), rng.integers(0, 3, 40).astype(float)
for first_of_rank1, ok in ((11, True), (10, False)):
    # rank 0 holds queries 7..10; rank 1 starts at query 11, or at 10 again (cut)
    data = dgbdt.Dataset(X, y, group=[10, 10, 10, 10])
    ids = [7, 8, 9, 10] if comm.rank == 0 else [first_of_rank1, 12, 13, 14]
    data.query_ids = np.array(ids)
    params = {"objective": "lambdarank", "tree_learner": "data", "verbosity": -1}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dgbdt.train(params, data, 2)
        assert ok, "a query spanning two ranks trained"
    except ValueError as exc:
        assert not ok and "query id 10 spans ranks 0 and 1" in str(exc), exc
print(f"rank {comm.rank} ok")
