"""Tests of the static LightGBM key table and the plain-text parameter listing."""

import pytest

from dgbdt.params.lightgbm_keys import LIGHTGBM_ALIASES, LIGHTGBM_PARAMS, lightgbm_canonical
from dgbdt.params.table import PARAMS, params_table_text

DGBDT_ONLY = {
    "voting_rule",
    "check_consistency",
    "cat_high_cardinality_rows",
    "comm_pipeline",
}  # as in test_params.py
#: dgbdt's aliases LightGBM 4.7 no longer knows (max_position: LightGBM 2's name)
DGBDT_ALIASES = {"max_position"}


def test_table_matches_installed_lightgbm():
    pytest.importorskip("lightgbm")
    from lightgbm.basic import _ConfigAliases

    dump = _ConfigAliases._get_all_param_aliases()  # canonical -> [canonical, *aliases]
    for name, keys in dump.items():
        for key in keys:
            assert lightgbm_canonical(key) == name, (key, name)
    assert set(LIGHTGBM_PARAMS) == set(dump)
    assert len(LIGHTGBM_ALIASES) == sum(len(set(keys) | {name}) for name, keys in dump.items())


def test_table_is_unambiguous():
    keys = [k for name, aliases in LIGHTGBM_PARAMS.items() for k in (name, *aliases)]
    assert len(keys) == len(set(keys)) == len(LIGHTGBM_ALIASES)


@pytest.mark.parametrize(
    "key,name",
    [
        ("num_iterations", "num_iterations"),
        ("n_estimators", "num_iterations"),
        ("eta", "learning_rate"),
        (" num_leaf ", "num_leaves"),
        ("task", "task"),
        ("config_file", "config"),
        ("save_binary", "save_binary"),
        ("is_save_binary", "save_binary"),
        ("gpu_device_id", "gpu_device_id"),
        ("mlist", "machine_list_filename"),
    ],
)
def test_lightgbm_canonical_resolves(key, name):
    assert lightgbm_canonical(key) == name


@pytest.mark.parametrize("key", ["", "nonsense", "learning-rate", "NUM_LEAVES", "voting_rule"])
def test_lightgbm_canonical_unknown(key):
    assert lightgbm_canonical(key) is None


def test_dgbdt_names_agree_with_lightgbm():
    for name, p in PARAMS.items():
        if name in DGBDT_ONLY:
            continue
        for key in (name, *p.aliases):
            if key not in DGBDT_ALIASES:
                assert lightgbm_canonical(key) == name, (key, name)


def test_params_table_text():
    for width in (100, 60):
        text = params_table_text(width)
        lines = text.splitlines()
        assert all(len(line) <= width for line in lines)
        heads = [line.split()[0] for line in lines if line and not line[0].isspace()]
        assert heads == list(PARAMS)  # every parameter, in table order
    text = params_table_text()
    assert "num_iterations (aliases: " in text and "default: 100" in text
    assert "\n    Maximum tree depth" in text
