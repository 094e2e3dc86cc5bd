"""Category codes up to 2**31 - 1 (LightGBM's int32 categories): a split keeps
its categories as a sorted list beyond dgbdt.models.tree.BITSET_CATEGORY_LIMIT,
so its size follows the number of categories, not the largest code (a bitset
holding 2**31 - 2 is 67M words); the model predicts as the same data with the
codes renumbered 0..k-1, its JSON keeps it, and LightGBM's text, whose bitsets
are over raw values, refuses it by name."""

import json
import tracemalloc
import warnings

import numpy as np
import pytest

import dgbdt
from dgbdt.models.lightgbm_export import LIGHTGBM_CATEGORY_LIMIT
from dgbdt.models.tree import BITSET_CATEGORY_LIMIT, CATEGORY_LIST

HUGE = np.array([5, 7, 2**31 - 100, 2**31 - 2], np.int64)  # ascending, as 0..3
PARAMS = {
    "verbosity": -1,
    "objective": "regression",
    "num_leaves": 6,
    "min_data_in_leaf": 5,
    "min_data_per_group": 5,
    "cat_smooth": 1,
    "max_cat_to_onehot": 1,
}


def _data(codes, n=1200, seed=0):
    """Column 0 categorical (codes[i] with i in 0..3), column 1 numeric."""
    rng = np.random.default_rng(seed)
    which = rng.integers(0, len(codes), n)
    X = np.column_stack([np.asarray(codes, np.float64)[which], rng.normal(size=n)])
    y = np.array([0.0, 3.0, 1.0, -2.0])[which] + X[:, 1] + rng.normal(scale=0.1, size=n)
    return X, y


