"""Data for dgbdt's tests, examples and benchmarks.

Two kinds of data live here:

* **Synthetic generators** shaped like the HIGGS data set (Baldi et al., 2014):
  :func:`make_higgs_like` (binary), :func:`make_regression_like` and
  :func:`make_multiclass_like`.  They need nothing but numpy, are deterministic
  for a seed, and generate in fixed-size chunks so that a million rows take
  about a second and little memory beyond the result.
* **A loader** for the small real example files that sit beside every
  developer and CI checkout in ``../shared/datasets/lightgbm/``:
  :func:`load_lightgbm_example`.  Users who clone the project do not have
  them, so tests that use them skip when :func:`find_shared_datasets` returns
  ``None``.

The synthetic problem
---------------------
Every generator draws the same 28 "detector" columns, in HIGGS's order::

    0 lepton pT   1 lepton eta   2 lepton phi   3 missing-energy magnitude
    4 missing-energy phi
    5..8   jet 1 pT, eta, phi, b-tag      9..12  jet 2 ...
    13..16 jet 3 ...                      17..20 jet 4 ...
    21 m_jj  22 m_jjj  23 m_lv  24 m_jlv  25 m_bb  26 m_wbb  27 m_wwbb

pT-like columns are positive and skewed (gamma), eta is a clipped normal, phi
is uniform, and the four b-tag columns (8, 12, 16, 20, as in LightGBM's
``binary.train``) are discrete with about half exact zeros.  Columns 21..27
are invariant masses of the massless four-vectors built from the low-level
columns, smeared by a multiplicative detector resolution.

The targets are functions of eight standardised nonlinear "physics" terms
(resonance bumps in true masses, b-tag counts, an angular interaction, ...)
computed from the *unsmeared* low-level columns.  A tree model finds most of
the signal quickly through the smeared masses and keeps improving for many
rounds by reconstructing the exact values from the low-level columns, which
is what makes HIGGS a good GBDT benchmark.  The problem itself (the target
function) never depends on ``seed``: only the sample does, so data drawn with
two seeds are a train and a test set of the same problem.

Rows are produced in chunks of ``_CHUNK_ROWS`` whose random streams are
derived from ``(problem, seed, chunk index)``; hence the first ``n`` rows of
a call with ``n_samples=m > n`` equal a call with ``n_samples=n``, and the
first 28 columns and the target do not depend on ``n_features``.
"""

from __future__ import annotations

import functools
import os
import pathlib

import numpy as np

__all__ = [
    "make_higgs_like",
    "make_regression_like",
    "make_multiclass_like",
    "load_lightgbm_example",
    "find_shared_datasets",
    "N_HIGGS_FEATURES",
    "DISCRETE_FEATURES",
]

#: number of HIGGS-shaped columns; further columns are pure noise
N_HIGGS_FEATURES = 28
#: the b-tag columns: discrete values {0, 1.087, 2.173}, about half exact zeros
DISCRETE_FEATURES = (8, 12, 16, 20)

# 32768 rows x ~60 float64 temporaries is ~16 MB per chunk: small next to the
# result, so peak memory stays near the output's own size (benchmarks measure
# peak RSS in the same process right after generating).
_CHUNK_ROWS = 32768

# Stream identifiers, so that the three generators draw independent samples.
_KIND_BINARY, _KIND_REGRESSION, _KIND_MULTICLASS = 1, 2, 3

_BTAG_VALUES = np.array([0.0, 1.0868, 2.1731])
_BTAG_PROBS = np.array([0.52, 0.18, 0.30])
# HIGGS stores phi scaled to about [-1.74, 1.74]
_PHI_SCALE = 1.74 / np.pi

# Mean and standard deviation of the eight physics terms (see _physics_terms),
# measured once on 4,000,000 rows; they standardise the terms so that fixed
# weights give balanced labels.  Changing _physics_terms means re-measuring.
_TERM_MEAN = np.array(
    [0.205102, 0.294430, 0.272228, 2.070686, -0.045774, 0.000123, -1.224395, -0.000173]
)
_TERM_STD = np.array(
    [0.324578, 0.356613, 0.354474, 1.098482, 0.713907, 0.352915, 1.398812, 0.615451]
)

# Weights of the standardised terms in the binary logit, and its offset.
# They set the Bayes-optimal AUC of the problem (about 0.946); mean label 0.496.
_BINARY_WEIGHTS = np.array([1.5, 1.3, 1.3, 1.3, 1.2, 1.4, 1.2, 1.2])
_BINARY_OFFSET = 0.0
_REGRESSION_WEIGHTS = np.array([1.0, -0.8, 1.2, 0.6, 1.0, -1.0, 0.8, 0.9])
_REGRESSION_NOISE = 1.375


# --------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------


