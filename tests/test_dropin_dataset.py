"""LightGBM drop-in behaviour of the Dataset (issue 28): row-batch Sequences and
lists of arrays, fields by name, feature_num_bin, get_params, create_valid's
params, categorical_feature forms, integer binary labels, LightGBM's log lines."""

from __future__ import annotations

import numpy as np
import pytest

import dgbdt
from dgbdt import DGBDTError

QUIET = {"verbose": -1}


class _Rows(dgbdt.Sequence):
    def __init__(self, array, batch_size):
        self.array, self.batch_size = array, batch_size

    def __getitem__(self, idx):
        return self.array[idx]

    def __len__(self):
        return len(self.array)


def _data(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[rng.random(n) < 0.1, 1] = np.nan
    X[:, 2] = np.where(rng.random(n) < 0.5, 0.0, X[:, 2])
    return X, X[:, 0] + 0.3 * rng.random(n)


@pytest.mark.parametrize("sample_cnt", [40, 200000])
def test_sequences_and_array_lists_give_the_array_model(sample_cnt):
    """LightGBM: Dataset(list of Sequences / of arrays) bins as the one matrix
    (same bin sample), so the model is the array's."""
    X, y = _data()
    params = {**QUIET, "bin_construct_sample_cnt": sample_cnt, "num_leaves": 7}
    want = dgbdt.train(params, dgbdt.Dataset(X, y), 5).model_to_string()
    for data in (
        _Rows(X, 7),
        [_Rows(X[:100], None), _Rows(X[100:], 64)],
        [X[:50], np.asfortranarray(X[50:210]), X[210:]],
    ):
        assert dgbdt.train(params, dgbdt.Dataset(data, y), 5).model_to_string() == want


def test_sequence_get_data_and_subset_rows():
    """LightGBM: get_data() is the Sequence list as given; a subset's is its rows."""
    X, y = _data(n=40)
    seqs = [_Rows(X[:15], 4), _Rows(X[15:], 6)]
    ds = dgbdt.Dataset(seqs, y, free_raw_data=False).construct()
    assert ds.get_data() is seqs
    rows = [30, 2, 16, 14]
    sub = ds.subset(rows).construct()
    np.testing.assert_array_equal(sub.get_data(), X[sorted(rows)])


def test_sequence_parts_of_other_widths_are_refused():
    """A list of parts must share one width (LightGBM trusts it; dgbdt checks)."""
    with pytest.raises(ValueError, match="different numbers of columns"):
        dgbdt.Dataset([np.ones((3, 2)), np.ones((3, 3))], np.ones(6))


def test_create_valid_takes_params():
    """LightGBM: Dataset.create_valid(..., params=) gives the validation set its params."""
    X, y = _data()
    train = dgbdt.Dataset(X, y, params={"max_bin": 20})
    valid = train.create_valid(X[:50], label=y[:50], params={"max_bin": 20, "verbose": -1})
    assert valid.params == {"max_bin": 20, "verbose": -1}
    assert valid.reference is train


def test_set_field_and_get_field_forms():
    """LightGBM: get_field gives label/weight float32, group as boundaries (int32),
    position ids by first appearance (int32); set_field(name, None) removes it;
    both refuse an unconstructed Dataset."""
    X = np.random.default_rng(1).random((10, 2))
    ds = dgbdt.Dataset(X, np.arange(10.0))
    with pytest.raises(DGBDTError, match="Cannot get label before construct Dataset"):
        ds.get_field("label")
    ds.construct()
    assert ds.get_field("label").dtype == np.float32
    assert ds.set_field("group", [4, 6]) is ds
    np.testing.assert_array_equal(ds.get_field("group"), np.array([0, 4, 10], np.int32))
    ds.set_field("position", [100, 20, 100, 10, 30, 10, 30, 10, 30, 30])
    np.testing.assert_array_equal(
        ds.get_field("position"), np.array([0, 1, 0, 2, 3, 2, 3, 2, 3, 3], np.int32)
    )
    ds.set_field("weight", np.ones(10))
    assert ds.get_field("weight").dtype == np.float32
    for name in ("group", "position", "weight"):
        ds.set_field(name, None)
        assert ds.get_field(name) is None
    with pytest.raises(DGBDTError, match="'bogus'"):
        ds.get_field("bogus")


def test_get_field_init_score_multiclass_is_rows_by_classes():
    """LightGBM: get_field('init_score') of 3 classes is (n_samples, 3), its
    flat class-major layout read column-major."""
    X = np.random.default_rng(2).random((10, 2))
    scores = np.arange(30.0).reshape(10, 3)
    ds = dgbdt.Dataset(X, init_score=scores.ravel(order="F")).construct()
    np.testing.assert_array_equal(ds.get_field("init_score"), scores)


def test_categorical_feature_one_int_in_params_and_the_attribute_as_a_list():
    """LightGBM: params categorical_feature=0 (one int) is column 0; the
    Dataset's categorical_feature reads back as a list."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 5, 400), rng.random(400)]).astype(float)
    y = (X[:, 0] % 2) + 0.1 * rng.random(400)
    one = dgbdt.train({**QUIET, "categorical_feature": 0}, dgbdt.Dataset(X, y), 3)
    ds = dgbdt.Dataset(X, y, categorical_feature=[0])
    listed = dgbdt.train(QUIET, ds, 3)
    assert ds.categorical_feature == [0]
    assert one.dump_model()["tree_info"] == listed.dump_model()["tree_info"]
    assert one.dump_model()["tree_info"][0]["tree_structure"]["decision_type"] == "=="


def test_feature_num_bin_matches_lightgbm():
    """LightGBM: feature_num_bin(index or name) counts a feature's bins, 0 for an
    unused (constant) one, and names the valid range for a bad index."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.random(100), [1, 2] * 50, [1, 2] * 49 + [np.nan] * 2, np.zeros(100)])
    ours = dgbdt.Dataset(X, feature_name=["a", "b", "c", "d"]).construct()
    theirs = lgb.Dataset(X, params={"verbose": -1}).construct()
    assert [ours.feature_num_bin(i) for i in range(4)] == [
        theirs.feature_num_bin(i) for i in range(4)
    ]
    assert ours.feature_num_bin("c") == theirs.feature_num_bin(2)
    with pytest.raises(DGBDTError, match=r"valid feature indices are \[0, 3\]"):
        ours.feature_num_bin(4)


def test_get_params_keeps_dataset_params_and_follows_the_reference():
    """LightGBM: get_params() holds the Dataset params only; a validation set
    binned with a reference takes the reference's."""
    X, y = _data()
    train = dgbdt.Dataset(X, y, params={"max_bin": 100, "learning_rate": 0.5}).construct()
    assert train.get_params() == {"max_bin": 100}
    valid = dgbdt.Dataset(X, y, reference=train).construct()
    assert valid.get_params() == {"max_bin": 100}


def test_set_feature_name_renames_the_features():
    """LightGBM: Dataset.set_feature_name renames the features a model gets."""
    X, y = _data()
    ds = dgbdt.Dataset(X, y)
    ds.set_feature_name([f"g{i}" for i in range(5)])
    assert dgbdt.train(QUIET, ds, 2).feature_name() == [f"g{i}" for i in range(5)]


def test_integer_binary_labels_above_zero_are_the_positive_class():
    """LightGBM: objective binary takes any label > 0 as positive (0/10 trains
    as 0/1); dgbdt still refuses fractions such as 0.5."""
    X, y = _data()
    y01 = (y > np.median(y)).astype(float)
    params = {**QUIET, "objective": "binary"}
    want = dgbdt.train(params, dgbdt.Dataset(X, y01), 3).predict(X)
    got = dgbdt.train(params, dgbdt.Dataset(X, 10 * y01), 3).predict(X)
    np.testing.assert_array_equal(got, want)
    y01[3] = 0.5
    with pytest.raises(ValueError, match="row 3 has label 0.5, a fraction"):
        dgbdt.train(params, dgbdt.Dataset(X, y01), 1)


def test_no_meaningful_features_line_through_the_logger(monkeypatch):
    """LightGBM's exact warning line when no feature can split (verbosity >= 0)."""
    import dgbdt.log

    lines = []

    class Logger:
        def info(self, msg):
            lines.append(msg)

        def warning(self, msg):
            lines.append(msg)

    monkeypatch.setattr(dgbdt.log, "_LOGGER", Logger())
    monkeypatch.setattr(dgbdt.log, "_INFO_METHOD", "info")
    monkeypatch.setattr(dgbdt.log, "_WARNING_METHOD", "warning")
    dgbdt.Dataset(np.zeros((100, 1)), params={"verbose": 0}).construct()
    dgbdt.Dataset(np.zeros((100, 1)), params={"verbose": -1}).construct()
    assert lines == [
        "[LightGBM] [Warning] There are no meaningful features which satisfy the provided "
        "configuration. Decreasing Dataset parameters min_data_in_bin or min_data_in_leaf "
        "and re-constructing Dataset might resolve this warning."
    ]
