"""Agreement of dgbdt with the tools that read LightGBM's text models.

Prints, for each case, the largest absolute difference of raw scores:

* export: dgbdt trains (NaN in train and test data), ``model_to_string(format=
  "lightgbm")``, LightGBM 4 predicts: each objective, after early stopping,
  after ``init_model``, without trees; treelite (gtil), ONNX (onnxmltools +
  onnxruntime: float32, so the share of rows that differ is printed too) and
  shap (values + expected value against raw scores);
* import: LightGBM trains (generated data with NaN and zeros; the shared
  example data when present beside the checkout), dgbdt reads the text and
  predicts: each objective, zero_as_missing, use_missing=false, categorical
  features, and after dgbdt continued the training (the first trees);
* the round trip export -> import -> export (the same text or not).

    python bench/bench_interop.py

A script run by hand (the tests assert the same with tolerances); missing
optional tools are reported and skipped.
"""

import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402

import dgbdt  # noqa: E402

warnings.filterwarnings("ignore")


def _data(kind, n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.08] = np.nan
    X[rng.random(X.shape) < 0.1] = 0.0
    s = np.nan_to_num(X[:, 0]) + np.sin(2 * np.nan_to_num(X[:, 1])) + 0.5 * np.isnan(X[:, 2])
    if kind == "binary":
        y = (s + 0.3 * rng.normal(size=n) > 0).astype(float)
    elif kind == "multiclass":
        y = np.digitize(s, [-0.5, 0.7]).astype(float)
    else:
        y = s + 0.2 * rng.normal(size=n)
    T = np.column_stack([rng.permutation(c) for c in X.T])
    special = [np.nan, 0.0, 1e-36, np.inf, -np.inf, 1e300, -1e300]
    return X, y, np.vstack([T, *[[v] * X.shape[1] for v in special]])


OBJECTIVES = {
    "regression": ("regression", {}),
    "regression_l1": ("regression", {}),
    "huber": ("regression", {}),
    "binary": ("binary", {}),
    "multiclass": ("multiclass", {"num_class": 3}),
}
BASE = {"num_leaves": 31, "learning_rate": 0.1, "verbosity": -1}


