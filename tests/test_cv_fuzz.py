"""Fuzz tests of dgbdt.cv's fold specifications (issue 27).

Whatever ``folds`` / ``nfold`` are (lists or generators of pairs of int, float,
bool, negative, out-of-range, repeated or empty indices, things that are not
pairs, nfold values of every kind, scikit-learn and keyed splitters, a
splitter class), ``cv`` on a tiny Dataset either runs, and then every result
list holds one value per round and no NaN, with one Booster per fold, or
raises ValueError/TypeError naming the fold or the parameter: never another
exception, never NaN metrics.  (A non-iterable ``folds`` is LightGBM's
AttributeError.)

``DGBDT_FUZZ_EXAMPLES=500 pytest tests/test_cv_fuzz.py`` fuzzes longer.
"""

import os
import re

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold, ShuffleSplit

import dgbdt

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 40)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
N, ROUNDS = 24, 2
PARAMS = {"objective": "regression", "verbosity": -1, "num_leaves": 3, "min_data_in_leaf": 1}
#: what an error about the folds must name
NAMED = re.compile(r"folds|nfold|n_splits|train_idx|test_idx")

# ------------------------------------------------------------------ fold parts

in_range = st.lists(st.integers(0, N - 1), min_size=1, max_size=N)
part = st.one_of(
    in_range.map(np.array),  # repeated rows too
    in_range.map(list),
    st.tuples(in_range, st.sampled_from([np.int32, np.uint8, np.int64, np.uint64])).map(
        lambda t: np.array(t[0], t[1])
    ),
    st.lists(st.integers(-3, N + 3), max_size=8),  # negative, out of range, empty
    st.lists(st.one_of(st.floats(-1, N + 1), st.just(np.nan)), max_size=6).map(np.array),
    in_range.map(lambda r: np.array(r, np.float64)),  # whole floats
    st.lists(st.booleans(), min_size=N, max_size=N).map(np.array),  # a mask
    st.just([]),
    st.just(np.array([], np.int64)),
    in_range.map(lambda r: [r]),  # 2-D
    st.integers(-1, N),  # a scalar
    st.just("abc"),
)
good_fold = st.tuples(st.permutations(range(N)), st.integers(1, N - 1)).map(
    lambda t: (np.array(t[0][t[1] :]), t[0][: t[1]])  # (train, test): an array, a list
)
fold = st.one_of(
    good_fold,
    st.tuples(part, part),
    st.tuples(part, part).map(list),
    part,  # not a pair
    st.tuples(part, part, part),
    st.none(),
)


@st.composite
def fold_specs(draw):
    """(cv keyword arguments, the number of folds if it runs, or None)."""
    kinds = ["good", "list", "generator", "nfold", "splitter", "other"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("good", "list", "generator"):
        folds = draw(st.lists(good_fold if kind == "good" else fold, max_size=3))
        return {"folds": folds if kind == "list" else iter(folds)}, len(folds)
    if kind == "nfold":
        nfold = draw(
            st.one_of(
                st.integers(-2, N + 2),
                st.floats(-1, 9),
                st.booleans(),
                st.sampled_from([None, "3", np.int64(3)]),
            )
        )
        return {"nfold": nfold, "stratified": draw(st.booleans())}, nfold
    if kind == "splitter":
        k = draw(st.integers(1, N + 2))
        splitter = draw(
            st.sampled_from(
                [
                    KFold(max(k, 2), shuffle=True, random_state=k),
                    ShuffleSplit(min(k, 3), test_size=0.25, random_state=k),
                    dgbdt.KeyedKFold(min(max(k, 2), 4), seed=k),
                ]
            )
        )
        return {"folds": splitter}, splitter.get_n_splits()
    return {"folds": draw(st.sampled_from([KFold, "01", {0: 1}, 7, 1.5]))}, None


def _dataset():
    rng = np.random.RandomState(0)
    # labels 0/1: regression trains on them, and stratified folds apply
    return dgbdt.Dataset(rng.rand(N, 2), np.tile([0.0, 1.0], N // 2))


@FUZZ
@given(fold_specs())
def test_cv_runs_or_names_the_fold(spec):
    kwargs, n_folds = spec
    kwargs.setdefault("stratified", False)
    train_set = _dataset()
    try:
        results = dgbdt.cv(PARAMS, train_set, ROUNDS, return_cvbooster=True, **kwargs)
    except (ValueError, TypeError) as exc:
        assert NAMED.search(str(exc)), f"{type(exc).__name__}: {exc}"
        event(f"refused: {type(exc).__name__}")
        return
    except AttributeError as exc:  # LightGBM's error for folds that cannot be iterated
        assert isinstance(kwargs.get("folds"), (int, float)), exc
        assert "folds should be a generator or iterator" in str(exc)
        return
    event("ran")
    booster = results.pop("cvbooster")
    if isinstance(n_folds, int) and not isinstance(n_folds, bool):
        assert len(booster.boosters) == n_folds
    assert results and all(len(v) == ROUNDS for v in results.values())
    assert not np.isnan(np.concatenate(list(results.values()))).any(), results
