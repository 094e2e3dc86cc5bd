"""Rank script: ndcg@k and map@k over K ranks, each holding whole queries (an
unequal share of them), through evaluation.global_metric and the Evaluator;
then a set whose groups are missing on one rank, refused on every rank alike.

argv: K, out_dir (rank 0 writes ranked.json: {metric: [values]})
"""

import json
import sys

import numpy as np

EVAL_AT = (1, 3, 5)


def rank_data(seed=3, n_queries=23):
    """(label, raw score, weight, query sizes): ties, all-zero, empty and
    one-row queries, and queries shorter than the largest k."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 12, n_queries)
    sizes[:3] = [0, 1, 7]
    n = int(sizes.sum())
    label = rng.integers(0, 4, n).astype(np.float64)
    label[1:8] = 0.0  # query 2: no relevant document
    score = np.round(rng.normal(size=n), 1)  # ties
    weight = rng.uniform(0.5, 2.0, n)
    return label, score, weight, sizes


def query_cut(sizes, k):
    """The query index where rank r's queries start, r = 0 .. k (unequal shares)."""
    fractions = np.cumsum([0.0, *([0.35, 0.65] if k == 2 else np.full(k, 1.0 / k))])
    return np.round(fractions * len(sizes)).astype(int)


def main():
    import dgbdt.params.table
    from dgbdt.boosting.evaluation import EvalSet, Evaluator, global_metric
    from dgbdt.distributed.comm import world_comm
    from dgbdt.objective.metrics import get_metric
    from dgbdt.objective.ranking import query_boundaries

    k, out_dir = int(sys.argv[1]), sys.argv[2]
    comm = world_comm()
    assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
    label, score, weight, sizes = rank_data()
    b = query_boundaries(sizes)
    cut = query_cut(sizes, k)
    q_lo, q_hi = cut[comm.rank], cut[comm.rank + 1]
    rows = slice(b[q_lo], b[q_hi])
    local = (label[rows], score[rows], weight[rows])
    queries = b[q_lo : q_hi + 1] - b[q_lo]
    out = {}
    for name in ("ndcg", "map"):
        kw = {"queries": queries, "eval_at": EVAL_AT}
        out[name] = global_metric(comm, get_metric(name), *local, kw)
    cfg = dgbdt.params.table.resolve_params(
        {"objective": "regression", "metric": ["ndcg", "map"], "eval_at": list(EVAL_AT)}
    )
    es = EvalSet("valid_0", None, local[1][None, :].copy(), local[0], local[2], queries)
    out["evaluator"] = Evaluator([es], cfg, None, 1, comm, None).results()
    es.queries = None if comm.rank == 1 else queries
    try:
        Evaluator([es], cfg, None, 1, comm, None)
        out["refused"] = None
    except ValueError as exc:
        out["refused"] = str(exc)
    if comm.rank == 0:
        with open(f"{out_dir}/ranked.json", "w") as f:
            json.dump(out, f)
    elif out["refused"] is None:
        raise AssertionError("rank 1 accepted a set without groups")


if __name__ == "__main__":
    main()