def _diff(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def export_rows(lgb):
    rows = []
    for name, (kind, extra) in OBJECTIVES.items():
        X, y, T = _data(kind)
        b = dgbdt.train({**BASE, "objective": name, **extra}, dgbdt.Dataset(X, y), 50)
        got = lgb.Booster(model_str=b.model_to_string(format="lightgbm")).predict(T, raw_score=True)
        rows.append((f"export {name}, 50 rounds", _diff(got, b.predict(T, raw_score=True))))
    X, y, T = _data("binary")
    Xv, yv, _ = _data("binary", n=600, seed=4)
    train = dgbdt.Dataset(X, y)
    b = dgbdt.train(
        {**BASE, "objective": "binary", "learning_rate": 0.5},
        train,
        300,
        valid_sets=[dgbdt.Dataset(Xv, yv, reference=train)],
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )
    got = lgb.Booster(model_str=b.model_to_string(format="lightgbm"))
    rows.append(
        (
            f"export binary, early stopping (best {b.best_iteration} of "
            f"{b.current_iteration()}; LightGBM sees {got.num_trees()} trees)",
            _diff(got.predict(T, raw_score=True), b.predict(T, raw_score=True)),
        )
    )
    more = dgbdt.train({**BASE, "objective": "binary"}, train, 20, init_model=b)
    got = lgb.Booster(model_str=more.model_to_string(format="lightgbm"))
    rows.append(
        (
            "export binary, init_model + 20",
            _diff(got.predict(T, raw_score=True), more.predict(T, raw_score=True)),
        )
    )
    none = dgbdt.train({**BASE, "objective": "multiclass", "num_class": 3}, train, 0)
    got = lgb.Booster(model_str=none.model_to_string(format="lightgbm"))
    rows.append(
        (
            "export multiclass, no trees",
            _diff(got.predict(T, raw_score=True), none.predict(T, raw_score=True)),
        )
    )
    return rows


def tool_rows(lgb):
    rows = []
    X, y, T = _data("binary")
    b = dgbdt.train({**BASE, "objective": "binary"}, dgbdt.Dataset(X, y), 50)
    text = b.model_to_string(format="lightgbm")
    raw = b.predict(T, raw_score=True)
    try:
        import tempfile

        import treelite

        with tempfile.NamedTemporaryFile("w", suffix=".txt") as fh:
            fh.write(text)
            fh.flush()
            model = treelite.frontend.load_lightgbm_model(fh.name)
        got = np.asarray(treelite.gtil.predict(model, T, pred_margin=True)).reshape(raw.shape)
        rows.append(("treelite gtil, binary", _diff(got, raw)))
    except ImportError:
        rows.append(("treelite", "not installed"))
    try:
        import onnxmltools
        import onnxruntime as ort
        from onnxmltools.convert.common.data_types import FloatTensorType

        onx = onnxmltools.convert_lightgbm(
            lgb.Booster(model_str=text),
            initial_types=[("input", FloatTensorType([None, T.shape[1]]))],
            zipmap=False,
            target_opset=15,
        )
        sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
        prob = sess.run(None, {"input": T.astype(np.float32)})[1][:, 1]
        err = np.abs(prob - b.predict(T))
        rows.append(
            (
                f"onnxruntime, binary probabilities ({np.mean(err > 1e-6):.2%} of rows off by > 1e-6)",
                float(err.max()),
            )
        )
    except ImportError:
        rows.append(("onnxmltools/onnxruntime", "not installed"))
    try:
        import shap

        explainer = shap.TreeExplainer(lgb.Booster(model_str=text))
        values = explainer.shap_values(T[:500])
        total = np.asarray(values).reshape(500, -1).sum(axis=1) + float(
            np.ravel(explainer.expected_value)[0]
        )
        rows.append(("shap TreeExplainer, sum vs raw, binary", _diff(total, raw[:500])))
    except ImportError:
        rows.append(("shap", "not installed"))
    return rows


def _lgb_model(lgb, kind, params, X, y, rounds=50, **ds):
    return lgb.train({**BASE, **params}, lgb.Dataset(X, y, **ds), rounds)


def import_rows(lgb):
    rows = []
    cases = {
        **{
            name: (kind, {"objective": name, **extra}) for name, (kind, extra) in OBJECTIVES.items()
        },
        "zero_as_missing": ("regression", {"objective": "regression", "zero_as_missing": True}),
        "use_missing=false": ("binary", {"objective": "binary", "use_missing": False}),
    }
    for name, (kind, params) in cases.items():
        X, y, T = _data(kind)
        m = _lgb_model(lgb, kind, params, X, y)
        ours = dgbdt.Booster(model_str=m.model_to_string())
        rows.append(
            (f"import {name}", _diff(ours.predict(T, raw_score=True), m.predict(T, raw_score=True)))
        )
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 60, 3000).astype(float), rng.normal(size=3000)])
    X[rng.random(3000) < 0.05, 0] = np.nan
    y = np.isin(X[:, 0], [1, 5, 33]) + 0.3 * X[:, 1]
    m = lgb.train(
        {**BASE, "min_data_per_group": 5, "cat_smooth": 1},
        lgb.Dataset(X, y, categorical_feature=[0]),
        50,
    )
    T = np.vstack([X, [[-0.5, 0], [5.7, 0], [1e10, 0], [np.nan, 0]]])
    ours = dgbdt.Booster(model_str=m.model_to_string())
    rows.append(
        ("import categorical", _diff(ours.predict(T, raw_score=True), m.predict(T, raw_score=True)))
    )
    X, y, T = _data("binary")
    m = _lgb_model(lgb, "binary", {"objective": "binary"}, X, y)
    more = dgbdt.train({**BASE, "objective": "binary"}, dgbdt.Dataset(X, y), 20, init_model=m)
    first = more.predict(T, raw_score=True, num_iteration=m.current_iteration())
    rows.append(
        (
            "import binary, then dgbdt +20 rounds: first 50",
            _diff(first, m.predict(T, raw_score=True)),
        )
    )
    return rows


def shared_rows(lgb):
    from dgbdt.io import read_data

    folder = common.load_datasets_module().find_shared_datasets()
    if folder is None:
        return [("shared example data", "not beside this checkout")]
    rows = []
    for name, params in (
        ("binary", {"objective": "binary"}),
        ("regression", {"objective": "regression"}),
        ("multiclass", {"objective": "multiclass", "num_class": 5}),
    ):
        d = read_data(str(pathlib.Path(folder) / "lightgbm" / f"{name}.train"))
        X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X)
        m = lgb.train({**BASE, **params}, lgb.Dataset(X, d.label), 100)
        ours = dgbdt.Booster(model_str=m.model_to_string())
        rows.append(
            (
                f"import shared {name}.train, 100 rounds",
                _diff(ours.predict(X, raw_score=True), m.predict(X, raw_score=True)),
            )
        )
    return rows


def round_trip_rows():
    X, y, _ = _data("multiclass")
    b = dgbdt.train(
        {**BASE, "objective": "multiclass", "num_class": 3},
        dgbdt.Dataset(X, y, feature_name=["a b", "c", "d:e", "f", "g", "h"]),
        30,
    )
    text = b.model_to_string(format="lightgbm")
    same = dgbdt.Booster(model_str=text).model_to_string(format="lightgbm") == text
    return [
        (
            "export -> import -> export, multiclass, renamed features",
            "same text" if same else "DIFFERENT",
        )
    ]


def main():
    import lightgbm as lgb

    common.print_machine()
    print(f"lightgbm {lgb.__version__}, dgbdt {dgbdt.__version__}")
    rows = (
        export_rows(lgb) + tool_rows(lgb) + import_rows(lgb) + shared_rows(lgb) + round_trip_rows()
    )
    common.print_rows(
        ["case", "max |difference|"],
        [[case, f"{v:.3g}" if isinstance(v, float) else v] for case, v in rows],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
