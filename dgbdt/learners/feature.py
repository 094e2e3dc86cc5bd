"""Feature-parallel learner (LightGBM's): every rank holds all rows and
columns; each scans only its own block of features.

Per leaf, a rank builds histograms of its own features only (the column-wise
kernel over the column-major copy), scans them, and the best split is agreed
by gathering one split record per rank.  Every rank then partitions its own
copy of the rows the same way, so the only traffic is one record per rank
per leaf: independent of the number of rows and of features.
"""
import numpy as np

from ..native.histogram import build_histogram_colwise
from .data import agree_best_split, owner_blocks
from .serial import SerialLearner


class FeatureParallelLearner(SerialLearner):
    def __init__(self, data, split_params, comm):
        super().__init__(data, split_params)
        self.comm = comm
        bounds = owner_blocks(np.diff(data.feature_offsets), comm.size)
        self.owned = np.arange(bounds[comm.rank], bounds[comm.rank + 1], dtype=np.int32)

    def _mine(self, feature_indices):
        return np.intersect1d(feature_indices, self.owned).astype(np.int32)

    def leaf_histogram(self, sample_indices, ordered_gradients, ordered_hessians,
                       feature_indices, hist):
        build_histogram_colwise(self.data.columns.T, sample_indices, ordered_gradients,
                                ordered_hessians, self._mine(feature_indices),
                                self.data.feature_offsets, hist)

    def best_split(self, hist, feature_indices, totals, record):
        super().best_split(hist, self._mine(feature_indices), totals, record)
        agree_best_split(self.comm, record)
