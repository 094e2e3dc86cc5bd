"""Data and settings of the constraint tests (shared by tests/test_constraints.py,
tests/test_distributed_constraints.py and tests/mpi/train_constraints.py)."""

import numpy as np

#: monotone directions of the 7 features of sweep_data
SWEEP_MONO = [1, -1, 1, -1, 1, 0, 0]

#: name -> params the distributed tests train with (on top of monotone constraints)
CASES = {
    "basic": {},
    "intermediate": {"monotone_constraints_method": "intermediate", "monotone_penalty": 0.5},
    "smooth_interactions": {
        "path_smooth": 5.0,
        "interaction_constraints": [[0, 1, 5], [2, 3, 4, 6]],
    },
    "extra_bynode": {"extra_trees": True, "feature_fraction_bynode": 0.6},
    "quantized": {"use_quantized_grad": True, "monotone_constraints_method": "intermediate"},
}


def sweep_data(n=3000, seed=0):
    """(X, y) with 7 features: y rises with 0, 2, 4 and falls with 1, 3 over most
    of their range but not everywhere, so unconstrained models break the
    constraints; 5 and 6 are free."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 7))
    y = (
        X[:, 0]
        + np.sin(3 * X[:, 1])
        - X[:, 2] ** 2
        + 0.5 * X[:, 3] * X[:, 4]
        + X[:, 5] * X[:, 0]
        + 0.3 * rng.normal(size=n)
    )
    return X, y


def case_params(name, tree_learner):
    return {
        "objective": "regression",
        "num_leaves": 15,
        "learning_rate": 0.2,
        "min_data_in_leaf": 20,
        "monotone_constraints": SWEEP_MONO,
        "verbosity": -1,
        "tree_learner": tree_learner,
        **CASES[name],
    }
