"""``lightgbm.sklearn``: the estimators under LightGBM's names."""

from dgbdt.sklearn import DGBDTClassifier as LGBMClassifier
from dgbdt.sklearn import DGBDTModel as LGBMModel
from dgbdt.sklearn import DGBDTRanker as LGBMRanker
from dgbdt.sklearn import DGBDTRegressor as LGBMRegressor

__all__ = ["LGBMClassifier", "LGBMModel", "LGBMRanker", "LGBMRegressor"]
