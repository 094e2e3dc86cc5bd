"""LightGBM drop-in behaviour of the Dataset (issue 28, part 2): add_features_from,
spaces in feature names, a subset of a binary Dataset file with an init model,
and the positional order of the Dataset's public signatures."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dgbdt
from dgbdt import DGBDTError
from dgbdt import log as dgbdt_log

QUIET = {"verbose": -1}


class _Log:
    def __init__(self):
        self.infos, self.warnings = [], []

    def info(self, msg):
        self.infos.append(msg)

    def warning(self, msg):
        self.warnings.append(msg)


@pytest.fixture
def logged():
    """Every message dgbdt logs, through register_logger; the default restored after."""
    old = (dgbdt_log._LOGGER, dgbdt_log._INFO_METHOD, dgbdt_log._WARNING_METHOD)
    log = _Log()
    dgbdt.register_logger(log)
    yield log
    dgbdt.register_logger(*old)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    X[:, [1, 3]] = 0
    X[rng.random(n) < 0.1, 2] = np.nan
    return X, X[:, 0] + rng.uniform(size=n) * 0.3


# -- add_features_from ------------------------------------------------------------
def test_add_features_needs_both_constructed():
    """LightGBM: add_features_from of an unconstructed Dataset (either side) is a
    ValueError naming the need."""
    X, _ = _data()
    built = dgbdt.Dataset(X[:, :2]).construct()
    for a, b in ((dgbdt.Dataset(X[:, :2]), built), (built, dgbdt.Dataset(X[:, 2:]))):
        with pytest.raises(ValueError, match="Both source and target Datasets must be constructed"):
            a.add_features_from(b)


def test_add_features_needs_as_many_rows():
    """LightGBM: another row count is a LightGBMError with its C++ words."""
    X, _ = _data()
    a = dgbdt.Dataset(X[:, :2]).construct()
    b = dgbdt.Dataset(X[:10, 2:]).construct()
    with pytest.raises(
        DGBDTError, match="Cannot add features from other Dataset with a different number of rows"
    ):
        a.add_features_from(b)


@pytest.mark.parametrize("j", [1, 2, 3, 4])
def test_add_features_trains_the_joined_matrix_model(j):
    """LightGBM (test_add_features_same_booster_behaviour): the joined Dataset
    trains the model of a Dataset of the joined columns, names included."""
    X, y = _data()
    names = [f"col_{i}" for i in range(5)]
    a = dgbdt.Dataset(X[:, :j], feature_name=names[:j], params=QUIET).construct()
    b = dgbdt.Dataset(X[:, j:], feature_name=names[j:], params=QUIET).construct()
    assert a.add_features_from(b) is a
    assert a.num_feature() == 5 and a.feature_name == names
    whole = dgbdt.Dataset(X, feature_name=names, params=QUIET).construct()
    a.set_label(y)
    whole.set_label(y)
    joined = dgbdt.train(QUIET, a, 10)
    expected = dgbdt.train(QUIET, whole, 10)
    assert joined.model_to_string() == expected.model_to_string()


def test_add_features_keeps_categorical_and_wide_bins():
    """LightGBM keeps each side's bins (categorical ones stay categorical): the
    model of the joined columns, here a categorical feature and a sparse
    matrix whose empty columns dgbdt does not bin."""
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(1)
    n = 300
    S = sparse.random(n, 400, density=0.01, random_state=0, format="csr")
    C = rng.integers(0, 6, size=(n, 1)).astype(float)
    y = S[:, :50].sum(axis=1).A.ravel() + (C[:, 0] == 3) + rng.normal(size=n) * 0.1
    p = {**QUIET, "min_data_in_leaf": 5}
    a = dgbdt.Dataset(S, y, params=p).construct()
    assert a.used_features is not None  # (the wide case)
    a.add_features_from(dgbdt.Dataset(C, params=p, categorical_feature=[0]).construct())
    full = sparse.hstack([S, sparse.csr_matrix(C)]).tocsr()
    expected = dgbdt.train(p, dgbdt.Dataset(full, y, params=p, categorical_feature=[400]), 10)
    joined = dgbdt.train(p, a, 10)
    assert "cat_threshold" in joined.model_to_string()
    np.testing.assert_array_equal(joined.predict(full), expected.predict(full))


def test_add_features_names_as_lightgbm(logged):
    """LightGBM: a name the Dataset has already becomes D2_name (D3_, ...), with
    its C++ warning; categorical_feature is reset with a Python warning."""
    lgb = pytest.importorskip("lightgbm")
    X, _ = _data()
    got = dgbdt.Dataset(X[:, :2], categorical_feature=[]).construct()
    want = lgb.Dataset(X[:, :2], params=QUIET).construct()
    for k in (2, 3):
        got.add_features_from(dgbdt.Dataset(X[:, :2]).construct())
        want.add_features_from(lgb.Dataset(X[:, :2], params=QUIET).construct())
        assert got.feature_name == want.feature_name == got.get_feature_name()
        assert got.feature_name[-1] == f"D{k}_Column_1"
    assert got.categorical_feature == "auto"
    assert any(
        "[LightGBM] [Warning] Find the same feature name (Column_0) in "
        "Dataset::AddFeaturesFrom, change its name to (D2_Column_0)" in m
        for m in logged.infos
    )
    assert any(m.startswith("Resetting categorical features.") for m in logged.warnings)


def test_add_features_joins_raw_data_as_lightgbm(logged):
    """LightGBM: the raw data are joined in this Dataset's kind (array, sparse
    matrix, DataFrame with renumbered columns); dropped with a warning when
    either was freed."""
    pd = pytest.importorskip("pandas")
    sparse = pytest.importorskip("scipy.sparse")
    X, _ = _data(n=50)
    kinds = [X, sparse.csr_matrix(X), pd.DataFrame(X)]
    for first in kinds:
        a = dgbdt.Dataset(first, free_raw_data=False).construct()
        kind = type(a.get_data())
        for idx, other in enumerate(kinds, 2):
            a.add_features_from(dgbdt.Dataset(other, free_raw_data=False).construct())
            assert isinstance(a.get_data(), kind) and a.data.shape == (50, 5 * idx)
        if isinstance(first, pd.DataFrame):
            assert list(a.get_data().columns) == list(range(20))
    a = dgbdt.Dataset(X, free_raw_data=False).construct()
    a.add_features_from(dgbdt.Dataset(X).construct())  # (its raw data freed)
    assert a.data is None
    assert any("Cannot add features from NoneType type of raw data" in m for m in logged.warnings)


def test_add_features_with_no_informative_feature_first():
    """LightGBM: a Dataset whose features cannot split takes the other's."""
    X, y = _data()
    a = dgbdt.Dataset(np.zeros((len(X), 1)), y, params=QUIET).construct()
    a.add_features_from(dgbdt.Dataset(X, params=QUIET).construct())
    assert (a.num_feature(), a.num_data()) == (6, len(X))
    assert dgbdt.train(QUIET, a, 3).num_trees() == 3


