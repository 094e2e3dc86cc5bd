"""Rank script: the named collectives of dgbdt.distributed.comm; rank 0 writes the results.

argv: K, out_path
"""

import json
import sys

import numpy as np

from dgbdt.distributed.comm import world_comm

k, out_path = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
r = comm.rank
out = {
    "any_last": comm.any_rank(r == k - 1),
    "any_none": comm.any_rank(False),
    "every_all": comm.every_rank(True),
    "every_not_first": comm.every_rank(r != 0),
    "total": comm.total([r, 1.0]).tolist(),
    "concat": comm.concat(np.arange(r), dtype=np.int64).tolist(),
    "per_rank": comm.per_rank(10 * r).tolist(),
    "greatest_int": comm.greatest_int([r, -r]).tolist(),
    "greatest": comm.greatest([0.5 * r, 1.0]).tolist(),
}
if r == 0:
    with open(out_path, "w") as f:
        json.dump(out, f)
