"""``lightgbm.dask``: the Dask estimators under LightGBM's names.

LightGBM's private helpers (``_train``, ``_machines_to_worker_map``,
``_assign_open_ports_to_workers``, ...) are deliberately absent: the tests
that call them are counted as not applicable by ``bench/lightgbm_suite.py``.
"""

from dgbdt.dask import DaskDGBDTClassifier as DaskLGBMClassifier
from dgbdt.dask import DaskDGBDTRanker as DaskLGBMRanker
from dgbdt.dask import DaskDGBDTRegressor as DaskLGBMRegressor

__all__ = ["DaskLGBMClassifier", "DaskLGBMRanker", "DaskLGBMRegressor"]
