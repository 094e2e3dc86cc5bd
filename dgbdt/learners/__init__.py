"""Tree learner strategies: the only place where distribution happens.

Every strategy offers the same small interface to the grower:

* ``global_totals(sum_gradients, sum_hessians, count)`` -> global totals of a leaf
* ``global_counts(n_left, n_right)`` -> global row counts of two new children
* ``leaf_histogram(sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist)``
  fills ``hist`` with the (global) histogram of a leaf's rows
* ``fix_histogram(hist, feature_indices, totals)`` gives a float histogram just
  built LightGBM's most frequent bins (native.split.fix_most_frequent_bins)
* ``best_split(hist, feature_indices, totals, record, local_count)`` -> best split
  record (global); returns the features of ``feature_indices`` splittable in
  the leaf, which its children scan (LightGBM's ``is_splittable``)
* ``partition(sample_indices, record, scratch)`` -> number of local rows going left
* ``add_tree_scores(tree, binned, nan_bins, scores)`` adds a grown tree's values
  for rows the partition did not place (out-of-bag rows, validation rows)

``serial`` is the single-process strategy; the MPI strategies (data, feature,
voting) implement the same calls with collectives in between.
"""

from .data import DataParallelLearner
from .feature import FeatureParallelLearner
from .feature_blocks import FeatureBlockLearner
from .serial import SerialLearner
from .voting import VotingParallelLearner


#: The learners that shard rows over ranks (feature-parallel replicates them).
ROW_SHARDING = ("data", "voting")


def shards_rows(tree_learner):
    """Whether a canonical ``tree_learner`` name shards rows over ranks: the one
    place this rule is written."""
    return tree_learner in ROW_SHARDING


def make_learner(cfg, data, split_params, comm):
    name = cfg["tree_learner"]
    if name == "serial":
        return SerialLearner(data, split_params)
    if name == "data":
        return DataParallelLearner(data, split_params, comm)
    if name == "voting":
        return VotingParallelLearner(data, split_params, comm, cfg["top_k"], cfg["voting_rule"])
    if data.owner_of is not None:
        return FeatureBlockLearner(data, split_params, comm, data.owner_of)
    return FeatureParallelLearner(data, split_params, comm)
