"""Data as wide as hashed text (issue 25): a sparse matrix of 2**24 columns
costs its non-zeros and its used columns, not its width.

A Dataset bins only the columns holding values (Dataset.used_features); the
model still speaks of the original columns: the same trees as the data
compacted to its used columns (split features renumbered), full-width
feature importance, names, predictions, LightGBM export, SHAP.  Structure
is asserted, never timings.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import dgbdt
from dgbdt.data.binning import WideBinMapper
from dgbdt.models.json_file import ModelFormatError

WIDTH = 1 << 24
PARAMS = {"objective": "binary", "num_leaves": 15, "verbosity": -1, "num_threads": 1}


def compact_data(n=2000, k=300, nnz=20000, seed=0):
    """(X csr of k columns, y): a planted signal on the first columns."""
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, k, nnz)
    X = sp.csr_matrix((rng.random(nnz) + 0.01, (rows, cols)), shape=(n, k))
    X.sum_duplicates()
    signal = np.asarray(X[:, :8].sum(axis=1)).ravel()
    y = (signal + 0.2 * rng.normal(size=n) > np.median(signal)).astype(float)
    return X, y


def widened(X, width=WIDTH, seed=1):
    """X with its columns scattered (sorted) over ``width`` columns; the columns."""
    used = np.sort(np.random.default_rng(seed).choice(width, X.shape[1], replace=False))
    wide = sp.csr_matrix((X.data, used[X.indices], X.indptr), shape=(X.shape[0], width))
    return wide, used


def assert_same_model(compact, wide, used):
    """``wide`` is ``compact`` with split features renumbered by ``used``."""
    assert len(compact.trees) == len(wide.trees)
    for a, b in zip(compact.trees, wide.trees, strict=True):
        m = a.n_leaves - 1
        assert np.array_equal(used[a.split_feature[:m]], b.split_feature[:m])
        assert np.array_equal(a.threshold, b.threshold)
        assert np.array_equal(a.leaf_value, b.leaf_value)


@pytest.fixture(scope="module")
def trained():
    X, y = compact_data()
    Xw, used = widened(X)
    compact = dgbdt.train(PARAMS, dgbdt.Dataset(X, y), 8)
    ds = dgbdt.Dataset(Xw, y)
    wide = dgbdt.train(PARAMS, ds, 8)
    return X, Xw, y, used, compact, ds, wide


def test_wide_csr_trains_the_compacted_model(trained):
    X, Xw, y, used, compact, ds, wide = trained
    assert_same_model(compact, wide, used)
    # Only the used columns were binned, and nothing per column of the width kept
    assert np.array_equal(ds.used_features, used)
    assert ds.bin_mapper.n_features == len(used) and ds.store.n_features == len(used)
    assert not ds.store.plain and np.array_equal(ds.store.columns, used)
    assert ds.num_feature() == WIDTH and len(ds.get_feature_name()) == WIDTH
    assert ds.feature_name[int(used[5])] == f"Column_{int(used[5])}"


def test_wide_model_speaks_of_original_columns(trained):
    X, Xw, y, used, compact, ds, wide = trained
    assert wide.num_feature() == WIDTH
    assert wide.feature_name()[-1] == f"Column_{WIDTH - 1}"
    for kind in ("split", "gain"):
        imp = wide.feature_importance(kind)
        assert imp.shape == (WIDTH,)
        np.testing.assert_array_equal(imp[used], compact.feature_importance(kind))
        assert imp.sum() == compact.feature_importance(kind).sum()
    mapper = wide.bin_mapper
    assert isinstance(mapper, WideBinMapper) and mapper.n_features == WIDTH
    f = int(wide.trees[0].split_feature[0])
    assert mapper.upper_bounds[f] is ds.bin_mapper.upper_bounds[int(np.searchsorted(used, f))]
    assert len(mapper.upper_bounds[f + 1 if f + 1 not in used else f - 1]) == 1  # empty: one bin


@pytest.mark.parametrize("free_raw_data", [False, True])
def test_training_continues_from_a_wide_model(trained, tmp_path, free_raw_data):
    """init_model= a wide model on a wide Dataset: the compacted model's
    continuation, still a wide model (its bins kept; replayed on the bins when
    the raw data was freed)."""
    X, Xw, y, used, compact, ds, wide = trained
    compact_more = dgbdt.train(PARAMS, dgbdt.Dataset(X, y), 4, init_model=compact)
    data = dgbdt.Dataset(Xw, y, free_raw_data=free_raw_data)
    if free_raw_data:  # a training frees the raw data: init_model is replayed on bins
        dgbdt.train(PARAMS, data, 1)
        assert data.get_data() is None
    more = dgbdt.train(PARAMS, data, 4, init_model=wide)
    assert_same_model(compact_more, more, used)
    assert isinstance(more.bin_mapper, WideBinMapper)
    path = tmp_path / "more.json"
    more.save_model(path)
    assert json.loads(path.read_text())["version"] == 4
    assert path.stat().st_size < 200_000  # the used columns only


def test_predict_at_full_width(trained):
    X, Xw, y, used, compact, ds, wide = trained
    want = compact.predict(X[:300], raw_score=True)
    np.testing.assert_allclose(wide.predict(Xw[:300], raw_score=True), want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        wide.predict(Xw[:300], pred_leaf=True), compact.predict(X[:300], pred_leaf=True)
    )
    with pytest.raises(ValueError, match="features"):
        wide.predict(X[:10])  # the compacted width is not the model's


def test_validation_set_and_early_stopping(trained):
    X, Xw, y, used, compact, ds, wide = trained
    Xv, yv = compact_data(n=500, seed=5)
    Xvw = sp.csr_matrix((Xv.data, used[Xv.indices], Xv.indptr), shape=Xv.shape[:1] + (WIDTH,))
    ev_c, ev_w = {}, {}
    cb = dgbdt.record_evaluation
    dgbdt.train(
        PARAMS,
        dgbdt.Dataset(X, y),
        6,
        valid_sets=[dgbdt.Dataset(Xv, yv)],
        callbacks=[cb(ev_c)],
    )
    train_set = dgbdt.Dataset(Xw, y)
    valid = train_set.create_valid(Xvw, yv)
    dgbdt.train(PARAMS, train_set, 6, valid_sets=[valid], callbacks=[cb(ev_w)])
    assert valid.store.n_features == len(used) and np.array_equal(valid.used_features, used)
    np.testing.assert_array_equal(
        ev_w["valid_0"]["binary_logloss"], ev_c["valid_0"]["binary_logloss"]
    )


def test_wide_model_file_holds_only_the_used_columns(trained, tmp_path):
    X, Xw, y, used, compact, ds, wide = trained
    text = wide.model_to_string(format="json")
    assert len(text) < 20 * len(
        compact.model_to_string(format="json")
    )  # not 2**24 entries per field
    doc = json.loads(text)
    assert doc["version"] == 4 and doc["used_features"] == used.tolist()
    assert doc["feature_names"] is None and len(doc["nan_bins"]) == len(used)
    assert json.loads(compact.model_to_string(format="json"))["version"] == 3  # others: as before
    again = dgbdt.Booster(model_str=text)
    assert isinstance(again.bin_mapper, WideBinMapper) and again.num_feature() == WIDTH
    # the names as feature_name() lists them (the wide model's feature_name() is
    # tested above), without making its 2**24 strings
    assert len(again.feature_names) == WIDTH
    assert again.feature_names[-1] == f"Column_{WIDTH - 1}"
    np.testing.assert_array_equal(again.predict(Xw[:300]), wide.predict(Xw[:300]))
    assert again.model_to_string(format="json") == text
    # binned replay from the reloaded model: continued training gives the same trees
    more = dgbdt.train(PARAMS, dgbdt.Dataset(Xw, y), 2, init_model=again)
    direct = dgbdt.train(PARAMS, dgbdt.Dataset(Xw, y), 2, init_model=wide)
    # (JSON: the LightGBM text of 2**24 columns is 341 MB)
    assert more.model_to_string(format="json") == direct.model_to_string(format="json")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(used_features=d["used_features"][::-1]), "increasing order"),
        (lambda d: d["used_features"].__setitem__(0, -1), "used_features"),
        (lambda d: d["used_features"].__setitem__(-1, WIDTH), "used_features"),
        (lambda d: d.update(used_features=d["used_features"][:-1]), "nan_bins|bin_upper_bounds"),
        (lambda d: d.pop("empty_value_range"), "empty_value_range"),
        (lambda d: d.update(empty_value_range=[1.0, 0.0]), "empty_value_range"),
        (lambda d: d.update(bin_categories=[None] * len(d["nan_bins"])), "bin_categories"),
        (lambda d: d.update(version=3), "version 4"),
        (lambda d: d.update(num_features=0), "outside"),
    ],
)
def test_a_damaged_wide_model_file_is_refused_by_field(trained, change, message):
    doc = json.loads(trained[-1].model_to_string(format="json"))
    change(doc)
    with pytest.raises(ModelFormatError, match=message):
        dgbdt.Booster(model_str=json.dumps(doc))


def test_a_tree_split_on_an_empty_column_is_checked_against_its_one_bin(trained):
    used, wide = trained[3], trained[-1]
    doc = json.loads(wide.model_to_string(format="json"))
    empty = int(np.setdiff1d(np.arange(len(used) + 1), used)[0])
    tree = doc["trees"][0]
    tree["split_feature"][0] = empty  # an empty column has one bin: threshold_bin 0 only
    with pytest.raises(ModelFormatError, match="threshold"):
        dgbdt.Booster(model_str=json.dumps(doc))
    narrow = json.loads(trained[4].model_to_string(format="json"))
    narrow["feature_names"] = None  # default names as null: wide models only
    with pytest.raises(ModelFormatError, match="feature_names"):
        dgbdt.Booster(model_str=json.dumps(narrow))


def test_narrower_width_lightgbm_export_and_shap():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = compact_data(n=1000, k=60, nnz=6000)
    width = 1 << 16
    Xw, used = widened(X, width)
    compact = dgbdt.train(PARAMS, dgbdt.Dataset(X, y), 4)
    wide = dgbdt.train(PARAMS, dgbdt.Dataset(Xw, y), 4)
    assert_same_model(compact, wide, used)
    text = wide.model_to_string(format="lightgbm")
    infos = next(line for line in text.splitlines() if line.startswith("feature_infos="))
    infos = infos.split("=", 1)[1].split(" ")
    assert len(infos) == width and infos[int(np.setdiff1d(np.arange(3), used)[0])] == "none"
    assert infos[int(used[0])].startswith("[")
    lgb = lightgbm.Booster(model_str=text)
    np.testing.assert_allclose(
        lgb.predict(Xw[:200], raw_score=True), wide.predict(Xw[:200], raw_score=True), atol=1e-9
    )
    # dgbdt's own model file round trip
    again = dgbdt.Booster(model_str=wide.model_to_string(format="json"))
    assert again.num_feature() == width
    np.testing.assert_allclose(again.predict(Xw[:50]), wide.predict(Xw[:50]))
    contrib = wide.predict(Xw[:20], pred_contrib=True)
    assert sp.issparse(contrib) and contrib.shape == (20, width + 1)
    contrib = contrib.toarray()
    np.testing.assert_allclose(
        np.asarray(contrib.sum(axis=1)).ravel(), wide.predict(Xw[:20], raw_score=True), atol=1e-9
    )
    np.testing.assert_allclose(
        contrib[:, used], compact.predict(X[:20], pred_contrib=True).toarray()[:, :-1], atol=1e-12
    )


def test_params_that_speak_of_columns_bin_every_column():
    X, y = compact_data(n=500, k=20, nnz=2000)
    Xw, used = widened(X, 1 << 10)
    ds = dgbdt.Dataset(Xw, y, free_raw_data=False)
    dgbdt.train(PARAMS, ds, 2)
    assert ds.used_features is not None
    # extra_trees draws per column: the Dataset is binned again, every column
    dgbdt.train({**PARAMS, "extra_trees": True}, ds, 2)
    assert ds.used_features is None and ds.bin_mapper.n_features == 1 << 10
    freed = dgbdt.Dataset(Xw, y)
    dgbdt.train(PARAMS, freed, 2)
    with pytest.raises(ValueError, match="binned only the columns holding values"):
        dgbdt.train({**PARAMS, "monotone_constraints": [0] * (1 << 10)}, freed, 2)


def test_subset_and_raw_data_of_a_wide_dataset():
    X, y = compact_data(n=800, k=40, nnz=4000)
    Xw, used = widened(X, 1 << 20)
    ds = dgbdt.Dataset(Xw, y, free_raw_data=False).construct(PARAMS)
    raw = ds.get_data()
    assert raw.shape == Xw.shape and (raw != Xw).nnz == 0
    rows = np.arange(0, 800, 2)
    sub = ds.subset(rows)
    a = dgbdt.train(PARAMS, sub, 3)
    b = dgbdt.train(PARAMS, dgbdt.Dataset(X[rows], y[rows], reference=dgbdt.Dataset(X, y)), 3)
    assert_same_model(b, a, used)


def test_libsvm_index_2_pow_24_minus_1_through_the_command_line(tmp_path):
    X, y = compact_data(n=600, k=30, nnz=3000)
    Xw, used = widened(X)
    Xw = sp.csr_matrix(Xw)
    Xw[0, WIDTH - 1] = 1.5  # the last column holds a value
    lines = []
    for i in range(Xw.shape[0]):
        lo, hi = Xw.indptr[i], Xw.indptr[i + 1]
        pairs = " ".join(
            f"{c}:{v:.17g}" for c, v in zip(Xw.indices[lo:hi], Xw.data[lo:hi], strict=True)
        )
        lines.append(f"{int(y[i])} {pairs}")
    train = tmp_path / "train.svm"
    train.write_text("\n".join(lines) + "\n")
    model = tmp_path / "model.json"
    run = [sys.executable, "-m", "dgbdt"]
    common = ["objective=binary", "num_leaves=7", "num_iterations=3", "verbosity=-1"]
    subprocess.run(
        [*run, "train", f"data={train}", f"output_model={model}", *common],
        check=True,
        timeout=300,
    )
    booster = dgbdt.Booster(model_file=model)
    assert booster.num_feature() == WIDTH
    assert json.loads(model.read_text())["num_features"] == WIDTH
    out = tmp_path / "pred.txt"
    subprocess.run(
        [*run, "predict", f"data={train}", f"input_model={model}", f"output_result={out}"],
        check=True,
        timeout=300,
    )
    np.testing.assert_allclose(np.loadtxt(out), booster.predict(Xw), atol=1e-12)