# -- feature names with spaces ----------------------------------------------------
def test_spaces_in_feature_names_become_underscores(logged):
    """LightGBM (test_engine.py::test_feature_name): spaces in feature names
    become "_" with its C++ warning, however the names are given; a
    DataFrame with the original columns still predicts."""
    lgb = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    X, y = _data()
    spaced = [f"f {i}" for i in range(5)]
    want = lgb.Dataset(X, y, feature_name=spaced, params=QUIET).construct().get_feature_name()
    assert want == [f"f_{i}" for i in range(5)]
    ds = dgbdt.Dataset(X, y, feature_name=spaced)
    assert ds.get_feature_name() == want
    assert "[LightGBM] [Warning] Found whitespace in feature_names, replace with underlines" in (
        logged.infos
    )
    ds.set_feature_name([f"g {i}" for i in range(5)])
    assert ds.feature_name == [f"g_{i}" for i in range(5)]
    frame = pd.DataFrame(X, columns=spaced)
    booster = dgbdt.train(QUIET, dgbdt.Dataset(frame, y), 3)
    assert booster.feature_name() == want
    np.testing.assert_array_equal(booster.predict(frame), booster.predict(X))
    with pytest.raises(ValueError, match="f_1"):  # (names colliding once replaced)
        dgbdt.Dataset(X[:, :2], feature_name=["f 1", "f_1"])


