"""conftest warms some kernels by direct calls, best effort (a failure there is
only a warning, so that one changed signature does not fail every test).  This
test makes such a failure visible: the warm-up calls must match the kernels."""

import pathlib
import warnings

CONFTEST = pathlib.Path(__file__).resolve().with_name("conftest.py")


def _conftest_module(config):
    # --import-mode=importlib: conftest is not importable by name; take the
    # module pytest loaded.
    for plugin in config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None)
        if path and pathlib.Path(path).resolve() == CONFTEST:
            return plugin
    raise AssertionError(f"{CONFTEST} is not loaded")


def test_direct_kernel_warmup_matches_kernel_signatures(request):
    conftest = _conftest_module(request.config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        conftest._warm_direct_calls()
