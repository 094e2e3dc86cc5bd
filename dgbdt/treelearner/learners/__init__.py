"""Tree learner strategies: the only place where distribution happens.

Every strategy offers the grower the calls of ``base.Learner`` (global row
totals and counts, a leaf's histogram, its best split, the row partition,
scores of rows the partition did not place), on either histogram kind
(dgbdt.treelearner.histograms).  ``serial`` is the single-process strategy and the local
half of the others; the MPI strategies (data, feature, feature blocks,
voting) compose it with the pieces in ``base`` (reduce-scatter of bins to
their owners, the split agreement, sums over ranks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .data import DataParallelLearner
from .feature import FeatureParallelLearner
from .feature_blocks import FeatureBlockLearner
from .serial import SerialLearner
from .voting import VotingParallelLearner

if TYPE_CHECKING:
    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm

#: The learners that shard rows over ranks (feature-parallel replicates them).
ROW_SHARDING = ("data", "voting")


def shards_rows(tree_learner: str) -> bool:
    """Whether a canonical ``tree_learner`` name shards rows over ranks: the one
    place this rule is written."""
    return tree_learner in ROW_SHARDING


def make_learner(
    cfg: dict[str, Any], data: TrainingData, split_params: np.ndarray, comm: SerialComm
) -> SerialLearner:
    name = cfg["tree_learner"]
    if name == "serial":
        return SerialLearner(data, split_params)
    if name == "data":
        return DataParallelLearner(data, split_params, comm, cfg["comm_pipeline"])
    if name == "voting":
        return VotingParallelLearner(data, split_params, comm, cfg["top_k"], cfg["voting_rule"])
    if data.owner_of is not None:
        return FeatureBlockLearner(data, split_params, comm, data.owner_of)
    return FeatureParallelLearner(data, split_params, comm)
