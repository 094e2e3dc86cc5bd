"""Quantized training: per-tree gradient scales and integer gradients.

Per tree, one scale for gradients and one for hessians from the largest
magnitude over every rank's rows (an exact max, allreduced), so all ranks
quantize alike; stochastic rounding draws from (seed, tree, global row), so a
row gets the same integers however the rows are sharded.  Integer histograms
then add up exactly in any order, which makes data-parallel training give
the same model on any number of ranks.  See native/quantize.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..distributed.exact_sum import grouped_exact_sums
from ..native.quantize import NARROW_DTYPE, QUANT_DTYPE, pack_words, quantize_gradients
from ..native.split import leaf_output
from ..streams import STREAM_QUANTIZE, stream_key

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm
    from ..models.tree import Tree
    from .grower import TreeGrower


class GradientQuantizer:
    """Integer gradients of one tree: ``q_g``, ``q_h``, their scales, and every
    row's narrow word ``row_words`` (native.quantize.pack_words).

    ``g_scale`` maps an integer gradient back to a float one; a leaf's
    gradient sum is ``sum(q_g) * g_scale``.
    """

    def __init__(
        self, cfg: dict[str, Any], n_samples: int, row_offset: int, row_comm: SerialComm
    ) -> None:
        self.n_bins = cfg["num_grad_quant_bins"]
        self.stochastic = cfg["stochastic_rounding"]
        self.seed = cfg["seed"] & 0x7FFFFFFF
        self.row_offset = row_offset
        self.row_comm = row_comm
        self.q_g = np.zeros(n_samples, QUANT_DTYPE)
        self.q_h = np.zeros(n_samples, QUANT_DTYPE)
        self.row_words = np.zeros(n_samples, NARROW_DTYPE)
        self.g_scale = self.h_scale = 1.0

    def quantize(
        self, gradients: np.ndarray, hessians: np.ndarray, tree_index: int
    ) -> GradientQuantizer:
        local = np.zeros(2)
        if len(gradients):
            local[:] = np.max(np.abs(gradients)), np.max(np.abs(hessians))
        g_max, h_max = self.row_comm.greatest(local)
        # Gradients spread over [-(B // 2), B // 2], hessians (>= 0) over [0, B]:
        # LightGBM's scales, integer division included (B = 3 gives 3 levels).
        self.g_scale = g_max / (self.n_bins // 2) if g_max > 0 else 1.0
        self.h_scale = h_max / self.n_bins if h_max > 0 else 1.0
        quantize_gradients(
            gradients,
            hessians,
            1.0 / self.g_scale if g_max > 0 else 0.0,
            1.0 / self.h_scale if h_max > 0 else 0.0,
            self.n_bins,
            self.seed,
            stream_key(STREAM_QUANTIZE, tree_index),
            self.row_offset,
            self.stochastic,
            self.q_g,
            self.q_h,
        )
        pack_words(self.q_g, self.q_h, self.row_words)
        return self


def renew_leaf_values(
    tree: Tree,
    grower: TreeGrower,
    gradients: np.ndarray,
    hessians: np.ndarray,
    row_comm: SerialComm,
    cfg: dict[str, Any],
) -> None:
    """Leaf values from the original float gradients (``quant_train_renew_leaf``):
    each leaf's sums over every rank's rows, exact (dgbdt.distributed.exact_sum), so the
    leaf values do not depend on the number of ranks either."""
    n_leaves = tree.n_leaves
    begin, count = grower.leaf_begin[:n_leaves], grower.leaf_count[:n_leaves]
    sum_g = grouped_exact_sums(row_comm, gradients, grower.sample_indices, begin, count)
    sum_h = grouped_exact_sums(row_comm, hessians, grower.sample_indices, begin, count)
    for leaf in range(n_leaves):
        tree.leaf_value[leaf] = leaf_output(
            sum_g[leaf], sum_h[leaf], cfg["lambda_l1"], cfg["lambda_l2"], cfg["max_delta_step"]
        )
