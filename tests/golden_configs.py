"""The golden models: fixed configurations whose models must not change by accident.

Shared by tests/test_golden_models.py and its rank script (tests/mpi/golden.py).
A model's canonical content is what decides predictions and continued training:
its trees, init score, objective and bin mapper; not the recorded params (they
grow with every new parameter) nor the version.

* Quantized models are compared by the SHA-256 of their canonical content, to
  the byte (integer histograms: the same on every CPU).
* Float models: the structure (split features, thresholds, bins, children,
  counts, ...) by SHA-256, exactly; the float fields (leaf values, gains, sums
  of hessians, init score) within 1e-12 relative, as float maths can differ in
  the last bits between CPUs.

``DGBDT_GOLDEN_WRITE=1 pytest tests/test_golden_models.py`` rewrites the
manifest: do it only in a commit that changes models on purpose, and say why.
"""

import hashlib
import json
import pathlib

import numpy as np
from dgbdt.datasets import make_higgs_like

MANIFEST = pathlib.Path(__file__).resolve().parent / "golden" / "manifest.json"
FLOAT_FIELDS = ("leaf_value", "split_gain", "internal_value", "internal_weight", "leaf_weight")
RTOL = 1e-12

BASE = {
    "num_leaves": 15,
    "learning_rate": 0.3,
    "min_data_in_leaf": 20,
    "verbosity": -1,
    "num_threads": 1,
    "seed": 3,
}
QUANT = {"use_quantized_grad": True, "num_grad_quant_bins": 4}

# name -> (objective data, params, rounds, extras); extras: "valid" (a validation
# set with early stopping), "weights"
SERIAL = {
    "regression": ("regression", {"objective": "regression"}, 8, ()),
    "regression_quantized": ("regression", {"objective": "regression", **QUANT}, 8, ()),
    "regression_l1": ("regression", {"objective": "regression_l1"}, 8, ()),
    "huber": ("regression", {"objective": "huber", "alpha": 0.9}, 8, ()),
    "huber_quantized_renew": (
        "regression",
        {"objective": "huber", **QUANT, "quant_train_renew_leaf": True},
        8,
        (),
    ),
    "binary": ("binary", {"objective": "binary"}, 8, ()),
    "binary_weighted_quantized": ("binary", {"objective": "binary", **QUANT}, 8, ("weights",)),
    "multiclass": ("multiclass", {"objective": "multiclass", "num_class": 3}, 6, ()),
    "multiclass_quantized": (
        "multiclass",
        {"objective": "multiclass", "num_class": 3, **QUANT},
        6,
        (),
    ),
    "bagging_feature_fraction": (
        "binary",
        {
            "objective": "binary",
            "bagging_fraction": 0.7,
            "bagging_freq": 1,
            "feature_fraction": 0.6,
        },
        8,
        (),
    ),
    "early_stopping": (
        "binary",
        {"objective": "binary", "metric": "binary_logloss", "learning_rate": 0.8},
        60,
        ("valid",),
    ),
}

# 2 ranks: rows sharded (feature-parallel: every rank holds every row)
DISTRIBUTED = {
    "data_2_ranks": ("binary", {"objective": "binary", "tree_learner": "data"}, 8, ()),
    "data_2_ranks_quantized": (
        "binary",
        {"objective": "binary", "tree_learner": "data", **QUANT},
        8,
        (),
    ),
    "feature_2_ranks": ("binary", {"objective": "binary", "tree_learner": "feature"}, 8, ()),
    "voting_2_ranks": (
        "binary",
        {"objective": "binary", "tree_learner": "voting", "top_k": 5},
        8,
        (),
    ),
    "voting_2_ranks_quantized": (
        "regression",
        {"objective": "regression", "tree_learner": "voting", "top_k": 5, **QUANT},
        8,
        (),
    ),
}


def problem(kind, n=1500, n_valid=500):
    """(X, y, weight, X_valid, y_valid) of a fixed problem: NaNs in one feature."""
    X, y_bin = make_higgs_like(n + n_valid, seed=7)
    X = X.astype(np.float64)
    X[::13, 3] = np.nan
    if kind == "binary":
        y = y_bin.astype(np.float64)
    elif kind == "regression":
        y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + np.nan_to_num(X[:, 3]) + 0.3 * X[:, 5] ** 2
    else:
        y = np.digitize(X[:, 0] + 0.5 * X[:, 2], [-0.4, 0.4]).astype(np.float64)
    weight = 0.5 + (np.arange(n) % 5) / 4.0
    return X[:n], y[:n], weight, X[n:], y[n:]


def canonical(booster):
    """The model's content without its params and version (a dict, JSON-ready)."""
    doc = json.loads(booster.model_to_string(format="json"))
    for key in ("params", "version", "format"):
        doc.pop(key, None)
    return doc


def _digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def entry(doc, quantized):
    """What the manifest holds for a model (a copy: later edits of ``doc`` stay out)."""
    doc = json.loads(json.dumps(doc))
    if quantized:
        return {"sha256": _digest(doc)}
    structure = {
        **doc,
        "init_score": None,
        "trees": [{k: v for k, v in t.items() if k not in FLOAT_FIELDS} for t in doc["trees"]],
    }
    floats = {name: [t[name] for t in doc["trees"]] for name in FLOAT_FIELDS}
    floats["init_score"] = doc["init_score"]
    return {"structure_sha256": _digest(structure), "floats": floats}


def differences(got, want):
    """What differs between two manifest entries (empty when they agree)."""
    if "sha256" in want:
        return [] if got.get("sha256") == want["sha256"] else ["the model's bytes (quantized)"]
    if got.get("structure_sha256") != want["structure_sha256"]:
        return ["the structure (splits, thresholds, bins, counts)"]
    out = []
    for name, values in want["floats"].items():
        a = np.concatenate([np.ravel(v) for v in got["floats"][name]] or [np.zeros(0)])
        b = np.concatenate([np.ravel(v) for v in values] or [np.zeros(0)])
        if a.shape != b.shape or not np.allclose(a, b, rtol=RTOL, atol=RTOL):
            worst = np.max(np.abs(a - b)) if a.shape == b.shape else "shape"
            out.append(f"{name} (largest difference {worst})")
    return out


def train(spec, rank=0, size=1):
    """The booster of one configuration, trained on this rank's rows."""
    import dgbdt

    kind, params, rounds, extras = spec
    X, y, weight, X_valid, y_valid = problem(kind)
    lo, hi = 0, len(y)
    if size > 1 and params.get("tree_learner") != "feature":  # unequal row shards
        cuts = [0, int(0.4 * len(y)), len(y)]
        lo, hi = cuts[rank], cuts[rank + 1]
    train_set = dgbdt.Dataset(
        X[lo:hi], y[lo:hi], weight=weight[lo:hi] if "weights" in extras else None
    )
    kwargs = {}
    if "valid" in extras:
        kwargs = {
            "valid_sets": [dgbdt.Dataset(X_valid, y_valid, reference=train_set)],
            "callbacks": [dgbdt.early_stopping(3, verbose=False)],
            # every tree trained, not the model cut at the best iteration that
            # train returns otherwise (LightGBM's rule): the guard covers them all
            "keep_training_booster": True,
        }
    return dgbdt.train({**BASE, **params}, train_set, rounds, **kwargs)


def is_quantized(spec):
    return bool(spec[1].get("use_quantized_grad"))
