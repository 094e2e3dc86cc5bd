"""Training where a Dask collection's partitions live (``pip install "dgbdt[dask]"``).

``train(client, params, data, label, ...)`` and the estimators
``DaskDGBDTRegressor`` / ``DaskDGBDTClassifier`` / ``DaskDGBDTRanker`` mirror
``lightgbm.dask``.  Each worker holding partitions runs one training rank in a
process of its own (``mpiexec -n 1``); the ranks join one MPI group
(dgbdt.distributed.rendezvous) and train with the distributed learners, so a
model equals the one ``mpiexec -n K`` gives on the same shards.  See the
README's "On a Dask cluster".

The names load on first use: a rank's process imports this package for its
job alone, without Dask or scikit-learn.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

if importlib.util.find_spec("distributed") is None:  # pragma: no cover - environment
    raise ImportError("dgbdt.dask needs dask and distributed: pip install 'dgbdt[dask]'")

_WHERE = {
    "train": "training",
    "TrainingError": "driver",
    "DaskDGBDTClassifier": "estimators",
    "DaskDGBDTRanker": "estimators",
    "DaskDGBDTRegressor": "estimators",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'dgbdt.dask' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
