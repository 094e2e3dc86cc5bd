"""Rank script: the training and validation Datasets that ``dgbdt train`` builds on
every rank (dgbdt.cli.commands._training_sets), for several cases in one launch.

argv: K, OUT (a directory), then the cases, each the ``key=value`` arguments of
``dgbdt train``, separated by ``--``.  For case i rank r writes
``OUT/case{i}.rank{r}.npz``: for each data set j (training first, then the
validation files) ``{j}_n`` (rows), ``{j}_label``, ``{j}_group``,
``{j}_query_ids`` and ``{j}_position`` (absent where None).  A case whose reading
fails with an error every rank agrees on writes ``OUT/case{i}.rank{r}.err``
with the message instead, and the next case runs.
"""

import os
import pathlib
import sys
import warnings

import numpy as np

from dgbdt.cli.commands import _training_sets, _training_world, parse_arguments
from dgbdt.distributed.comm import AgreedError
from dgbdt.params.table import resolve_params

assert int(os.environ.get("PMI_SIZE", "1")) == int(sys.argv[1]), "not started by the right mpiexec"
rank = int(os.environ.get("PMI_RANK", "0"))
out = pathlib.Path(sys.argv[2])
cases, case = [], []
for arg in sys.argv[3:]:
    if arg == "--":
        cases.append(case)
        case = []
    else:
        case.append(arg)
cases.append(case)

warnings.simplefilter("ignore")
for i, args in enumerate(cases):
    io, params = parse_arguments(args)
    cfg = resolve_params(params)
    comm = _training_world(io, cfg)
    assert comm.size == int(sys.argv[1])
    try:
        train_set, valid_sets, _ = _training_sets(io, cfg, comm)
    except AgreedError as exc:
        (out / f"case{i}.rank{rank}.err").write_text(str(exc))
        continue
    arrays = {}
    for j, ds in enumerate([train_set, *valid_sets]):
        arrays[f"{j}_n"] = np.array([ds.n_samples])
        arrays[f"{j}_label"] = ds.label
        for name in ("group", "query_ids", "position"):
            if getattr(ds, name) is not None:
                arrays[f"{j}_{name}"] = getattr(ds, name)
    np.savez(out / f"case{i}.rank{rank}.npz", **arrays)
