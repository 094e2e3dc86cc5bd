"""A name-only stand-in for ``lightgbm`` that points every public name at dgbdt.

Used by ``bench/lightgbm_suite.py`` to run LightGBM's own python-package tests
against dgbdt. It maps names and nothing else: a name dgbdt lacks is simply
absent (the tests that need it fail), and no behaviour is added here.
"""

import dgbdt
from dgbdt import (
    Booster,
    CVBooster,
    Dataset,
    EarlyStopException,
    create_tree_digraph,
    cv,
    early_stopping,
    log_evaluation,
    plot_importance,
    plot_metric,
    plot_split_value_histogram,
    plot_tree,
    record_evaluation,
    reset_parameter,
    train,
)

from . import basic, callback, compat, engine, plotting, sklearn
from .sklearn import LGBMClassifier, LGBMModel, LGBMRanker, LGBMRegressor

# lightgbm exports its Dask estimators at the top level when dask is installed
if compat.DASK_INSTALLED:
    from .dask import DaskLGBMClassifier, DaskLGBMRanker, DaskLGBMRegressor

__version__ = dgbdt.__version__

if hasattr(dgbdt, "register_logger"):
    register_logger = dgbdt.register_logger
Sequence = basic.Sequence

__all__ = [
    "Booster",
    "CVBooster",
    "DaskLGBMClassifier",
    "DaskLGBMRanker",
    "DaskLGBMRegressor",
    "Dataset",
    "EarlyStopException",
    "LGBMClassifier",
    "LGBMModel",
    "LGBMRanker",
    "LGBMRegressor",
    "basic",
    "callback",
    "compat",
    "create_tree_digraph",
    "cv",
    "early_stopping",
    "engine",
    "log_evaluation",
    "plot_importance",
    "plot_metric",
    "plot_split_value_histogram",
    "plot_tree",
    "plotting",
    "record_evaluation",
    "reset_parameter",
    "sklearn",
    "train",
]
