"""dgbdt.cv's checks of its folds and nfold (issue 27, items 5 and 12).

LightGBM 4.7's cv reads a boolean mask as rows 0 and 1, truncates float
indices, fails an internal check (or, in dgbdt before, gave NaN metrics) on an
empty part, and answers nfold=0/1 and a list of index arrays with numpy's or
Python's messages.  dgbdt refuses each with a ValueError/TypeError naming the
fold (``folds[k]: train_idx``) or the parameter.
"""

import numpy as np
import pytest
from sklearn.model_selection import KFold

import dgbdt

PARAMS = {"objective": "regression", "verbosity": -1, "num_leaves": 4, "min_data_in_leaf": 2}
N = 30
ROWS = np.arange(N)


def _cv(**kwargs):
    rng = np.random.RandomState(0)
    train_set = dgbdt.Dataset(rng.rand(N, 2), rng.rand(N))
    return dgbdt.cv(PARAMS, train_set, 2, stratified=False, **kwargs)


@pytest.mark.parametrize(
    "fold, error, message",
    [
        ((ROWS[:20], ROWS[:0]), ValueError, r"folds\[0\]: test_idx is empty"),
        ((ROWS[:20], []), ValueError, r"folds\[0\]: test_idx is empty"),
        (([], ROWS), ValueError, r"folds\[0\]: train_idx is empty"),
        ((ROWS < 20, ROWS >= 20), TypeError, r"folds\[0\]: train_idx is a boolean mask"),
        ((ROWS[:20], ROWS[20:] + 0.5), TypeError, r"folds\[0\]: test_idx must hold integer"),
        ((ROWS[:20] * 1.0, ROWS[20:]), TypeError, r"train_idx .* float64; cast whole"),
        ((ROWS[:20], np.array(["a"])), TypeError, r"test_idx must hold integer row indices"),
        ((ROWS[:20], [20, N]), ValueError, r"test_idx holds row 30, out of range: .* 0\.\.29"),
        (([-1, 3], ROWS[20:]), ValueError, r"train_idx holds row -1, out of range"),
        ((ROWS[:20], [[20, 21]]), ValueError, r"test_idx must be a 1-D array .* shape \(1, 2\)"),
        ((ROWS[:20], [[20], [21, 22]]), ValueError, r"test_idx is list .*not an array"),
    ],
)
def test_a_bad_fold_is_refused_naming_it(fold, error, message):
    good = (ROWS[10:], ROWS[:10])
    with pytest.raises(error, match=message.replace(r"folds\[0\]", r"folds\[1\]")):
        _cv(folds=[good, fold])
    with pytest.raises(error, match=message):
        _cv(folds=iter([fold]))  # a generator of folds, as LightGBM takes


@pytest.mark.parametrize(
    "nfold, error, message",
    [
        (1, ValueError, "nfold must be >= 2, got 1"),
        (0, ValueError, "nfold must be >= 2, got 0"),
        (-3, ValueError, "nfold must be >= 2, got -3"),
        (2.5, TypeError, "nfold must be an integer >= 2, got 2.5"),
        (True, TypeError, "nfold must be an integer >= 2, got True"),
        ("3", TypeError, "nfold must be an integer >= 2, got '3'"),
    ],
)
@pytest.mark.parametrize("stratified", [False, True])
def test_nfold_below_two_or_not_an_integer(nfold, error, message, stratified):
    # (LightGBM: numpy's "number sections must be larger than 0." and the like)
    rng = np.random.RandomState(0)
    train_set = dgbdt.Dataset(rng.rand(N, 2), rng.randint(0, 2, N))
    with pytest.raises(error, match=message):
        dgbdt.cv(PARAMS, train_set, 2, nfold=nfold, stratified=stratified)


def test_nfold_is_not_read_when_folds_are_given():
    results = _cv(folds=[(ROWS[10:], ROWS[:10])], nfold=1)  # LightGBM ignores nfold too
    assert len(results["valid l2-mean"]) == 2


def test_folds_that_are_not_pairs_name_the_parameter():
    # LightGBM: "too many values to unpack (expected 2)"
    with pytest.raises(ValueError, match=r"folds\[0\] is an array of shape \(20,\), not a "):
        _cv(folds=[ROWS[:20], ROWS[20:]])
    with pytest.raises(ValueError, match=r"folds\[0\] is int 3, not a \(train_idx, test_idx\)"):
        _cv(folds=[3])
    # an array of two indices unpacks into two scalars: not arrays of rows
    with pytest.raises(
        ValueError, match=r"folds\[0\]: train_idx must be a 1-D array .* the scalar int"
    ):
        _cv(folds=[np.array([1, 2])])
    with pytest.raises(ValueError, match="folds holds no fold"):
        _cv(folds=[])  # LightGBM returns {}
    with pytest.raises(TypeError, match="folds is the string '01': folds should be"):
        _cv(folds="01")  # (str has a split method, but is no splitter)
    with pytest.raises(TypeError, match="folds is the class KFold: give an instance"):
        _cv(folds=KFold)


def test_a_splitter_and_good_folds_still_run():
    a = _cv(folds=KFold(3, shuffle=True, random_state=1))
    folds = KFold(3, shuffle=True, random_state=1).split(np.empty(N))
    b = _cv(folds=[(list(tr), te.astype(np.uint32)) for tr, te in folds])
    assert a == b and len(a["valid l2-mean"]) == 2
    # repeated rows and overlapping parts are the user's choice (as in LightGBM)
    c = _cv(folds=[(np.r_[ROWS[:20], ROWS[:5]], ROWS[15:])])
    assert not np.isnan(c["valid l2-mean"]).any()


def test_a_polars_lazy_frame_must_be_collected():
    pl = pytest.importorskip("polars")
    rng = np.random.RandomState(0)
    lazy = pl.DataFrame(rng.rand(N, 2), schema=["a", "b"]).lazy()
    with pytest.raises(TypeError, match=r"LazyFrame: collect it first \(data\.collect\(\)\)"):
        dgbdt.Dataset(lazy, rng.rand(N))
    with pytest.raises(TypeError, match=r"has type 'LazyFrame'.*collect it first, \.collect"):
        dgbdt.cv(PARAMS, lazy, 2)
    # collected, it trains
    results = dgbdt.cv(PARAMS, dgbdt.Dataset(lazy.collect(), rng.rand(N)), 2, stratified=False)
    assert len(results["valid l2-mean"]) == 2