def _check_args(n_samples, n_features, seed, dtype):
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
    if (
        isinstance(n_features, bool)
        or not isinstance(n_features, (int, np.integer))
        or n_features < 1
    ):
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a floating-point dtype, got {dtype}")
    return int(n_samples), int(n_features), int(seed), dtype


def _chunk_rng(kind, seed, chunk_idx):
    return np.random.default_rng(np.random.SeedSequence([kind, seed, chunk_idx]))


def _four_vector(pt, eta, phi):
    """Massless (E, px, py, pz) of an object with transverse momentum pt."""
    return np.stack([pt * np.cosh(eta), pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)])


def _mass(*vectors):
    """Invariant mass of the sum of four-vectors (each shaped (4, n))."""
    total = vectors[0].copy()
    for v in vectors[1:]:
        total += v
    m2 = total[0] ** 2 - total[1] ** 2 - total[2] ** 2 - total[3] ** 2
    return np.sqrt(np.maximum(m2, 0.0))


def _bump(x, center, width):
    return np.exp(-0.5 * ((x - center) / width) ** 2)


def _physics_chunk(rng, n):
    """Draw n rows of the 28 HIGGS-shaped columns.

    Returns (features, terms): features float64 (n, 28); terms float64 (n, 8),
    the raw (unstandardised) physics terms the targets are built from.
    """
    f = np.empty((n, N_HIGGS_FEATURES))
    lep_pt = rng.gamma(3.0, 1.0 / 3.0, n)
    lep_eta = np.clip(rng.normal(0.0, 1.0, n), -2.5, 2.5)
    lep_phi = rng.uniform(-np.pi, np.pi, n)
    met = rng.gamma(2.0, 0.5, n)
    met_phi = rng.uniform(-np.pi, np.pi, n)
    # Jets ordered by pT, leading first, as in HIGGS.
    jet_pt = -np.sort(-rng.gamma(2.5, 0.4, (n, 4)), axis=1)
    jet_eta = np.clip(rng.normal(0.0, 1.1, (n, 4)), -2.5, 2.5)
    jet_phi = rng.uniform(-np.pi, np.pi, (n, 4))
    jet_btag = _BTAG_VALUES[rng.choice(3, size=(n, 4), p=_BTAG_PROBS)]

    f[:, 0], f[:, 1], f[:, 2] = lep_pt, lep_eta, lep_phi * _PHI_SCALE
    f[:, 3], f[:, 4] = met, met_phi * _PHI_SCALE
    for j in range(4):
        c = 5 + 4 * j
        f[:, c], f[:, c + 1] = jet_pt[:, j], jet_eta[:, j]
        f[:, c + 2], f[:, c + 3] = jet_phi[:, j] * _PHI_SCALE, jet_btag[:, j]

    lep = _four_vector(lep_pt, lep_eta, lep_phi)
    nu = _four_vector(met, np.zeros(n), met_phi)  # longitudinal momentum unknown
    jets = [_four_vector(jet_pt[:, j], jet_eta[:, j], jet_phi[:, j]) for j in range(4)]
    m_jj = _mass(jets[0], jets[1])
    m_jjj = _mass(jets[0], jets[1], jets[2])
    m_lv = _mass(lep, nu)
    m_jlv = _mass(jets[0], lep, nu)
    m_bb = _mass(jets[2], jets[3])
    m_wbb = _mass(jets[1], jets[2], jets[3])
    m_wwbb = _mass(lep, nu, jets[0], jets[1], jets[2], jets[3])
    masses = np.stack([m_jj, m_jjj, m_lv, m_jlv, m_bb, m_wbb, m_wwbb], axis=1)
    # Detector resolution: the stored masses are smeared, the targets use the
    # exact ones, so the low-level columns keep carrying information.
    smear = 1.0 + 0.08 * rng.standard_normal((n, 7))
    f[:, 21:28] = np.abs(masses * smear)

    n_btag = (jet_btag > 0).sum(axis=1)
    ht = jet_pt.sum(axis=1) + lep_pt
    cos_lep_met = np.cos(lep_phi - met_phi)
    terms = np.stack(
        [
            _bump(m_jj, 1.3, 0.35),  # resonance in the leading jets
            _bump(m_lv, 0.9, 0.25),  # W-like peak, lepton + MET
            _bump(m_bb, 1.0, 0.3) * (n_btag >= 2),  # b-tagged resonance
            n_btag + 0.5 * (jet_btag[:, 0] > 1.5),  # b-tag multiplicity
            np.tanh(ht - 5.0),  # hardness of the event
            cos_lep_met * np.tanh(met - 1.0),  # angular x energy interaction
            lep_eta * jet_eta[:, 0] - np.abs(jet_eta[:, 0] - jet_eta[:, 1]),
            np.sin(2.0 * (jet_phi[:, 0] - jet_phi[:, 1])) * (jet_pt[:, 1] > 0.8),
        ],
        axis=1,
    )
    return f, terms


