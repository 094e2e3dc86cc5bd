"""Feature-parallel learner (LightGBM's): every rank holds all rows and
columns; each scans only its own block of features.

Per leaf, a rank builds histograms of its own features only (the column-wise
kernel over the column-major copy), scans them, and the best split is agreed
by gathering one split record per rank (with the leaf's splittable
features, one bit per feature).  Every rank then partitions its own copy of
the rows the same way, so the only traffic is one record per rank per leaf:
independent of the number of rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .base import agree_best_splits, owner_blocks
from .serial import SerialLearner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm
    from .base import LeafScan


class FeatureParallelLearner(SerialLearner):
    def __init__(self, data: TrainingData, split_params: np.ndarray, comm: SerialComm) -> None:
        super().__init__(data, split_params)
        self.comm = comm
        bounds = owner_blocks(np.diff(data.feature_offsets), comm.size)
        self.owned = np.arange(bounds[comm.rank], bounds[comm.rank + 1], dtype=np.int32)
        self.owned_mask = np.zeros(data.n_features, bool)
        self.owned_mask[self.owned] = True

    @staticmethod
    def builds_row_wise(data: TrainingData) -> bool:
        """Never: a rank builds its own features only, from the column-major copy."""
        return False

    def histogram_features(self, feature_indices: np.ndarray) -> np.ndarray:
        return feature_indices[self.owned_mask[feature_indices]]

    def agree(self, leaves: Sequence[LeafScan], splittable: list[np.ndarray]) -> list[np.ndarray]:
        records = [s.record for s in leaves]
        masks = agree_best_splits(self.comm, records, splittable, self.data.n_features_global)
        return [s.feature_indices[m[s.feature_indices]] for s, m in zip(leaves, masks, strict=True)]
