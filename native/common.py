"""dtypes and record layouts shared by every kernel and by the Python layers.

Tests import these names; nothing else hard-codes a dtype.
"""

import numpy as np

# The largest float: stands for a +inf threshold in bin mappers, trees and model
# files (strict JSON has no infinity).
LARGEST = float(np.finfo(np.float64).max)

# Binned feature values: one byte per value while a feature has <= 256 bins
# (max_bin <= 255 plus the NaN bin), two bytes above.
BIN_DTYPE_SMALL = np.uint8
BIN_DTYPE_LARGE = np.uint16
MAX_SMALL_BINS = 256

# Gradients and hessians: float32 halves memory traffic in the histogram loop;
# their sums are accumulated in float64 (HIST_DTYPE).
GRAD_DTYPE = np.float32

# Histogram sums: float64 because the larger child is parent - smaller child,
# and subtraction of float32 sums would cancel badly.
HIST_DTYPE = np.float64
# A leaf's histogram is one C-contiguous (total_bins, HIST_WIDTH) block:
# features one after another at per-feature offsets, no padding; each bin
# holds (sum_gradients, sum_hessians).  Row counts are not accumulated: a
# third read-modify-write per value cost 30% of histogram time (measured on
# 1M x 28), and 16 bytes per bin is also what data-parallel training sends.
# The split scan derives a bin's count from its hessians as LightGBM does
# (exact when every row has the same hessian); leaf counts are exact.
HIST_WIDTH = 2
HIST_GRAD, HIST_HESS = 0, 1

# Row indices into the (local) data set: 4 bytes is enough for 4e9 rows per rank.
INDEX_DTYPE = np.uint32

# Scores (raw predictions) and labels: float64 so that adding hundreds of
# small leaf values does not drift.
SCORE_DTYPE = np.float64

# Tree node arrays.
NODE_INDEX_DTYPE = np.int32  # child links; a leaf is stored as ~leaf_index (< 0)
FEATURE_INDEX_DTYPE = np.int32

# A split record is a float64 vector so that it can travel through one
# MPI allreduce and be compared field by field.  Feature index < 0 means
# "no valid split".
SPLIT_GAIN = 0
SPLIT_FEATURE = 1
SPLIT_BIN = 2  # threshold bin: rows with bin <= SPLIT_BIN go left
SPLIT_DEFAULT_LEFT = 3  # 1.0 when missing values (the NaN bin) go left
SPLIT_LEFT_GRAD = 4
SPLIT_LEFT_HESS = 5
SPLIT_LEFT_COUNT = 6
SPLIT_RIGHT_GRAD = 7
SPLIT_RIGHT_HESS = 8
SPLIT_RIGHT_COUNT = 9
SPLIT_LEFT_VALUE = 10
SPLIT_RIGHT_VALUE = 11
SPLIT_RECORD_SIZE = 12  # a record of numeric splits only
# Records of trainings with categorical features are longer: a categorical
# split sends the bins SPLIT_CAT_BINS .. SPLIT_CAT_BINS + n - 1 left, n =
# record[SPLIT_CAT_COUNT] (0: a numeric split), at most max_cat_threshold.
SPLIT_CAT_COUNT = 12
SPLIT_CAT_BINS = 13


def split_record_size(max_categories):
    """Length of a split record holding up to ``max_categories`` left bins (0:
    numeric splits only)."""
    return SPLIT_RECORD_SIZE if max_categories == 0 else SPLIT_CAT_BINS + max_categories


# Objective codes: kernels select by integer, never by closure (closures are
# not cached by Numba).
OBJ_REGRESSION = 0
OBJ_REGRESSION_L1 = 1
OBJ_HUBER = 2
OBJ_BINARY = 3
OBJ_MULTICLASS = 4
OBJ_QUANTILE = 5
OBJ_POISSON = 6
OBJ_GAMMA = 7
OBJ_TWEEDIE = 8
OBJ_MAPE = 9
OBJ_FAIR = 10
OBJ_CROSS_ENTROPY = 11
OBJ_CROSS_ENTROPY_LAMBDA = 12
OBJ_MULTICLASS_OVA = 13

# Split-scan hyper-parameters travel as one float64 vector (one kernel
# signature whatever the parameters).
SP_LAMBDA_L1 = 0
SP_LAMBDA_L2 = 1
SP_MIN_GAIN_TO_SPLIT = 2
SP_MIN_DATA_IN_LEAF = 3
SP_MIN_SUM_HESSIAN = 4
SP_MAX_DELTA_STEP = 5
SP_MAX_CAT_TO_ONEHOT = 6
SP_MAX_CAT_THRESHOLD = 7
SP_CAT_SMOOTH = 8
SP_CAT_L2 = 9
SP_MIN_DATA_PER_GROUP = 10
SP_CAT_HIGH_ROWS = 11
SP_PATH_SMOOTH = 12
SP_USE_MC = 13  # 1.0 when monotone constraints are given: LightGBM's USE_MC arithmetic
SPLIT_PARAMS_SIZE = 14

# What a leaf's split scan needs to know about the leaf itself (float64[NODE_SIZE]):
# its output (path_smooth's parent output), the bounds monotone constraints put
# on its children's outputs, and the factor monotone_penalty puts on the gain
# of a split on a constrained feature.
NODE_PARENT_OUTPUT = 0
NODE_MIN = 1
NODE_MAX = 2
NODE_PENALTY = 3
NODE_SIZE = 4


def bin_dtype_for(max_bins_per_feature):
    """Smallest unsigned dtype that holds every bin index (NaN bin included)."""
    return BIN_DTYPE_SMALL if max_bins_per_feature <= MAX_SMALL_BINS else BIN_DTYPE_LARGE


# A feature's place in a Dataset's bin store (native/store.py), one int64 row
# per feature.  A dense column holds a group bin per row: the feature's bin b
# is stored as ``lo + s`` with ``s = b`` below ``skip`` and ``b - 1`` above
# (``skip``: the feature's most frequent bin in an EFB bundle, which is not
# stored; ``n_bins`` for a column of its own, which skips nothing); a group bin
# outside ``lo .. lo + width - 1`` means the feature's ``default`` bin.
# ``col`` < 0: the feature lives in the row-wise sparse part, whose entries
# are histogram bins (feature_offsets[f] + b) of the bins other than ``default``.
FM_COL, FM_LO, FM_WIDTH, FM_SKIP, FM_DEFAULT = range(5)
FEATURE_MAP_SIZE = 5
# Histogram bins of the sparse part: 4 bytes per non-zero.
ENTRY_DTYPE = np.uint32