def _standardised_terms(terms):
    return (terms - _TERM_MEAN) / _TERM_STD


def _generate(kind, n_samples, n_features, seed, dtype, make_target, target_shape_dtype):
    """Fill X (n_samples, n_features) and y chunk by chunk.

    make_target(rng, z) -> y_chunk draws the target from standardised terms z
    with the chunk's generator, after the features and before any noise
    columns, so that the target does not depend on n_features.
    """
    X = np.empty((n_samples, n_features), dtype=dtype)
    y = np.empty(n_samples, dtype=target_shape_dtype)
    n_physics = min(n_features, N_HIGGS_FEATURES)
    for chunk_idx, start in enumerate(range(0, n_samples, _CHUNK_ROWS)):
        stop = min(start + _CHUNK_ROWS, n_samples)
        m = stop - start
        # Always draw a full chunk and keep the first m rows: the draws then
        # never depend on n_samples, which gives the prefix property.
        rng = _chunk_rng(kind, seed, chunk_idx)
        feats, terms = _physics_chunk(rng, _CHUNK_ROWS)
        y[start:stop] = make_target(rng, _standardised_terms(terms))[:m]
        X[start:stop, :n_physics] = feats[:m, :n_physics]
        if n_features > N_HIGGS_FEATURES:
            noise = rng.standard_normal((_CHUNK_ROWS, n_features - N_HIGGS_FEATURES))
            X[start:stop, N_HIGGS_FEATURES:] = noise[:m]
    return X, y


def make_higgs_like(n_samples, n_features=N_HIGGS_FEATURES, seed=0, dtype=np.float32):
    """Binary classification data shaped like HIGGS.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    n_features : int, default 28
        Columns beyond 28 are uninformative standard normals; fewer than 28
        keeps the first ``n_features`` (the target still uses all 28).
    seed : int, default 0
        Non-negative seed of the sample (the problem itself is fixed).
    dtype : numpy floating dtype, default float32

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), C order, ``dtype``
    y : ndarray of shape (n_samples,), float64, values 0.0 / 1.0, about half ones

    Notes
    -----
    Labels are Bernoulli draws from ``sigmoid(logit)``, so the Bayes-optimal
    test AUC is about 0.946.  LightGBM 4.7 with 255 leaves, learning rate 0.1
    on 1,000,000 rows reaches test AUC about 0.85 / 0.89 / 0.899 after 10 / 50
    / 100 rounds (still improving); on 100,000 rows 0.863 / 0.892 after
    20 / 100 rounds.
    Generating 1,000,000 x 28 float32 takes about 1 s and ~50 MB beyond the
    result.
    """
    n_samples, n_features, seed, dtype = _check_args(n_samples, n_features, seed, dtype)

    def target(rng, z):
        logit = z @ _BINARY_WEIGHTS + _BINARY_OFFSET
        u = rng.random(len(z))
        return (u * (1.0 + np.exp(-logit)) < 1.0).astype(np.float64)  # u < sigmoid(logit)

    return _generate(_KIND_BINARY, n_samples, n_features, seed, dtype, target, np.float64)


def make_regression_like(n_samples, n_features=N_HIGGS_FEATURES, seed=0, dtype=np.float32):
    """Regression data on the HIGGS-shaped columns.

    The target is a fixed weighted sum of the standardised physics terms plus
    Gaussian noise: var(y) is about 9.5, of which the noise-free part explains
    80% (noise standard deviation 1.375).
    Arguments as in :func:`make_higgs_like`; ``y`` is float64.
    """
    n_samples, n_features, seed, dtype = _check_args(n_samples, n_features, seed, dtype)

    def target(rng, z):
        return z @ _REGRESSION_WEIGHTS + _REGRESSION_NOISE * rng.standard_normal(len(z))

    return _generate(_KIND_REGRESSION, n_samples, n_features, seed, dtype, target, np.float64)


@functools.lru_cache(maxsize=8)
def _multiclass_problem(n_classes):
    """Class weights (8, n_classes) and biases (n_classes,) of the problem.

    They depend on n_classes only, never on the sample's seed.  The biases
    are fitted on a fixed reference sample so that every class has about the
    same prior probability (the terms are skewed and correlated, so random
    weights alone favour some classes).
    """
    rng = np.random.default_rng(np.random.SeedSequence([_KIND_MULTICLASS, 20240, n_classes]))
    w = rng.normal(0.0, 1.0, (len(_TERM_MEAN), n_classes))
    w -= w.mean(axis=1, keepdims=True)
    w *= 2.0 / np.linalg.norm(w, axis=0)  # equal score spread for every class
    _, terms = _physics_chunk(_chunk_rng(_KIND_MULTICLASS, 2**31, 0), _CHUNK_ROWS)
    scores = _standardised_terms(terms) @ w
    b = np.zeros(n_classes)
    for _ in range(30):  # fixed-point iteration on the mean softmax
        s = scores + b
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        b -= np.log(p.mean(axis=0) * n_classes)
    return w, b