# -- a subset of a binary Dataset file, with an init model ---------------------------
def test_subset_of_binary_file_with_init_model(tmp_path):
    """LightGBM's get_data of a Dataset loaded from a binary file (and of its
    subsets) is the file's path.  LightGBM cannot continue an init model on
    such a subset ("Unknown format of training data": it predicts from raw
    data); dgbdt replays the trees on the bins, which are the init model's, so
    it trains the model the raw data would give (a departure)."""
    rng = np.random.default_rng(0)
    data, y = rng.uniform(size=(50, 2)), np.array([1] * 25 + [0] * 25)
    params = {"objective": "binary", **QUIET, "min_data_in_leaf": 3}
    first, second = rng.choice(50, 30, replace=False), rng.choice(50, 20, replace=False)
    path = str(tmp_path / "train.bin")
    dgbdt.Dataset(data, y, free_raw_data=False).save_binary(path)
    from_file = dgbdt.Dataset(path, free_raw_data=False)
    init = dgbdt.train(params, from_file.subset(first), 5, keep_training_booster=True)
    later = from_file.subset(second)
    got = dgbdt.train(params, later, 5, init_model=init)
    assert from_file.get_data() == path and later.get_data() == path
    raw = dgbdt.Dataset(data, y, free_raw_data=False)
    init_raw = dgbdt.train(params, raw.subset(first), 5, keep_training_booster=True)
    expected = dgbdt.train(params, raw.subset(second), 5, init_model=init_raw)
    assert got.model_to_string() == expected.model_to_string()


def test_init_model_of_other_bins_without_raw_data():
    """LightGBM: an init model on a Dataset without raw data is "Unknown format
    of training data"; dgbdt says so where it cannot replay the trees on the
    bins (the init model was binned otherwise)."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(100, 2)), rng.uniform(size=100)
    init = dgbdt.train(QUIET, dgbdt.Dataset(X * 2, y), 3)
    with pytest.raises(DGBDTError, match="Unknown format of training data.*free_raw_data"):
        dgbdt.train(QUIET, dgbdt.Dataset(X, y).construct(), 3, init_model=init)


# -- positional order --------------------------------------------------------------
def _positional(function):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds]


def test_dataset_positional_parameters_are_lightgbms():
    """LightGBM users pass Dataset arguments by position
    (``Dataset(X, y, reference)``): each of dgbdt's positional parameters is
    LightGBM's at that place (dgbdt's own ones come after, or keyword only)."""
    lgb = pytest.importorskip("lightgbm")
    names = ["__init__", "create_valid", "subset", "construct", "save_binary"]
    names += [n for n in dir(lgb.Dataset) if n.startswith(("set_", "get_"))]
    checked = 0
    for name in names:
        ours = getattr(dgbdt.Dataset, name, None)
        if ours is None:
            continue  # (not in dgbdt: set_reference, get_ref_chain, ...)
        theirs = _positional(getattr(lgb.Dataset, name))
        assert _positional(ours)[: len(theirs)] == theirs, name
        checked += 1
    assert checked >= 20
    ds = dgbdt.Dataset(np.zeros((4, 1)), [0, 1, 0, 1], None, [1, 2, 1, 2])
    assert ds.get_weight().tolist() == [1, 2, 1, 2]


def test_set_categorical_feature_as_lightgbm(logged):
    """LightGBM: set_categorical_feature on a constructed Dataset bins it again
    (a list replacing another is warned); with the raw data freed it is a
    LightGBMError."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(200, 2)).astype(float)
    y = (X[:, 0] == 2) + rng.normal(size=200) * 0.1
    ds = dgbdt.Dataset(X, y, free_raw_data=False, categorical_feature=[1]).construct()
    assert ds.set_categorical_feature("auto") is ds and ds.categorical_feature == [1]
    ds.set_categorical_feature([0])
    assert "categorical_feature in Dataset is overridden.\nNew categorical_feature is [0]" in (
        logged.warnings
    )
    assert dgbdt.train(QUIET, ds, 2).bin_mapper.is_categorical.tolist() == [True, False]
    freed = dgbdt.Dataset(X, y).construct()
    with pytest.raises(DGBDTError, match="Cannot set categorical feature after freed raw data"):
        freed.set_categorical_feature([0])
