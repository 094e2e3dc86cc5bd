"""dgbdt: distributed gradient-boosted decision trees.

A histogram GBDT with Numba kernels, LightGBM's parameters and API shape,
scikit-learn estimators, and MPI tree learners.
"""
from .booster import Booster
from .callback import EarlyStopException, early_stopping, log_evaluation, record_evaluation
from .dataset import Dataset
from .engine import train
from .sklearn import DGBDTClassifier, DGBDTRegressor

__version__ = "0.1.0"

__all__ = ["Booster", "Dataset", "train", "early_stopping", "log_evaluation",
           "record_evaluation", "EarlyStopException", "DGBDTClassifier", "DGBDTRegressor",
           "__version__"]
