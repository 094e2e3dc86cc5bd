"""Binary labels -1/+1: LightGBM's positive class is ``label > 0``
(src/objective/binary_objective.hpp, ``is_pos_``; the binary metrics in
src/metric/binary_metric.hpp likewise), so -1/+1 labels train the model of 0/1
labels.  dgbdt takes both conventions and refuses other values (LightGBM would
silently count 0.3 or 2 as positive)."""

import numpy as np
import pytest

import dgbdt

QUIET = {"verbosity": -1}
PARAMS = {
    "objective": "binary",
    "num_leaves": 7,
    "min_data_in_leaf": 5,
    "learning_rate": 0.3,
    "metric": "binary_logloss,binary_error,auc",
}


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 4)).astype(np.float64)
    p = 1 / (1 + np.exp(-(X[:, 0] - 10) / 3 - 0.1 * X[:, 1] + 1))
    return X, (rng.random(n) < p).astype(np.float64)


def _train(y, X, valid_y, extra=None, weight=None):
    evals = {}
    train = dgbdt.Dataset(X, y, weight=weight)
    valid = dgbdt.Dataset(X[:200], valid_y, reference=train)
    booster = dgbdt.train(
        {**PARAMS, **QUIET, **(extra or {})},
        train,
        6,
        valid_sets=[valid],
        valid_names=["v"],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    return booster, evals["v"]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"is_unbalance": True},
        {"scale_pos_weight": 2.5},
        {"bagging_fraction": 0.7, "bagging_freq": 1},
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_minus_one_plus_one_labels_give_the_model_of_zero_one(extra, weighted):
    X, y01 = _data()
    weight = np.linspace(0.5, 2.0, len(y01)) if weighted else None
    pm = 2 * y01 - 1
    ours01, evals01 = _train(y01, X, y01[:200], extra, weight)
    ourspm, evalspm = _train(pm, X, pm[:200], extra, weight)
    assert ourspm.dump_model(format="json")["trees"] == ours01.dump_model(format="json")["trees"]
    np.testing.assert_array_equal(
        ourspm.predict(X, raw_score=True), ours01.predict(X, raw_score=True)
    )
    assert evalspm == evals01  # the metrics read label > 0 too
    assert min(evals01["auc"]) > 0.6  # not vacuous


@pytest.mark.parametrize("extra", [{}, {"is_unbalance": True}])
def test_minus_one_plus_one_labels_agree_with_lightgbm(extra):
    lgb = pytest.importorskip("lightgbm")
    X, y01 = _data()
    pm = 2 * y01 - 1
    params = {**PARAMS, **extra, "metric": "None"}
    theirs = lgb.train(
        {
            **params,
            "verbosity": -1,
            "deterministic": True,
            "num_threads": 1,
            "force_col_wise": True,
            "feature_pre_filter": False,
            "min_data_in_bin": 1,
        },
        lgb.Dataset(X, pm),
        num_boost_round=6,
    )
    theirs01 = lgb.train(
        {
            **params,
            "verbosity": -1,
            "deterministic": True,
            "num_threads": 1,
            "force_col_wise": True,
            "feature_pre_filter": False,
            "min_data_in_bin": 1,
        },
        lgb.Dataset(X, y01),
        num_boost_round=6,
    )
    ours = dgbdt.train({**params, **QUIET, "min_data_in_bin": 1}, dgbdt.Dataset(X, pm), 6)
    # LightGBM's own model does not depend on the convention ...
    np.testing.assert_array_equal(
        theirs.predict(X, raw_score=True), theirs01.predict(X, raw_score=True)
    )
    # ... and dgbdt's -1/+1 model is LightGBM's
    assert [t["num_leaves"] for t in ours.dump_model(format="json")["trees"]] == [
        t["num_leaves"] for t in theirs.dump_model()["tree_info"]
    ]
    raw_ours, raw_theirs = ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True)
    assert np.abs(raw_ours - raw_theirs).max() <= 1e-6
    assert np.ptp(raw_ours) > 0.5


@pytest.mark.parametrize("bad", [0.5, -0.25, 2.5])
def test_other_binary_labels_are_refused(bad):
    X, y = _data(n=100)
    y[7] = bad
    with pytest.raises(ValueError, match=r"labels 0 or 1 \(or -1 and \+1\); row 7 has label"):
        dgbdt.train({**PARAMS, **QUIET}, dgbdt.Dataset(X, y), 1)


def test_minus_one_plus_one_labels_from_a_file(tmp_path):
    from dgbdt.cli.commands import run

    X, y01 = _data(n=300)
    models = []
    for name, y in (("zo", y01), ("pm", 2 * y01 - 1)):
        path = tmp_path / f"{name}.tsv"
        np.savetxt(path, np.column_stack([y, X]), delimiter="\t", fmt="%g")
        model = tmp_path / f"{name}.json"
        assert (
            run(
                [
                    "train",
                    f"data={path}",
                    "objective=binary",
                    "num_trees=4",
                    "num_leaves=5",
                    f"output_model={model}",
                    "verbosity=-1",
                ]
            )
            == 0
        )
        models.append(dgbdt.Booster(model_file=str(model)).dump_model(format="json")["trees"])
    assert models[0] == models[1]