def make_multiclass_like(
    n_samples, n_features=N_HIGGS_FEATURES, n_classes=5, seed=0, dtype=np.float32
):
    """Multiclass data on the HIGGS-shaped columns.

    Class scores are fixed random linear combinations of the standardised
    physics terms; labels are drawn from their softmax (Gumbel-max), so the
    problem is learnable but noisy.  Arguments as in :func:`make_higgs_like`;
    ``y`` is float64 with values ``0 .. n_classes-1``.
    """
    n_samples, n_features, seed, dtype = _check_args(n_samples, n_features, seed, dtype)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    weights, biases = _multiclass_problem(int(n_classes))

    def target(rng, z):
        scores = z @ weights + biases + rng.gumbel(size=(len(z), len(biases)))
        return scores.argmax(axis=1).astype(np.float64)

    return _generate(_KIND_MULTICLASS, n_samples, n_features, seed, dtype, target, np.float64)


# --------------------------------------------------------------------------
# the shared example files
# --------------------------------------------------------------------------

_EXAMPLES = ("binary", "regression", "multiclass")


def find_shared_datasets():
    """Locate the ``shared/datasets`` folder that sits beside a checkout.

    Looks at ``$DGBDT_SHARED_DATASETS`` first, then walks up from the current
    working directory and from this file's location; at every level it
    accepts ``<level>/shared/datasets`` (a checkout at /work/main with
    /work/shared beside it, or a CI clone with ``../shared``).

    Returns
    -------
    pathlib.Path or None
        ``None`` when the folder is absent (a user's clone): tests skip then.
    """
    env = os.environ.get("DGBDT_SHARED_DATASETS")
    if env:
        p = pathlib.Path(env)
        return p if p.is_dir() else None
    starts = [pathlib.Path.cwd(), pathlib.Path(__file__).resolve().parent]
    for start in starts:
        for level in [start, *start.parents]:
            candidate = level / "shared" / "datasets"
            if candidate.is_dir():
                return candidate
    return None


def _read_table(path):
    import pandas as pd  # only the loader needs pandas

    return pd.read_csv(path, sep="\t", header=None, dtype=np.float64).to_numpy()


def _read_column(path):
    return np.loadtxt(path, dtype=np.float64, ndmin=1)


def load_lightgbm_example(name, root=None):
    """Load one of LightGBM's example problems from ``shared/datasets/lightgbm``.

    Parameters
    ----------
    name : {'binary', 'regression', 'multiclass'}
        Reads ``<name>.train`` and ``<name>.test``: tab-separated, no header,
        label in column 0, 28 features.
    root : path-like, optional
        The ``shared/datasets`` folder (or its ``lightgbm`` subfolder).
        Defaults to :func:`find_shared_datasets`.

    Returns
    -------
    dict
        ``X_train``, ``y_train``, ``X_test``, ``y_test`` (float64 arrays), plus
        ``weight_train`` / ``weight_test`` when ``<file>.weight`` exists and
        ``init_score_train`` / ``init_score_test`` when ``<file>.init`` exists.

    Raises
    ------
    ValueError
        for an unknown ``name``.
    FileNotFoundError
        when the folder or a file is missing (the message names it).
    """
    if name not in _EXAMPLES:
        raise ValueError(f"name must be one of {_EXAMPLES}, got {name!r}")
    if root is None:
        root = find_shared_datasets()
        if root is None:
            raise FileNotFoundError(
                "shared/datasets not found beside the checkout; pass root= or set DGBDT_SHARED_DATASETS"
            )
    root = pathlib.Path(root)
    folder = root / "lightgbm" if (root / "lightgbm").is_dir() else root
    out = {}
    for part in ("train", "test"):
        path = folder / f"{name}.{part}"
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist")
        table = _read_table(path)
        out[f"X_{part}"] = np.ascontiguousarray(table[:, 1:])
        out[f"y_{part}"] = np.ascontiguousarray(table[:, 0])
        for suffix, key in (("weight", "weight"), ("init", "init_score")):
            side = folder / f"{name}.{part}.{suffix}"
            if side.is_file():
                values = _read_column(side)
                if len(values) != len(table):
                    raise ValueError(f"{side} has {len(values)} rows, {path} has {len(table)}")
                out[f"{key}_{part}"] = values
    return out
