"""The model file: one versioned JSON document, readable without pickle.

Layout (version 1)::

    {
      "format": "dgbdt-model",          # identifies the file
      "version": 1,
      "objective": "binary",            # or regression, regression_l1, huber, multiclass, custom
      "objective_params": {"sigmoid": 1.0, "alpha": 0.9},
      "num_class": 1,                   # raw outputs per row
      "num_tree_per_iteration": 1,      # trees per boosting round (num_class for multiclass)
      "init_score": [0.0],              # added to the raw score, one per class
      "num_features": 28,
      "feature_names": ["Column_0", ...],
      "bin_upper_bounds": [[...], ...], # per feature, the real-valued bin boundaries (last +inf omitted)
      "nan_bins": [-1, ...],            # per feature, its NaN bin or -1
      "best_iteration": 0,              # 0 = none (1-based as in LightGBM)
      "params": {...},                  # training parameters, for the record
      "trees": [ {tree}, ... ]          # see dgbdt.tree.Tree.to_dict
    }

Tree arrays: split_feature, threshold, threshold_bin, default_left,
left_child, right_child (``c < 0`` is leaf ``~c``), split_gain,
internal_value, internal_weight, internal_count (one per internal node);
leaf_value, leaf_weight, leaf_count, leaf_depth (one per leaf).  Floats are
written with Python's shortest round-trip repr, so a reloaded model predicts
bit-identically.  Files are written atomically (temp file + rename).
"""
import json
import os
import tempfile

import numpy as np

from .tree import LEAF_FIELDS, NODE_FIELDS, Tree

FORMAT_NAME = "dgbdt-model"
FORMAT_VERSION = 1
_REQUIRED = ("objective", "num_class", "num_tree_per_iteration", "init_score", "num_features",
             "feature_names", "trees")


class ModelFormatError(ValueError):
    """A model file or string that is not a valid dgbdt model."""


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temp file in the same folder + rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates the file 0600; give it the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _fail(source, msg):
    raise ModelFormatError(f"{source}: {msg}")


def _check_tree(source, i, d, n_features):
    where = f"tree {i}"
    if not isinstance(d, dict) or "num_leaves" not in d:
        _fail(source, f"{where} is not a tree object")
    n = d["num_leaves"]
    if not isinstance(n, int) or n < 1:
        _fail(source, f"{where} has invalid num_leaves {n!r}")
    for name in NODE_FIELDS + LEAF_FIELDS:
        if name not in d:
            _fail(source, f"{where} lacks field {name!r}")
        want = n - 1 if name in NODE_FIELDS else n
        if not isinstance(d[name], list) or len(d[name]) != want:
            _fail(source, f"{where} field {name!r} must be a list of {want} values")
    try:
        tree = Tree.from_dict(d)
    except (TypeError, ValueError) as exc:
        _fail(source, f"{where} holds a non-numeric value ({exc})")
    if n > 1:
        if tree.split_feature.min() < 0 or tree.split_feature.max() >= n_features:
            _fail(source, f"{where} splits on a feature outside [0, {n_features})")
        children = np.concatenate([tree.left_child, tree.right_child])
        nodes, leaves = children[children >= 0], ~children[children < 0]
        if (len(np.unique(leaves)) != n or leaves.min() < 0 or leaves.max() >= n
                or len(np.unique(nodes)) != n - 2 or (len(nodes) and (nodes.min() < 1 or nodes.max() >= n - 1))):
            _fail(source, f"{where} has broken child links")
    if not np.all(np.isfinite(tree.leaf_value)):
        _fail(source, f"{where} has a non-finite leaf value")
    return tree


def model_from_json(text, source="model string"):
    """Parse and validate a model document; returns (header dict, list of Tree)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if "Expecting" in exc.msg and exc.pos >= len(text) - 1 else ""
        _fail(source, f"not valid JSON{hint}: {exc.msg} at line {exc.lineno} column {exc.colno}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        _fail(source, f"not a dgbdt model file (expected \"format\": \"{FORMAT_NAME}\")")
    version = doc.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        _fail(source, f"unsupported model format version {version!r} (this dgbdt reads up to {FORMAT_VERSION})")
    for key in _REQUIRED:
        if key not in doc:
            _fail(source, f"missing field {key!r}")
    n_features = doc["num_features"]
    if not isinstance(n_features, int) or n_features < 0:
        _fail(source, f"invalid num_features {n_features!r}")
    for key in ("feature_names", "init_score", "trees"):
        if not isinstance(doc[key], list):
            _fail(source, f"{key} must be a list, got {type(doc[key]).__name__}")
    if len(doc["feature_names"]) != n_features:
        _fail(source, "feature_names does not match num_features")
    k = doc["num_tree_per_iteration"]
    if not isinstance(k, int) or k < 1 or len(doc["trees"]) % k:
        _fail(source, "the number of trees is not a multiple of num_tree_per_iteration")
    if len(doc["init_score"]) != doc["num_class"]:
        _fail(source, "init_score must hold one value per class")
    try:
        trees = [_check_tree(source, i, t, n_features) for i, t in enumerate(doc["trees"])]
    except (TypeError, KeyError, ValueError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        _fail(source, f"malformed tree: {exc}")
    return doc, trees


def model_to_json(header, trees):
    doc = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **header,
           "trees": [t.to_dict() for t in trees]}
    return json.dumps(doc, separators=(",", ":"), allow_nan=False)


def load_model_file(path):
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"Model file not found: {path}") from None
    except UnicodeDecodeError:
        _fail(path, "not a dgbdt model file (binary content)")
    return model_from_json(text, source=path)
