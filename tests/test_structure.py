"""The package stays readable (issue 11): short functions with few positional
parameters in every module outside the kernels, one histogram kind the grower
and learners never branch on, and type hints on the public API that name real
objects."""

import ast
import inspect
import pathlib
import typing

import pytest

import dgbdt
from dgbdt import callback, sklearn

ROOT = pathlib.Path(dgbdt.__file__).parent
# Every module but the Numba kernels (dgbdt.native: long loops on purpose).
MODULES = sorted(
    str(p.relative_to(ROOT))
    for p in ROOT.rglob("*.py")
    if "native" not in p.relative_to(ROOT).parts
)
MAX_LINES = 60
MAX_POSITIONAL = 8
# Public signatures that mirror LightGBM's / scikit-learn's (positional order
# checked against LightGBM's by tests/test_dropin_params.py and test_dropin_dataset2.py).
MIRRORED = {
    ("engine.py", "train"),
    ("cv.py", "cv"),
    ("booster.py", "refit"),
    ("models/model.py", "predict"),
    ("data/dataset.py", "__init__"),
    ("sklearn.py", "fit"),
    ("dask/estimators.py", "fit"),  # lightgbm.dask's positional order
}


def _functions(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = [a.arg for a in args.posonlyargs + args.args]
            n_positional = len([a for a in positional if a not in ("self", "cls")])
            yield node.name, node.end_lineno - node.lineno + 1, n_positional


def test_the_modules_are_found():
    assert {
        "engine.py",
        "treelearner/grower.py",
        "treelearner/learners/voting.py",
        "io/libsvm.py",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_functions_are_short_with_few_positional_parameters(name):
    too_long, too_many = [], []
    for function, n_lines, n_positional in _functions(ROOT / name):
        if n_lines > MAX_LINES:
            too_long.append((function, n_lines))
        if n_positional > MAX_POSITIONAL and (name, function) not in MIRRORED:
            too_many.append((function, n_positional))
    assert not too_long, f"{name}: functions over {MAX_LINES} lines: {too_long}"
    assert not too_many, f"{name}: over {MAX_POSITIONAL} positional parameters: {too_many}"


@pytest.mark.parametrize(
    "name",
    [m for m in MODULES if m == "treelearner/grower.py" or m.startswith("treelearner/learners/")],
)
def test_grower_and_learners_do_not_branch_on_the_histogram_kind(name):
    # One kind object per training (dgbdt.treelearner.histograms) does what differs.
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "quant is None" not in text and "quant is not None" not in text


def _public_api():
    for cls in (
        sklearn.DGBDTModel,
        sklearn.DGBDTRegressor,
        sklearn.DGBDTClassifier,
        sklearn.DGBDTRanker,
    ):
        for attr in ("__init__", "fit", "predict", "predict_proba", "decision_function"):
            if attr in vars(cls):
                yield f"{cls.__name__}.{attr}", vars(cls)[attr]
        for attr in ("feature_importances_", "feature_name_"):
            if attr in vars(cls):
                yield f"{cls.__name__}.{attr}", vars(cls)[attr].fget
    for name in (
        "log_evaluation",
        "record_evaluation",
        "early_stopping",
        "checkpoint",
        "reset_parameter",
    ):
        yield name, getattr(callback, name)
    yield "log_progress", callback.log_progress
    for name in dgbdt.plotting.__all__:
        yield name, getattr(dgbdt.plotting, name)
    for attr in ("dump_model", "get_leaf_output", "lower_bound", "upper_bound"):
        yield f"Booster.{attr}", getattr(dgbdt.Booster, attr)
    yield "cv", dgbdt.cv
    for attr in ("update", "rollback_one_iter", "add_valid", "eval", "eval_train", "eval_valid"):
        yield f"Booster.{attr}", getattr(dgbdt.Booster, attr)
    yield "Booster.refit", dgbdt.Booster.refit
    for cls in (dgbdt.CVBooster, dgbdt.KeyedKFold):
        for attr in ("__init__", "model_to_string", "model_from_string", "save_model", "split"):
            if attr in vars(cls):
                yield f"{cls.__name__}.{attr}", vars(cls)[attr]


@pytest.mark.parametrize(
    "name, func", list(_public_api()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_public_api_hints_resolve(name, func):
    hints = typing.get_type_hints(func)
    params = [p for p in inspect.signature(func).parameters if p not in ("self",)]
    assert "return" in hints, f"{name} has no return hint"
    missing = [p for p in params if p not in hints]
    assert not missing, f"{name}: parameters without hints: {missing}"


def _is_annotated(node):
    """Every parameter but self/cls (``*args`` and ``**kwargs`` too) and the
    return annotated (``__init__`` may leave its return out), as mypy's
    disallow_untyped_defs asks."""
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    if params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += [p for p in (a.vararg, a.kwarg) if p is not None]
    if any(p.annotation is None for p in params):
        return False
    return node.returns is not None or (node.name == "__init__" and bool(params))


def test_every_function_outside_the_kernels_has_type_hints():
    found = [
        (name, node.name, node.lineno, _is_annotated(node))
        for name in MODULES
        for node in ast.walk(ast.parse((ROOT / name).read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    missing = [f"{name}:{line} {function}" for name, function, line, ok in found if not ok]
    share = 1 - len(missing) / len(found)
    print(f"\nfunctions with type hints outside dgbdt.native: {share:.1%} of {len(found)}")
    assert not missing, "functions without type hints:\n" + "\n".join(missing)
