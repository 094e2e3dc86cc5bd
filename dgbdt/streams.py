"""The random streams: one registry of the stream ids of native.random's keyed draws.

A draw is fixed by (seed, stream key, index), never by a generator's state,
so rows and features are sampled alike however the data is spread over ranks.
Each use of the generator has its own id here, so no two uses share numbers:

* a use drawn once (the bin sample) takes its id as its key;
* a use drawn again each round or tree (bagging, GOSS, feature_fraction,
  stochastic rounding) takes ``stream_key(id, round or tree)``: the id times a prime
  larger than any number of rounds or trees, plus the round or tree.

The ids and the rule are part of every model: changing one changes models.
"""

STREAM_BIN_SAMPLE = 1  # the rows that find bin bounds (dgbdt.data.binning)
STREAM_BAGGING = 2  # the rows of each round's bag (dgbdt.boosting.sampling)
STREAM_FEATURE_FRACTION = 3  # the features of each tree (dgbdt.boosting.sampling)
STREAM_QUANTIZE = 5  # stochastic rounding of each tree's gradients (dgbdt.treelearner.quantization)
STREAM_GOSS = 6  # the small-gradient rows GOSS keeps each round (dgbdt.boosting.sampling)
STREAM_EXTRA_TREES = (
    7  # extra_trees' threshold of each (tree, leaf, feature) (dgbdt.treelearner.constraints)
)
STREAM_BYNODE = (
    8  # feature_fraction_bynode's features of each (tree, leaf) (dgbdt.treelearner.constraints)
)
STREAM_CV_FOLDS = 9  # each row's (or query's) fold of keyed cv folds (dgbdt.cv)

#: Keys of one id per round or tree: ``id * STREAM_STRIDE + index``.
STREAM_STRIDE = 1_000_003


def stream_key(stream: int, index: int) -> int:
    """The generator's stream key for round or tree ``index`` of ``stream``."""
    return stream * STREAM_STRIDE + index
