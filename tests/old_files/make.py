"""Writes the files of this folder with the dgbdt of the commit before issue 26's
first move (b2a9886): a model file, a LightGBM text model, a binary Dataset
file, a pickled Booster and pickled estimators, and the predictions each gives.
tests/test_old_files.py loads them with today's dgbdt.  Run once, by hand:

    python tests/old_files/make.py
"""

import pathlib
import pickle

import numpy as np

import dgbdt

HERE = pathlib.Path(__file__).parent


def data():
    """The rows every fixture is trained on and predicts (a categorical column,
    NaNs, two classes)."""
    rng = np.random.default_rng(26)
    X = rng.normal(size=(600, 5))
    X[:, 3] = rng.integers(0, 6, size=600)
    X[rng.random(600) < 0.05, 1] = np.nan
    y = (X[:, 0] + 0.5 * (X[:, 3] == 2) + rng.normal(scale=0.5, size=600) > 0).astype(int)
    return X, y


def main():
    X, y = data()
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 10, "verbose": -1}
    ds = dgbdt.Dataset(X, y, categorical_feature=[3], free_raw_data=False)
    ds.save_binary(HERE / "train.bin")
    booster = dgbdt.train(params, ds, num_boost_round=8)
    booster.save_model(HERE / "model.json")
    booster.save_model(HERE / "model_lightgbm.txt", format="lightgbm")
    with open(HERE / "booster.pkl", "wb") as f:
        pickle.dump(booster, f, protocol=4)
    clf = dgbdt.DGBDTClassifier(n_estimators=6, num_leaves=5, verbose=-1).fit(X, y)
    reg = dgbdt.DGBDTRegressor(n_estimators=6, num_leaves=5, verbose=-1).fit(X, X[:, 0])
    with open(HERE / "estimators.pkl", "wb") as f:
        pickle.dump({"classifier": clf, "regressor": reg}, f, protocol=4)
    from_bin = dgbdt.train(params, dgbdt.Dataset(HERE / "train.bin"), num_boost_round=8)
    np.savez(
        HERE / "expected.npz",
        booster=booster.predict(X),
        from_bin=from_bin.predict(X),
        classifier=clf.predict_proba(X),
        regressor=reg.predict(X),
    )


if __name__ == "__main__":
    main()