def _train(codes, rounds=5, **extra):
    X, y = _data(codes)
    ds = dgbdt.Dataset(X, y, feature_name=["store_id", "x"], categorical_feature=[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LightGBM's "sparse categories" warning
        return dgbdt.train({**PARAMS, **extra}, ds, rounds), X


@pytest.fixture(scope="module")
def pair():
    """(huge-code model, its X, 0..3-code model, its X); the huge-code one is
    trained under tracemalloc, its peak kept."""
    tracemalloc.start()
    try:
        huge, X_huge = _train(HUGE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    small, X_small = _train(np.arange(4))
    return huge, X_huge, small, X_small, peak


def test_huge_codes_train_in_modest_memory_and_a_small_model(pair):
    huge, _, _, _, peak = pair
    listed = [t for t in huge.trees if (t.default_left & CATEGORY_LIST).any()]
    assert listed  # splits that hold a code near 2**31 keep a list
    assert sum(t.cat_threshold.nbytes for t in huge.trees) < 1000
    assert len(huge.model_to_string(format="json")) < 1_000_000
    # a bitset of 2**31 - 2 alone takes 256 MiB
    assert peak < 64 * 2**20, peak


def test_huge_codes_predict_as_the_codes_renumbered(pair):
    huge, X_huge, small, X_small, _ = pair
    for a, b in zip(huge.trees, small.trees, strict=True):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.leaf_value, b.leaf_value)
        for k in np.flatnonzero(a.default_left & 4).tolist():
            np.testing.assert_array_equal(HUGE[b.left_categories(k)], a.left_categories(k))
    np.testing.assert_array_equal(huge.predict(X_huge), small.predict(X_small))
    np.testing.assert_array_equal(
        huge.predict(X_huge, pred_contrib=True), small.predict(X_small, pred_contrib=True)
    )
    # unseen codes (near 2**31 or not, and beyond int32) go where an unseen one does
    for unseen in (2**31 - 1, 2**31 - 3, 6, 2**31, -1, np.nan):
        got, want = X_huge[:20].copy(), X_small[:20].copy()
        got[:, 0], want[:, 0] = unseen, 9
        np.testing.assert_array_equal(huge.predict(got), small.predict(want))


def test_huge_codes_in_a_validation_set_score_as_renumbered():
    # a validation set is scored on its bins (the binned decision of a list)
    def scores(codes):
        X, y = _data(codes)
        Xv, yv = _data(codes, n=400, seed=1)
        ds = dgbdt.Dataset(X, y, categorical_feature=[0])
        seen = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dgbdt.train(
                PARAMS,
                ds,
                5,
                valid_sets=[ds.create_valid(Xv, yv)],
                callbacks=[dgbdt.record_evaluation(seen)],
            )
        return seen["valid_0"]["l2"]

    assert scores(HUGE) == scores(np.arange(4))


def test_lightgbm_text_export_refuses_huge_codes_by_feature(pair):
    huge = pair[0]
    with pytest.raises(ValueError, match=r"feature 'store_id'.*category 2147483(548|646)\b.*JSON"):
        huge.model_to_string(format="lightgbm")
    # the LightGBM JSON dump has no bitsets: it lists them
    dump = json.dumps(huge.dump_model())
    assert "2147483646" in dump


def test_json_round_trip_keeps_huge_codes(pair, tmp_path):
    huge, X_huge = pair[0], pair[1]
    text = huge.model_to_string(format="json")
    assert json.loads(text)["version"] == 5
    loaded = dgbdt.Booster(model_str=text)
    np.testing.assert_array_equal(loaded.predict(X_huge), huge.predict(X_huge))
    assert loaded.model_to_string(format="json") == text
    path = tmp_path / "model.json"
    huge.save_model(path)
    np.testing.assert_array_equal(
        dgbdt.Booster(model_file=path).predict(X_huge), huge.predict(X_huge)
    )


def test_small_codes_keep_lightgbm_bitsets(pair):
    small = pair[2]
    assert not any((t.default_left & CATEGORY_LIST).any() for t in small.trees)
    assert json.loads(small.model_to_string(format="json"))["version"] == 3


def test_a_list_below_lightgbm_limit_is_exported_as_its_bitset(pair):
    lightgbm = pytest.importorskip("lightgbm")
    codes = np.array([5, 7, BITSET_CATEGORY_LIMIT + 3, LIGHTGBM_CATEGORY_LIMIT - 1])
    model, X = _train(codes)
    assert any((t.default_left & CATEGORY_LIST).any() for t in model.trees)
    text = model.model_to_string(format="lightgbm")
    theirs = lightgbm.Booster(model_str=text)
    np.testing.assert_allclose(theirs.predict(X), model.predict(X), rtol=1e-12)
    # read back, the bitsets are LightGBM's own: written again unchanged
    assert dgbdt.Booster(model_str=text).model_to_string(format="lightgbm") == text


def _doc_with_a_list(pair):
    doc = json.loads(pair[0].model_to_string(format="json"))
    i = next(i for i, t in enumerate(doc["trees"]) if any(d & 8 for d in t["default_left"]))
    return doc, doc["trees"][i], i


def test_a_list_in_an_older_format_version_is_refused(pair):
    doc, _, i = _doc_with_a_list(pair)
    doc["version"] = 4
    with pytest.raises(
        ValueError, match=rf"tree {i}: field 'default_left'.*needs format version 5"
    ):
        dgbdt.Booster(model_str=json.dumps(doc))


def test_an_unsorted_category_list_is_refused(pair):
    doc, tree, i = _doc_with_a_list(pair)
    k = next(k for k, d in enumerate(tree["default_left"]) if d & 8)
    j = int(tree["threshold"][k])
    lo, hi = tree["cat_boundaries"][j], tree["cat_boundaries"][j + 1]
    tree["cat_threshold"][lo:hi] = [2**31 - 2] * (hi - lo)  # not increasing
    if hi - lo == 1:
        tree["cat_threshold"][lo] = 2**31  # beyond int32
    with pytest.raises(ValueError, match=rf"tree {i}: the categories of node {k}"):
        dgbdt.Booster(model_str=json.dumps(doc))


def test_a_list_bit_on_a_numeric_node_is_refused(pair):
    doc, tree, i = _doc_with_a_list(pair)
    k = next(k for k, d in enumerate(tree["default_left"]) if not d & 4)
    tree["default_left"][k] |= 8
    with pytest.raises(ValueError, match=rf"tree {i}: field 'default_left'\[{k}\] lists"):
        dgbdt.Booster(model_str=json.dumps(doc))
