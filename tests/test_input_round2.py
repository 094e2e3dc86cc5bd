"""Issue 27, items 3 and 4: date/time columns and broken sparse matrices.

Dates were taken as the integers of their unit (trained on datetime64[us],
the same instants as datetime64[s] predicted 0.65 apart); they are refused
at fit and at predict, through every entry point, naming the columns and how
to convert them.  A sparse matrix whose indices or index pointer scipy no
longer checks (changed after it made the matrix) was trained on, predicted
from, or crashed scipy's conversion (SIGSEGV); it is refused with a message
naming the format, the index and where it is (dgbdt.data.inputs.checked_sparse).
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dgbdt
import dgbdt.models.model
from dgbdt.sklearn import DGBDTRegressor

PARAMS = {"verbosity": -1, "num_leaves": 4, "min_data_in_leaf": 2, "min_data_in_bin": 1}
N = 60


def _train(X, y, rounds=3):
    return dgbdt.train(PARAMS, dgbdt.Dataset(X, label=y), num_boost_round=rounds)


def _times(unit="us"):
    rng = np.random.default_rng(0)
    seconds = rng.integers(0, 10**7, N)
    t = pd.Series(pd.Timestamp("2020-01-01") + pd.to_timedelta(seconds, unit="s"))
    return t.astype(f"datetime64[{unit}]"), seconds


def _frame(unit="us"):
    t, seconds = _times(unit)
    x = np.random.default_rng(1).normal(size=N)
    return pd.DataFrame({"x": x, "when": t}), seconds / 1e6 + x


# ------------------------------------------------------------------ dates


def _time_columns():
    t, _ = _times()
    return {
        "datetime64[us]": t,
        "datetime64[s]": t.astype("datetime64[s]"),
        "tz-aware": t.dt.tz_localize("UTC").dt.tz_convert("Europe/Paris"),
        "timedelta": t - t.min(),
        "period": t.dt.to_period("D"),
        "arrow timestamp": t.astype("timestamp[us][pyarrow]"),
    }


@pytest.mark.parametrize("kind", list(_time_columns()))
def test_a_date_column_is_refused_by_the_dataset_naming_it(kind):
    X, y = _frame()
    X["when"] = _time_columns()[kind]
    with pytest.raises(ValueError, match=r"data has date, time or duration columns 'when' \("):
        dgbdt.Dataset(X, label=y).construct()


def test_the_message_says_how_to_convert_and_the_advice_works():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"\.dt\.as_unit\('s'\)\.astype\('int64'\)"):
        dgbdt.Dataset(X, label=y).construct()
    # converted as advised, the same instants in either unit give the same numbers
    booster = _train(X.assign(when=X["when"].dt.as_unit("s").astype("int64")), y)
    X_s, _ = _frame(unit="s")
    in_s = booster.predict(X_s.assign(when=X_s["when"].dt.as_unit("s").astype("int64")))
    np.testing.assert_array_equal(
        in_s, booster.predict(X.assign(when=X["when"].dt.as_unit("s").astype("int64")))
    )


def test_every_date_column_is_named():
    X, y = _frame()
    X["gap"] = X["when"] - X["when"].min()
    with pytest.raises(ValueError, match=r"'when' \(datetime64\[us\]\), 'gap' \(timedelta64"):
        dgbdt.Dataset(X, label=y).construct()


@pytest.mark.parametrize("how", ["predict", "pred_contrib", "pred_leaf"])
def test_booster_predict_refuses_date_columns(how):
    X, y = _frame()
    booster = _train(X.assign(when=np.arange(N, dtype=float)), y)
    kwargs = {how: True} if how != "predict" else {}
    with pytest.raises(ValueError, match=r"X has date, time or duration columns 'when'"):
        booster.predict(X, **kwargs)


def test_sklearn_fit_and_predict_refuse_date_columns():
    X, y = _frame()
    for frame in (X, X[["when"]]):  # a frame of dates only: scikit-learn cast it to integers
        with pytest.raises(ValueError, match=r"X has date, time or duration columns 'when'"):
            DGBDTRegressor(n_estimators=2, verbose=-1).fit(frame, y)
    model = DGBDTRegressor(n_estimators=2, verbose=-1, min_child_samples=2)
    model.fit(X.assign(when=np.arange(N, dtype=float)), y)
    with pytest.raises(ValueError, match=r"X has date, time or duration columns 'when'"):
        model.predict(X)
    with pytest.raises(ValueError, match=r"X has date, time or duration columns 'when'"):
        model.fit(X.assign(when=0.0), y, eval_set=[(X, y)])


def test_a_numpy_datetime64_array_is_refused_everywhere():
    t, _ = _times()
    X = np.stack([t.to_numpy()] * 2, axis=1)
    y = np.arange(N, dtype=float)
    with pytest.raises(
        ValueError, match=r"data holds dates or durations \(dtype datetime64\[us\]\)"
    ):
        dgbdt.Dataset(X, label=y).construct()
    with pytest.raises(ValueError, match=r"X holds dates or durations \(dtype datetime64\[us\]\)"):
        _train(np.zeros((N, 2)) + np.arange(N)[:, None], y).predict(X)
    with pytest.raises(ValueError, match=r"X holds dates or durations \(dtype timedelta64"):
        DGBDTRegressor(n_estimators=2, verbose=-1).fit(X - X.min(), y)


def test_polars_temporal_columns_are_refused():
    pl = pytest.importorskip("polars")
    X, y = _frame()
    frame = pl.from_pandas(X).with_columns(
        day=pl.col("when").dt.date(),
        clock=pl.col("when").dt.time(),
        gap=pl.col("when") - pl.col("when").min(),
    )
    names = r"'when' \(Datetime.*'day' \(Date\), 'clock' \(Time\), 'gap' \(Duration"
    with pytest.raises(ValueError, match="data has date, time or duration columns " + names):
        dgbdt.Dataset(frame, label=y).construct()
    with pytest.raises(ValueError, match="X has date, time or duration columns " + names):
        DGBDTRegressor(n_estimators=2, verbose=-1).fit(frame, y)
    booster = _train(np.zeros((N, 5)) + np.arange(N)[:, None], y)
    with pytest.raises(ValueError, match="X has date, time or duration columns " + names):
        booster.predict(frame)


def test_arrow_date_columns_are_refused_before_they_become_objects():
    pa = pytest.importorskip("pyarrow")
    X, y = _frame()
    table = pa.Table.from_pandas(X, preserve_index=False)
    table = table.append_column("day", table["when"].cast(pa.date32()))
    # (to_pandas makes the date32 column an object column of datetime.date)
    with pytest.raises(ValueError, match=r"'when' \(timestamp\[us\]\), 'day' \(date32"):
        dgbdt.Dataset(table, label=y).construct()


# ------------------------------------------------------------------ sparse


def _data(fmt="csr", make=sp.csr_matrix):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 5))
    X[rng.random(X.shape) < 0.5] = 0.0
    return make(X).asformat(fmt), X @ np.arange(1.0, 6.0)


def _broken_csr(value, make=sp.csr_matrix):
    m = make(np.arange(1.0, 16.0).reshape(5, 3))
    m.indices[7] = value  # an entry of row 2
    return m


@pytest.mark.parametrize("make", [sp.csr_matrix, sp.csr_array])
@pytest.mark.parametrize("value", [-1, 3, 7, 2**31 - 1])
def test_a_csr_column_index_outside_the_matrix_is_named_at_fit_and_predict(value, make):
    m = _broken_csr(value, make)
    where = f"\\(CSR\\) column index {value} at row 2 is outside the matrix's 3 columns"
    with pytest.raises(ValueError, match="data " + where):
        dgbdt.Dataset(m, label=np.arange(5.0)).construct()
    booster = _train(np.arange(1.0, 16.0).reshape(5, 3), np.arange(5.0), rounds=1)
    for kwargs in ({}, {"pred_contrib": True}, {"pred_leaf": True}):
        with pytest.raises(ValueError, match="X " + where):
            booster.predict(m, **kwargs)


def test_sklearn_refuses_a_broken_csr_at_fit_and_predict():
    m = _broken_csr(9)
    with pytest.raises(ValueError, match=r"X \(CSR\) column index 9 at row 2 is outside"):
        DGBDTRegressor(n_estimators=2, verbose=-1).fit(m, np.arange(5.0))
    X, y = _data()
    model = DGBDTRegressor(n_estimators=2, verbose=-1).fit(X, y)
    X.indices[0] = -4
    with pytest.raises(ValueError, match=r"X \(CSR\) column index -4 at row 0 is outside"):
        model.predict(X)
    with pytest.raises(ValueError, match=r"X \(CSR\) column index -4 at row 0 is outside"):
        model.predict(X, pred_contrib=True)


def test_csc_and_coo_indices_outside_the_matrix_are_named():
    X, y = _data("csc")
    X.indices[X.indptr[3]] = N  # the first entry of column 3
    with pytest.raises(
        ValueError, match=rf"\(CSC\) row index {N} at column 3 is outside the matrix's {N} rows"
    ):
        dgbdt.Dataset(X, label=y).construct()
    X, y = _data("coo")
    X.col[4] = -2
    with pytest.raises(
        ValueError, match=r"\(COO\) column index -2 at entry 4 is outside the matrix's 5 columns"
    ):
        dgbdt.Dataset(X, label=y).construct()
    X.col[4], X.row[6] = 0, N + 3
    with pytest.raises(ValueError, match=rf"\(COO\) row index {N + 3} at entry 6 is outside"):
        _train(np.eye(5), np.arange(5.0), rounds=1).predict(X)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.__setitem__(0, 1), r"starts at 1, not at 0"),
        (lambda p: p.__setitem__(10, 10**6), r"decreases at row 10 \(indptr\[10\] = 1000000 >"),
        (
            lambda p: p.__setitem__(4, -3),
            r"decreases at row 3 \(indptr\[3\] = \d+ > indptr\[4\] = -3\)",
        ),
        (lambda p: p.__setitem__(-1, p[-1] + 5), r"ends at \d+, beyond its \d+ stored entries"),
    ],
)
def test_a_broken_index_pointer_is_named_not_a_segfault(change, message):
    X, y = _data()
    change(X.indptr)
    with pytest.raises(ValueError, match=r"data \(CSR\) index pointer \(indptr\) " + message):
        dgbdt.Dataset(X, label=y).construct()
    with pytest.raises(ValueError, match=r"X \(CSR\) index pointer \(indptr\) " + message):
        _train(np.eye(5), np.arange(5.0), rounds=1).predict(X)


def test_an_index_pointer_of_the_wrong_length_and_mismatched_arrays():
    X, y = _data()
    X.indptr = X.indptr[:-1]
    with pytest.raises(
        ValueError,
        match=rf"\(CSR\) index pointer \(indptr\) has {N} values; its {N} rows need {N + 1}",
    ):
        dgbdt.Dataset(X, label=y).construct()
    X, y = _data()
    X.data = X.data[:-1]
    with pytest.raises(ValueError, match=r"\(CSR\) has \d+ indices for \d+ values"):
        dgbdt.Dataset(X, label=y).construct()
    X.indices = X.indices.astype(np.float64)
    with pytest.raises(TypeError, match=r"\(CSR\) indices must hold integers, got dtype float64"):
        dgbdt.Dataset(X, label=y).construct()


def test_an_index_pointer_ending_before_the_stored_entries_drops_the_rest_as_scipy_does():
    X, y = _data()
    X = sp.csr_matrix(X.toarray() + np.eye(N, 5, k=5 - N) + np.eye(N, 5, k=4 - N))
    whole = X.toarray()
    X.indptr[-1] -= 2  # the last row loses its last two entries: scipy's toarray agrees
    expected = X.toarray()
    assert not np.array_equal(expected, whole)
    booster = _train(X, y)
    np.testing.assert_array_equal(booster.predict(X), _train(expected, y).predict(expected))


def test_other_formats_and_shapes():
    X, y = _data()
    lil = X.tolil()
    lil.rows[2][0] = 11  # LIL keeps plain lists: nothing checks them
    with pytest.raises(ValueError, match=r"data \(CSR\) column index 11 at row 2 is outside"):
        dgbdt.Dataset(lil, label=y).construct()
    bsr = sp.bsr_matrix(X.toarray()[:, :4], blocksize=(2, 2))
    bsr.indices[0] = 2
    with pytest.raises(
        ValueError,
        match=r"\(BSR\) block column index 2 at block row 0 is outside the matrix's 2 block columns",
    ):
        dgbdt.Dataset(bsr, label=y).construct()
    with pytest.raises(
        ValueError, match=r"data must be a 2-dimensional sparse matrix, got shape \(5,\)"
    ):
        dgbdt.Dataset(sp.coo_array(np.arange(5.0)), label=np.arange(5.0)).construct()
    for fmt in ("lil", "dok", "dia", "bsr", "csc", "coo"):  # sound ones of every format: as dense
        booster = _train(X.asformat(fmt), y)
        np.testing.assert_allclose(
            booster.predict(X.asformat(fmt)), _train(X.toarray(), y).predict(X.toarray())
        )


def test_repeated_entries_are_summed_at_fit_and_at_predict():
    # row 0 holds column 0 twice (1 + 2): scipy's toarray() says 3, so does dgbdt
    # (LightGBM's predict would take the last, 2)
    X = sp.csr_matrix(
        (np.array([1.0, 2.0, 5.0, 9.0]), np.array([0, 0, 0, 0]), np.array([0, 2, 3, 4])),
        shape=(3, 1),
    )
    assert X.toarray().ravel().tolist() == [3.0, 5.0, 9.0]
    y = np.array([0.0, 1.0, 2.0, 3.0] * 3)
    X = sp.vstack([X] * 4, format="csr")
    booster = _train(X, y)
    np.testing.assert_array_equal(booster.predict(X), _train(X.toarray(), y).predict(X.toarray()))
    np.testing.assert_array_equal(booster.predict(X), booster.predict(X.toarray()))


def test_a_non_canonical_csc_is_not_changed_by_the_dataset():
    # repeated and unsorted rows in column 0: summing them in place changed the
    # user's matrix (its indptr rewritten, its arrays left longer than it)
    data, indices, indptr = np.array([1.0, 2, 3, 4]), np.array([2, 0, 2, 1]), np.array([0, 3, 4, 4])
    X = sp.csc_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(3, 3))
    dgbdt.Dataset(X, label=np.arange(3.0)).construct()
    np.testing.assert_array_equal(X.indptr, indptr)
    np.testing.assert_array_equal(X.indices, indices)
    np.testing.assert_array_equal(X.data, data)


def test_a_wide_matrix_predicted_through_its_narrowed_columns_is_checked_too(monkeypatch):
    X, y = _data()
    booster = _train(X, y, rounds=1)
    # (predict narrows a matrix of more columns than this to those the trees use)
    monkeypatch.setattr(dgbdt.models.model, "NARROW_MIN_COLUMNS", 2)
    np.testing.assert_array_equal(booster.predict(X), booster.predict(X.toarray()))
    X.indices[0] = 5
    with pytest.raises(ValueError, match=r"X \(CSR\) column index 5 at row 0 is outside"):
        booster.predict(X)


@pytest.mark.parametrize(("dtype", "value", "summed"), [(np.int8, 100, 200.0), (np.bool_, 1, 2.0)])
def test_repeated_integer_and_bool_entries_sum_as_numbers_at_every_entry_point(
    dtype, value, summed
):
    # scipy sums int8 100 + 100 to -56 and True + True to True; scikit-learn's
    # checks cast to float64 first (200, 2): Booster and estimator predicted apart
    repeated = sp.csr_matrix(
        (np.array([value, value], dtype), np.array([0, 0]), np.array([0, 2])), shape=(1, 1)
    )
    rows = np.array([[-1.0], [0.0], [summed], [value], [3 * summed]])
    dense = np.vstack([rows] * 4)
    y = np.argsort(np.argsort(dense[:, 0])).astype(float)
    model = DGBDTRegressor(n_estimators=3, verbose=-1, min_child_samples=1).fit(dense, y)
    expected = model.predict(np.array([[summed]]))
    assert expected != model.predict(np.array([[value]]))  # (the two readings differ)
    np.testing.assert_array_equal(model.booster_.predict(repeated), expected)
    np.testing.assert_array_equal(model.predict(repeated), expected)
    X = sp.vstack([repeated, sp.csr_matrix(np.array([[0], [value]], dtype))] * 4, format="csr")
    assert X.dtype == dtype and X.nnz == 4 * (2 + bool(value))  # (vstack keeps the repeats)
    X_dense = np.vstack([np.array([[summed], [0.0], [value]])] * 4)
    y_rows = np.array([2.0, 0.0, 1.0] * 4)
    np.testing.assert_array_equal(
        _train(X, y_rows).predict(X), _train(X_dense, y_rows).predict(X_dense)
    )
