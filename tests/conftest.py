"""Shared test setup: a writable Numba cache and a warm JIT before any test runs.

``NUMBA_CACHE_DIR`` is set here, at import, before anything imports numba, so
kernels compiled in this process are cached where later ``mpiexec`` ranks
(started by the distributed tests, which inherit the environment) find them.
"""

import itertools
import os
import pathlib
import warnings

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO_ROOT / ".numba_cache"))
# Numba's OpenMP layer spin-waits by default; on a 2-core box every parallel
# kernel call then costs ~10 ms instead of ~10 us (measured), which makes the
# many tiny calls of the tests (and oversubscribed MPI ranks) crawl.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# Binned layouts (see dgbdt.data.dataset.choose_layout): each compiles its own variants.
LAYOUTS = ({"force_row_wise": True}, {"force_col_wise": True})
# Every input of a leaf context: bounds, penalty, draws, usable features.
CONSTRAINED = {
    "monotone_constraints": [1, -1, 0, 0],
    "monotone_constraints_method": "intermediate",
    "path_smooth": 1.0,
    "extra_trees": True,
    "feature_fraction_bynode": 0.5,
}


def _warm_kernels():
    """Run every kernel once, for every dtype variant the library uses."""
    import scipy.sparse as sp

    import dgbdt

    rng = np.random.default_rng(0)
    n = 400  # > 256 distinct values, so max_bin=300 gives uint16 bins
    X = rng.normal(size=(n, 4))
    X_nan = X.copy()
    X_nan[rng.random(X.shape) < 0.1] = np.nan
    y_reg = X[:, 0] + 0.1 * rng.normal(size=n)
    y_bin = (X[:, 1] > 0).astype(float)
    y_multi = np.digitize(X[:, 2], [-0.5, 0.5]).astype(float)
    base = {"num_leaves": 4, "min_data_in_leaf": 5, "verbosity": -1}
    cases = [
        ("regression", y_reg, {}),
        ("regression_l1", y_reg, {}),
        ("huber", y_reg, {}),
        ("binary", y_bin, {}),
        ("multiclass", y_multi, {"num_class": 3}),
        # bagging (out-of-bag rows walk add_tree_binned), feature_fraction,
        # uint16 bins (max_bin > 255) and weights.
        (
            "regression",
            y_reg,
            {
                "bagging_fraction": 0.5,
                "bagging_freq": 1,
                "feature_fraction": 0.5,
                "max_bin": 300,
                "min_data_in_bin": 1,
            },
        ),
        # quantized training: integer histograms
        ("binary", y_bin, {"use_quantized_grad": True, "quant_train_renew_leaf": True}),
        # the split scan's leaf contexts (dgbdt.treelearner.constraints), float and quantized
        ("regression", y_reg, CONSTRAINED),
        ("regression", y_reg, {**CONSTRAINED, "use_quantized_grad": True}),
    ]
    for objective, y, extra in cases:
        for data, layout in itertools.product((X, X_nan), LAYOUTS):
            params = {**base, "objective": objective, **extra, **layout}
            w = rng.random(n) + 0.5
            booster = dgbdt.train(params, dgbdt.Dataset(data, label=y, weight=w), num_boost_round=2)
            booster.predict(data)
            booster.predict(data, raw_score=True)
            booster.predict(data, pred_leaf=True)
    X_sparse = sp.random(n, 4, density=0.3, format="csr", random_state=0)
    dgbdt.train(
        {**base, "objective": "regression"}, dgbdt.Dataset(X_sparse, label=y_reg), num_boost_round=2
    ).predict(X_sparse)
    _warm_store(dgbdt, sp, rng, base, y_bin)

    # Kernels the serial trainer does not reach (best effort: a changed
    # signature should fail its own tests, not every test of the session).
    try:
        _warm_direct_calls()
    except Exception as exc:  # noqa: BLE001
        warnings.warn(f"warming kernels directly failed: {exc!r}", stacklevel=1)
    # --- ranking metrics (dgbdt.native.rank_metric): ndcg@k, map@k and query
    # weights, reached in MPI ranks by tests/mpi/rank_metrics.py
    try:
        _warm_rank_metrics()
    except Exception as exc:  # noqa: BLE001
        warnings.warn(f"warming the ranking metric kernels failed: {exc!r}", stacklevel=1)
    # --- SHAP contributions (dgbdt.native.shap), reached in MPI ranks by
    # `dgbdt predict predict_contrib=true` (tests/test_shap.py)
    try:
        shap_model = dgbdt.train(base, dgbdt.Dataset(X_nan, label=y_reg), num_boost_round=2)
        shap_model.predict(X_nan, pred_contrib=True)
    except Exception as exc:  # noqa: BLE001
        warnings.warn(f"warming the SHAP kernel failed: {exc!r}", stacklevel=1)
    # --- end SHAP


def _warm_rank_metrics():
    from dgbdt.objective.metrics import get_metric

    label, score, queries = np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.1, 0.3]), [0, 2, 3]
    for name in ("ndcg", "map"):
        for weight in (None, np.ones(3)):
            get_metric(name).compute(label, score, weight, queries=queries)
    # the ranking objectives' kernels (dgbdt.native.rank), with and without
    # weights and positions, reached by tests/mpi/train_ranking.py
    import dgbdt

    X = np.arange(24, dtype=np.float64).reshape(12, 2) % 5
    y = np.array([0, 1, 2, 0, 1, 3, 0, 0, 1, 2, 4, 0], np.float64)
    for objective in ("lambdarank", "rank_xendcg"):
        for weight, position in ((None, None), (np.ones(12), np.arange(12) % 3)):
            data = dgbdt.Dataset(X, y, weight=weight, group=[5, 7], position=position)
            params = {"objective": objective, "verbosity": -1, "min_data_in_leaf": 1}
            dgbdt.train(params, data, 1)


