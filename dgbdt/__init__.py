"""dgbdt: distributed gradient-boosted decision trees.

A histogram GBDT with Numba kernels, LightGBM's parameters and API shape,
scikit-learn estimators, and MPI tree learners.
"""

from __future__ import annotations

from typing import Any

from . import jit_cache
from .distributed.comm import install_abort_hook, under_launcher
from .version import __version__

# Before any kernel is defined: Numba's cache folder (keyed on the version and
# native/, private, fault-tolerant; see dgbdt.jit_cache).
jit_cache.configure(__version__)
if under_launcher():
    # An uncaught exception on one rank, even before dgbdt's first collective,
    # aborts every rank (only once mpi4py has initialised MPI; see the hook).
    install_abort_hook()

from .booster import Booster  # noqa: E402
from .callback import (  # noqa: E402
    EarlyStopException,
    checkpoint,
    early_stopping,
    log_evaluation,
    log_progress,
    record_evaluation,
    reset_parameter,
)
from .cv import CVBooster, KeyedKFold, cv  # noqa: E402
from .data.dataset import Dataset  # noqa: E402
from .data.inputs import RowSequence as Sequence  # noqa: E402
from .engine import train  # noqa: E402
from .log import DGBDTDeprecationWarning, DGBDTError, register_logger  # noqa: E402
from .plotting import (  # noqa: E402
    create_tree_digraph,
    plot_importance,
    plot_metric,
    plot_split_value_histogram,
    plot_tree,
)
from .treelearner.choice import suggest_tree_learner  # noqa: E402

__all__ = [
    "Booster",
    "Dataset",
    "Sequence",
    "train",
    "cv",
    "CVBooster",
    "KeyedKFold",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
    "checkpoint",
    "log_progress",
    "reset_parameter",
    "EarlyStopException",
    "DGBDTError",
    "DGBDTDeprecationWarning",
    "register_logger",
    "DGBDTClassifier",
    "DGBDTRegressor",
    "DGBDTRanker",
    "plot_importance",
    "plot_metric",
    "plot_split_value_histogram",
    "plot_tree",
    "create_tree_digraph",
    "suggest_tree_learner",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # The estimators import scikit-learn (about 100 MB of modules): load them
    # only when asked for, so `dgbdt.train` users do not pay for it.
    if name in ("DGBDTClassifier", "DGBDTRegressor", "DGBDTRanker"):
        from . import sklearn as _sklearn  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)

        return getattr(_sklearn, name)
    raise AttributeError(f"module 'dgbdt' has no attribute {name!r}")
