"""Rank script: the named collectives the engine's layers use (total_int,
least_int, stack, gather_bytes, ranks_unlike_rank0); rank 0 writes the results.

argv: K, out_path
"""

import json
import sys

from dgbdt.distributed.comm import world_comm

k, out_path = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
r = comm.rank
before = comm.stats.as_dict()["bytes"]
out = {
    "total_int": comm.total_int([r, 1]).tolist(),
    "least_int": comm.least_int([r, 10 - r]).tolist(),
    "stack": comm.stack([r, 0.5]).tolist(),
    "gather_bytes": [b.decode() for b in comm.gather_bytes(("x" * r).encode())],
    "unlike_rank0": comm.ranks_unlike_rank0("same" if r != 1 else "other"),
    "all_alike": comm.ranks_unlike_rank0("same"),
}
after = comm.stats.as_dict()["bytes"]
out["bytes"] = {kind: after[kind] - before[kind] for kind in ("allreduce", "allgather")}
if r == 0:
    with open(out_path, "w") as f:
        json.dump(out, f)
