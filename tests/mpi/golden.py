"""Rank script: the distributed golden configurations on this many ranks.

argv: K, out_dir.  Rank 0 writes <out_dir>/<name>.json, the manifest entry of
each configuration's model (tests/golden_configs.py).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from golden_configs import DISTRIBUTED, canonical, entry, is_quantized, train  # noqa: E402

from dgbdt.distributed.comm import world_comm  # noqa: E402

k, out_dir = int(sys.argv[1]), sys.argv[2]
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
for name, spec in DISTRIBUTED.items():
    booster = train(spec, comm.rank, comm.size)
    if comm.rank == 0:
        with open(os.path.join(out_dir, f"{name}.json"), "w") as fh:
            json.dump(entry(canonical(booster), is_quantized(spec)), fh)