def _warm_store(dgbdt, sp, rng, base, y):
    """A bin store with bundles and a sparse part (dgbdt.data.store): its histogram,
    partition and replay kernels, float and quantized, both layouts, uint8 and
    uint16 group bins, out-of-bag rows and a validation set."""
    n = len(y)
    one_hot = np.eye(8)[rng.integers(0, 8, n)] * rng.random((n, 1))
    rare = sp.random(n, 6, density=0.05, random_state=1).toarray()
    for X in (np.hstack([one_hot.round(1), rare]), np.hstack([one_hot, rare])):
        X = sp.csr_matrix(X)
        for layout, quantized in itertools.product(LAYOUTS, (False, True)):
            params = {**base, "objective": "binary", "use_quantized_grad": quantized, **layout}
            params.update(bagging_fraction=0.5, bagging_freq=1)
            train = dgbdt.Dataset(X, label=y)
            valid = dgbdt.Dataset(X, label=y, reference=train)
            dgbdt.train(params, train, num_boost_round=2, valid_sets=[valid])


def _warm_blocks(histogram, binned_rows, rows, g, offsets, hist):
    """The blocked builders (wide data, >= 256 features), float and integer
    words, reached in MPI ranks by tests/mpi/pipeline.py."""
    from dgbdt.native import quantize

    blocks = histogram.feature_blocks(binned_rows)
    ids = np.arange(len(blocks), dtype=np.int64)
    histogram.build_histogram_blocks(blocks, rows, g, g, ids, offsets, hist)
    for words in (np.ones(10, np.int32), np.ones(10, np.int64)):
        int_hist = np.zeros(8, words.dtype)
        quantize.build_int_histogram_blocks(blocks, rows, words, ids, offsets, int_hist)


def _warm_direct_calls():
    from dgbdt.native import binning, common, histogram, random, split

    ub = np.array([-1.0, 0.0, 1.0, np.inf])
    binning.value_to_bin(0.5, ub, -1)
    random.uniform_from_counter(1, 2, 3)
    split.leaf_gain(1.0, 2.0, 0.0, 1.0, 0.0)
    split.leaf_output(1.0, 2.0, 0.0, 1.0, 0.0)
    offsets = np.array([0, 4, 8], np.int64)
    rows = np.arange(10, dtype=common.INDEX_DTYPE)
    g = np.ones(10, common.GRAD_DTYPE)
    features = np.arange(2, dtype=np.int32)
    hist = np.zeros((8, common.HIST_WIDTH), common.HIST_DTYPE)
    chunk_hists = np.zeros((histogram.MAX_CHUNKS, 8, common.HIST_WIDTH), common.HIST_DTYPE)
    _warm_voting_scans(split, features, offsets)
    for dtype in (common.BIN_DTYPE_SMALL, common.BIN_DTYPE_LARGE):
        binned_rows = np.zeros((10, 2), dtype)
        histogram.build_histogram_rowwise(binned_rows, rows, g, g, offsets, 2, chunk_hists, hist)
        histogram.build_histogram_colwise(
            np.ascontiguousarray(binned_rows.T), rows, g, g, features, offsets, hist
        )
        _warm_blocks(histogram, binned_rows, rows, g, offsets, hist)


def _warm_voting_scans(split, features, offsets):
    """The split scans with a leaf context for every histogram kind: voting's
    local vote and the distributed learners' scans of reduced histograms are
    reached only in MPI ranks, which would each compile them at once."""
    from dgbdt.native import common

    from dgbdt.treelearner.constraints import LeafContext

    node = LeafContext(np.array([0.0, -np.inf, np.inf, 1.0]), np.zeros(2, np.int8), None, None)
    zeros = np.zeros(2, np.int32)
    for hist in (
        np.zeros((8, common.HIST_WIDTH), common.HIST_DTYPE),
        np.zeros(8, np.int64),
        np.zeros((8, 2), np.int64),
    ):
        args = (hist, features, offsets, zeros - 1, zeros - 1, zeros, 0.0, 1.0, 10.0)
        params, flags = np.zeros(common.SPLIT_PARAMS_SIZE), np.empty(2, np.uint8)
        node_args = node.kernel_args(np.arange(2))
        split.best_gain_per_feature(*args, params, np.empty(2), flags, 1.0, 1.0, None, *node_args)
        record = np.empty(common.SPLIT_RECORD_SIZE)
        split.find_best_split(*args, params, record, flags, 1.0, 1.0, None, *node_args)


@pytest.fixture(scope="session", autouse=True)
def warm_numba():
    """Compile (or load from the cache) every kernel once, before any timing."""
    _warm_kernels()


@pytest.fixture(scope="session")
def shared_datasets():
    """Path of ``shared/datasets`` beside the checkout; skips when absent."""
    candidates = []
    try:
        from dgbdt.datasets import find_shared_datasets

        found = find_shared_datasets()
        if found is not None:
            candidates.append(pathlib.Path(found))
    except ImportError:
        pass
    candidates += [REPO_ROOT.parent / "shared" / "datasets", pathlib.Path("/work/shared/datasets")]
    for path in candidates:
        if path.is_dir():
            return path
    pytest.skip("shared/datasets is not available beside this checkout")
