"""The exported LightGBM text model through the tools that read it: treelite,
onnxmltools + onnxruntime, shap (each skipped when not installed; the
``interop`` extra installs them)."""

import numpy as np
import pytest

import dgbdt

lgb = pytest.importorskip("lightgbm")


def _model(objective, extra=None, rounds=20):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5))
    X[rng.random(X.shape) < 0.08] = np.nan
    s = np.nan_to_num(X[:, 0]) + np.sin(2 * np.nan_to_num(X[:, 1])) + 0.5 * np.isnan(X[:, 2])
    if objective == "binary":
        y = (s + 0.3 * rng.normal(size=len(s)) > 0).astype(float)
    elif objective == "multiclass":
        y = np.digitize(s, [-0.5, 0.7]).astype(float)
    else:
        y = s + 0.1 * rng.normal(size=len(s))
    params = {"objective": objective, "num_leaves": 15, "verbosity": -1, **(extra or {})}
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), rounds)
    T = np.column_stack([rng.permutation(c) for c in X.T])
    return booster, T


CASES = [("regression", None), ("binary", None), ("multiclass", {"num_class": 3})]


@pytest.mark.parametrize("objective, extra", CASES)
def test_treelite_predicts_the_export(tmp_path, objective, extra):
    treelite = pytest.importorskip("treelite")
    booster, T = _model(objective, extra)
    path = tmp_path / "model.txt"
    booster.save_model(path, format="lightgbm")
    model = treelite.frontend.load_lightgbm_model(str(path))
    got = np.asarray(treelite.gtil.predict(model, T, pred_margin=True), np.float64)
    want = booster.predict(T, raw_score=True)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


def _far_from_thresholds(booster, T, gap=1e-5):
    """Rows whose every value is at least ``gap`` (relative) away from every
    threshold of its feature: float32 comparisons (ONNX) decide them alike."""
    thresholds = {}
    for tree in booster.trees:
        for f, t in zip(tree.split_feature, tree.threshold, strict=True):
            thresholds.setdefault(int(f), []).append(t)
    keep = np.ones(len(T), bool)
    for f, ts in thresholds.items():
        ts = np.asarray(ts)[np.abs(ts) < 1e300]
        x = T[:, f]
        near = np.abs(x[:, None] - ts[None, :]) <= gap * np.maximum(1.0, np.abs(ts))[None, :]
        keep &= ~near.any(axis=1) | np.isnan(x)
    return keep


@pytest.mark.parametrize("objective, extra", CASES)
def test_onnx_predicts_the_export(objective, extra):
    onnxmltools = pytest.importorskip("onnxmltools")
    ort = pytest.importorskip("onnxruntime")
    from onnxmltools.convert.common.data_types import FloatTensorType

    booster, T = _model(objective, extra)
    lgb_model = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    onx = onnxmltools.convert_lightgbm(
        lgb_model,
        initial_types=[("input", FloatTensorType([None, T.shape[1]]))],
        zipmap=False,
        target_opset=15,
    )
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, {"input": T.astype(np.float32)})
    got = outputs[1] if objective != "regression" else outputs[0]
    want = booster.predict(T)
    if objective == "binary":
        got = got[:, 1]
    got = np.asarray(got, np.float64).reshape(want.shape)
    # ONNX's tree ensemble compares float32 values with float32 thresholds: rows
    # near a threshold may take the other branch.  Away from them it agrees
    # to float32 accumulation.
    keep = _far_from_thresholds(booster, T)
    assert keep.mean() > 0.5
    np.testing.assert_allclose(got[keep], want[keep], rtol=1e-6, atol=1e-6)
    differ = np.mean(np.abs(got - want).reshape(len(T), -1).max(axis=1) > 1e-6)
    assert differ < 0.05, f"{differ:.1%} of rows differ (float32 thresholds)"


@pytest.mark.parametrize("objective, extra", CASES)
def test_shap_values_sum_to_the_raw_scores(objective, extra):
    shap = pytest.importorskip("shap")
    booster, T = _model(objective, extra, rounds=10)
    lgb_model = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    explainer = shap.TreeExplainer(lgb_model)
    values = np.asarray(explainer.shap_values(T[:200]))
    raw = booster.predict(T[:200], raw_score=True)
    expected = np.asarray(explainer.expected_value, np.float64)
    if raw.ndim == 1:
        total = values.reshape(200, -1).sum(axis=1) + float(np.ravel(expected)[0])
    else:  # multiclass: (rows, features, classes) in shap >= 0.45
        values = values if values.shape[0] == 200 else np.moveaxis(values, 0, -1)
        total = values.sum(axis=1) + expected
    np.testing.assert_allclose(total, raw, rtol=1e-6, atol=1e-6)
