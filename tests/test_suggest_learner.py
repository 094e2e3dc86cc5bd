"""dgbdt.suggest_tree_learner: the README's rule for a distributed training."""

import pytest

import dgbdt


def test_one_rank_is_serial():
    advice = dgbdt.suggest_tree_learner(10_000, 10, 1)
    assert advice["tree_learner"] == "serial" and not advice["use_quantized_grad"]


def test_few_features_on_a_fast_network_stay_data_parallel():
    advice = dgbdt.suggest_tree_learner(10_000_000, 28, 8, 10.0)
    assert advice["tree_learner"] == "data"
    assert not advice["use_quantized_grad"]
    assert "data-parallel" in advice["reason"]


def test_wide_data_on_a_slow_network_votes_with_quantized_gradients():
    fast = dgbdt.suggest_tree_learner(500_000, 500, 2, 10.0)
    slow = dgbdt.suggest_tree_learner(500_000, 500, 2, 0.1)
    assert slow["tree_learner"] == "voting" and slow["use_quantized_grad"]
    assert "quantized" in slow["reason"]
    # the slower the link, the dearer data-parallel against voting
    ratio = {a["estimates"]["data"] / a["estimates"]["voting"] for a in (fast, slow)}
    assert max(ratio) > 2 * min(ratio)


def test_feature_parallel_only_where_every_rank_holds_every_row():
    sharded = dgbdt.suggest_tree_learner(20_000, 2_000, 4, 1.0)
    replicated = dgbdt.suggest_tree_learner(20_000, 2_000, 4, 1.0, same_rows_on_every_rank=True)
    assert "feature" not in sharded["estimates"] and sharded["tree_learner"] != "feature"
    assert replicated["tree_learner"] == "feature"


@pytest.mark.parametrize(
    "args, culprit",
    [((0, 10, 2), "num_rows"), ((10, 0, 2), "num_features"), ((10, 10, 0), "num_ranks")],
)
def test_bad_sizes_are_named(args, culprit):
    with pytest.raises(ValueError, match=culprit):
        dgbdt.suggest_tree_learner(*args)
