"""Plots of a model: LightGBM's ``lightgbm.plotting``, for dgbdt models.

``plot_importance``, ``plot_split_value_histogram``, ``plot_metric``,
``create_tree_digraph`` and ``plot_tree`` take LightGBM 4.7's parameters, in
its order and with its defaults, and draw what it draws.  They accept a
:class:`dgbdt.Booster` or a fitted dgbdt estimator (``plot_metric``: a
:func:`dgbdt.record_evaluation` dict or an estimator, whose ``evals_result_``
it plots).  Trees are read from ``Booster.dump_model(format="lightgbm")``,
LightGBM's view of the model (the starting score in the first tree of each
class).

matplotlib and graphviz are optional: they are imported when a plot is made,
and a missing one is an ImportError saying what to install.  ``plot_tree``
also needs Graphviz's ``dot`` program to render the graph.

Differences from LightGBM: parameters after the eighth are keyword-only (no one
passes so many by position; dgbdt's readability rule, tests/test_structure.py),
and ``orientation`` other than "horizontal" / "vertical" is a ValueError where
LightGBM draws vertically.
"""

from __future__ import annotations

import math
from copy import deepcopy
from io import BytesIO
from typing import TYPE_CHECKING, Any

import numpy as np

from .booster import Booster
from .data.inputs import frame_as_float64
from .log import log_warning

if TYPE_CHECKING:
    from graphviz import Digraph  # noqa: PLC0415 - optional dependency
    from matplotlib.axes import Axes  # noqa: PLC0415 - optional dependency
    from pandas import DataFrame

    from .sklearn import DGBDTModel  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)
else:
    # The optional packages (and scikit-learn, pandas) stay unimported until a
    # plot is made: at run time the hints resolve to Any (typing.get_type_hints),
    # type checkers see the classes.
    Axes = DataFrame = Digraph = DGBDTModel = Any

__all__ = [
    "create_tree_digraph",
    "plot_importance",
    "plot_metric",
    "plot_split_value_histogram",
    "plot_tree",
]

#: LightGBM's kZeroThreshold: |x| <= it is zero (missing type Zero)
ZERO_THRESHOLD = 1e-35
_SHOW_INFO_NODE = ("split_gain", "internal_value", "internal_weight")


def _pyplot(what: str) -> Any:
    try:
        import matplotlib.pyplot as plt  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(f"{what} needs matplotlib: pip install matplotlib") from exc
    return plt


def _as_booster(booster: Booster | DGBDTModel) -> tuple[Booster, DGBDTModel | None]:
    """(the Booster, the estimator or None) of a Booster or a fitted estimator."""
    if isinstance(booster, Booster):
        return booster, None
    from .sklearn import DGBDTModel  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)

    if isinstance(booster, DGBDTModel):
        from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)

        check_is_fitted(booster, "booster_")
        return booster.booster_, booster
    raise TypeError(f"booster must be Booster or DGBDTModel, got {type(booster).__name__}.")


def _check_not_tuple_of_2_elements(obj: object, obj_name: str) -> None:
    if not isinstance(obj, tuple) or len(obj) != 2:
        raise TypeError(f"{obj_name} must be a tuple of 2 elements.")


def _float2str(value: Any, precision: int | None) -> str:
    if precision is not None and not isinstance(value, str):
        return f"{value:.{precision}f}"
    return str(value)


def _new_axes(
    plt: Any, ax: Axes | None, figsize: tuple[float, float] | None, dpi: int | None
) -> Axes:
    if ax is None:
        if figsize is not None:
            _check_not_tuple_of_2_elements(figsize, "figsize")
        _, ax = plt.subplots(1, 1, figsize=figsize, dpi=dpi)
    return ax


def _limits(
    ax: Axes,
    xlim: tuple[float, float] | None,
    ylim: tuple[float, float] | None,
    default_x: tuple[float, float],
    default_y: tuple[float, float],
) -> None:
    """Set the axes' limits: the given tuples (checked), else the defaults."""
    if xlim is not None:
        _check_not_tuple_of_2_elements(xlim, "xlim")
    ax.set_xlim(default_x if xlim is None else xlim)
    if ylim is not None:
        _check_not_tuple_of_2_elements(ylim, "ylim")
    ax.set_ylim(default_y if ylim is None else ylim)


def _labels(
    ax: Axes, title: str | None, xlabel: str | None, ylabel: str | None, grid: bool
) -> None:
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(grid)


def _importances(
    booster: Booster | DGBDTModel,
    importance_type: str,
    ignore_zero: bool,
    max_num_features: int | None,
) -> tuple[tuple[str, ...], tuple[Any, ...], str]:
    """(names, values, importance type) to plot, least important first."""
    booster, estimator = _as_booster(booster)
    if importance_type == "auto":
        importance_type = estimator.importance_type if estimator is not None else "split"
    importance = booster.feature_importance(importance_type=importance_type)
    if not len(importance):
        raise ValueError("Booster's feature_importance is empty.")
    tuples = sorted(zip(booster.feature_name(), importance, strict=True), key=lambda x: x[1])
    if ignore_zero:
        tuples = [x for x in tuples if x[1] > 0]
    if max_num_features is not None and max_num_features > 0:
        tuples = tuples[-max_num_features:]
    if not tuples:
        raise ValueError(
            "No non-zero feature importances found. The model may have no splits. "
            "Use ignore_zero=False to show all features."
        )
    labels, values = zip(*tuples, strict=True)  # (name, importance) pairs
    return labels, values, importance_type


def plot_importance(
    booster: Booster | DGBDTModel,
    ax: Axes | None = None,
    height: float = 0.2,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    title: str | None = "Feature importance",
    xlabel: str | None = "Feature importance",
    ylabel: str | None = "Features",
    *,
    importance_type: str = "auto",
    max_num_features: int | None = None,
    ignore_zero: bool = True,
    figsize: tuple[float, float] | None = None,
    dpi: int | None = None,
    grid: bool = True,
    precision: int | None = 3,
    **kwargs: Any,
) -> Axes:
    """Plot the model's feature importances: one horizontal bar per feature,
    the most important at the top (LightGBM's ``plot_importance``).

    ``importance_type``: "split" (times used), "gain" (total gain), or "auto":
    an estimator's ``importance_type``, "split" for a Booster.
    ``max_num_features``: the most important ones only (None or < 1: all);
    ``ignore_zero``: leave out features of zero importance.  ``xlabel`` may
    hold ``@importance_type@``.  ``precision``: decimals of the gain values
    written by the bars.  ``xlim``, ``ylim``, ``figsize``: 2-tuples.  Other
    keyword arguments go to ``ax.barh()``.  Returns the matplotlib Axes (a
    new figure's when ``ax`` is None).
    """
    plt = _pyplot("plot_importance")
    labels, values, importance_type = _importances(
        booster, importance_type, ignore_zero, max_num_features
    )
    ax = _new_axes(plt, ax, figsize, dpi)
    ylocs = np.arange(len(values))
    ax.barh(ylocs, values, align="center", height=height, **kwargs)
    for x, y in zip(values, ylocs, strict=True):
        text = _float2str(x, precision) if importance_type == "gain" else x
        ax.text(x + 1, float(y), text, va="center")
    ax.set_yticks(ylocs)
    ax.set_yticklabels(labels)
    _limits(ax, xlim, ylim, (0, max(values) * 1.1), (-1, len(values)))
    if xlabel is not None:
        xlabel = xlabel.replace("@importance_type@", importance_type)
    _labels(ax, title, xlabel, ylabel, grid)
    return ax


def plot_split_value_histogram(
    booster: Booster | DGBDTModel,
    feature: int | str,
    bins: int | str | None = None,
    ax: Axes | None = None,
    width_coef: float = 0.8,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    title: str | None = "Split value histogram for feature with @index/name@ @feature@",
    *,
    xlabel: str | None = "Feature split value",
    ylabel: str | None = "Count",
    figsize: tuple[float, float] | None = None,
    dpi: int | None = None,
    grid: bool = True,
    **kwargs: Any,
) -> Axes:
    """Plot the histogram of the split thresholds of ``feature`` (an index or
    a name) in the model (LightGBM's ``plot_split_value_histogram``; see
    :meth:`dgbdt.Booster.get_split_value_histogram` for ``bins``).

    ``width_coef``: the bars' width as a fraction of a bin's.  ``title`` may
    hold ``@feature@`` and ``@index/name@``.  A feature never split on is a
    ValueError.  Other keyword arguments go to ``ax.bar()``.  Returns the
    matplotlib Axes.
    """
    plt = _pyplot("plot_split_value_histogram")
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415 - optional dependency

    booster, _ = _as_booster(booster)
    hist, split_bins = booster.get_split_value_histogram(
        feature=feature, bins=bins, xgboost_style=False
    )
    if np.count_nonzero(hist) == 0:
        raise ValueError(
            f"Cannot plot split value histogram, because feature {feature} was not used in splitting"
        )
    width = width_coef * (split_bins[1] - split_bins[0])
    centred = (split_bins[:-1] + split_bins[1:]) / 2
    ax = _new_axes(plt, ax, figsize, dpi)
    ax.bar(centred, hist, align="center", width=width, **kwargs)
    span = split_bins[-1] - split_bins[0]
    default_x = (split_bins[0] - span * 0.2, split_bins[-1] + span * 0.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _limits(ax, xlim, ylim, default_x, (0, max(hist) * 1.1))
    if title is not None:
        title = title.replace("@feature@", str(feature))
        title = title.replace("@index/name@", "name" if isinstance(feature, str) else "index")
    _labels(ax, title, xlabel, ylabel, grid)
    return ax


def _eval_results(booster: dict | DGBDTModel) -> dict[str, dict[str, list[float]]]:
    """A deep copy of the recorded evaluation results to plot."""
    if isinstance(booster, dict):
        results = deepcopy(booster)
    elif isinstance(booster, Booster):
        raise TypeError(
            "booster must be dict or DGBDTModel. To use plot_metric with Booster type, "
            "first record the metrics using record_evaluation callback then pass that "
            "to plot_metric as argument `booster`"
        )
    else:
        _, estimator = _as_booster(booster)  # the TypeError for other types
        assert estimator is not None  # not a Booster: an estimator
        results = deepcopy(estimator.evals_result_)
    if not results:
        raise ValueError("eval results cannot be empty.")
    return results


def _metric_series(
    results: dict[str, dict[str, list[float]]],
    metric: str | None,
    dataset_names: list[str] | None,
) -> tuple[str, list[tuple[str, list[float]]]]:
    """(metric, [(dataset name, values), ...]) to plot."""
    if dataset_names is None:
        names = list(results)
    elif not isinstance(dataset_names, (list, tuple, set)) or not dataset_names:
        raise ValueError("dataset_names should be iterable and cannot be empty")
    else:
        names = list(dataset_names)
    first = results[names[0]]
    if metric is None:
        if len(first) > 1:
            log_warning("More than one metric available, picking one to plot.")  # (LightGBM's)
        metric = list(first)[-1]  # LightGBM's dict.popitem(): the last one
    elif metric not in first:
        raise KeyError("No given metric in eval results.")
    return metric, [(name, results[name][metric]) for name in names]


def plot_metric(
    booster: dict | DGBDTModel,
    metric: str | None = None,
    dataset_names: list[str] | None = None,
    ax: Axes | None = None,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    title: str | None = "Metric during training",
    xlabel: str | None = "Iterations",
    *,
    ylabel: str | None = "@metric@",
    figsize: tuple[float, float] | None = None,
    dpi: int | None = None,
    grid: bool = True,
) -> Axes:
    """Plot one metric during training, one line per data set (LightGBM's
    ``plot_metric``).

    ``booster``: the dict a :func:`dgbdt.record_evaluation` callback filled,
    or a fitted estimator (its ``evals_result_``); a Booster is a TypeError.
    ``metric``: the one to plot (None: the last recorded, with a warning if
    there are several).  ``dataset_names``: the data sets to plot (None: all).
    ``ylabel`` may hold ``@metric@``.  Returns the matplotlib Axes.
    """
    plt = _pyplot("plot_metric")
    results = _eval_results(booster)
    metric, series = _metric_series(results, metric, dataset_names)
    ax = _new_axes(plt, ax, figsize, dpi)
    num_iteration = len(series[0][1])
    for name, values in series:
        ax.plot(range(num_iteration), values, label=name)
    ax.legend(loc="best")
    top = max(max(values) for _, values in series)
    bottom = min(min(values) for _, values in series)
    span = top - bottom
    _limits(ax, xlim, ylim, (0, num_iteration), (bottom - span * 0.2, top + span * 0.2))
    if ylabel is not None:
        ylabel = ylabel.replace("@metric@", metric)
    _labels(ax, title, xlabel, ylabel, grid)
    return ax


# -- trees as graphs -------------------------------------------------------------
_LEGEND = """<
            <TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">
             <TR>
              <TD COLSPAN="2"><B>Monotone constraints</B></TD>
             </TR>
             <TR>
              <TD>Increasing</TD>
              <TD BGCOLOR="#ddffdd"></TD>
             </TR>
             <TR>
              <TD>Decreasing</TD>
              <TD BGCOLOR="#ffdddd"></TD>
             </TR>
            </TABLE>
           >"""


def _direction(node: dict[str, Any], value: float) -> str:
    """The side ("left" / "right") a feature value takes at a split node."""
    if node["decision_type"] == "==":
        if math.isnan(value) or int(value) < 0:
            return "right"
        return "left" if int(value) in {int(t) for t in node["threshold"].split("||")} else "right"
    missing = node["missing_type"]
    if math.isnan(value) and missing != "NaN":
        value = 0.0
    if (missing == "Zero" and -ZERO_THRESHOLD <= value <= ZERO_THRESHOLD) or (
        missing == "NaN" and math.isnan(value)
    ):
        return "left" if node["default_left"] else "right"
    return "left" if value <= node["threshold"] else "right"


def _split_label(node: dict[str, Any], ctx: dict[str, Any]) -> tuple[str, str | None]:
    """(label, tooltip) of a split node (LightGBM's)."""
    operator = "&#8804;" if node["decision_type"] == "<=" else "="
    feature = node["split_feature"]
    names = ctx["feature_names"]
    label = (
        f"<B>{names[feature]}</B> {operator}" if names else f"feature <B>{feature}</B> {operator} "
    )
    threshold, tooltip = node["threshold"], None
    if node["decision_type"] == "==":
        categories = threshold.split("||")
        if len(categories) > ctx["max_category_values"]:
            tooltip = threshold
            threshold = "||".join(categories[:2]) + "||...||" + categories[-1]
    precision, show = ctx["precision"], ctx["show_info"]
    label += f"<B>{_float2str(threshold, precision)}</B>"
    for info in (*_SHOW_INFO_NODE, "internal_count", "data_percentage"):
        if info not in show:
            continue
        if info in _SHOW_INFO_NODE:
            label += f"<br/>{_float2str(node[info], precision)} {info.split('_')[-1]}"
        elif info == "internal_count":
            label += f"<br/>count: {node[info]}"
        else:
            share = node["internal_count"] / ctx["total_count"] * 100
            label += f"<br/>{_float2str(share, 2)}% of data"
    return f"<{label}>", tooltip


def _leaf_label(node: dict[str, Any], ctx: dict[str, Any]) -> str:
    precision, show = ctx["precision"], ctx["show_info"]
    label = f"leaf {node['leaf_index']}: <B>{_float2str(node['leaf_value'], precision)}</B>"
    if "leaf_weight" in show:
        label += f"<br/>{_float2str(node['leaf_weight'], precision)} weight"
    if "leaf_count" in show:
        label += f"<br/>count: {node['leaf_count']}"
    if "data_percentage" in show:
        label += f"<br/>{_float2str(node['leaf_count'] / ctx['total_count'] * 100, 2)}% of data"
    return f"<{label}>"


def _add(
    graph: Digraph,
    node: dict[str, Any],
    ctx: dict[str, Any],
    parent: str | None,
    decision: str | None,
    highlight: bool,
) -> None:
    """Add ``node`` and its subtree to ``graph``: children first, then the
    node and its edge from ``parent`` (LightGBM's order, so the sources match)."""
    color, penwidth = ("blue", "3") if highlight else ("black", "1")
    fillcolor, style, tooltip = "white", "", None
    if "split_index" in node:
        if node["decision_type"] not in ("<=", "=="):
            raise ValueError("Invalid decision type in tree model.")
        name, shape = f"split{node['split_index']}", "rectangle"
        label, tooltip = _split_label(node, ctx)
        case, constraints = ctx["example_case"], ctx["constraints"]
        direction = _direction(node, case[node["split_feature"]]) if case is not None else None
        if constraints:
            sign = constraints[node["split_feature"]]
            fillcolor = {1: "#ddffdd", -1: "#ffdddd"}.get(sign, fillcolor)
            style = "filled"
        for side, word in (("left", "yes"), ("right", "no")):
            _add(graph, node[f"{side}_child"], ctx, name, word, highlight and direction == side)
    else:
        name, shape, label = f"leaf{node['leaf_index']}", "ellipse", _leaf_label(node, ctx)
    graph.node(
        name,
        label=label,
        shape=shape,
        style=style,
        fillcolor=fillcolor,
        color=color,
        penwidth=penwidth,
        tooltip=tooltip,
    )
    if parent is not None:
        graph.edge(parent, name, decision, color=color, penwidth=penwidth)


def _example_row(
    booster: Booster, example_case: np.ndarray | DataFrame | None
) -> np.ndarray | None:
    """The one row of ``example_case`` as a 1-D array (category columns as
    the model's codes), or None."""
    if example_case is None:
        return None
    if not isinstance(example_case, np.ndarray) and not (
        type(example_case).__module__.startswith("pandas") and hasattr(example_case, "columns")
    ):
        raise ValueError("example_case must be a numpy 2-D array or a pandas DataFrame")
    if example_case.ndim != 2:
        raise ValueError("example_case must be a numpy 2-D array or a pandas DataFrame")
    if example_case.shape[0] != 1:
        raise ValueError("example_case must have a single row.")
    if not isinstance(example_case, np.ndarray):
        example_case = frame_as_float64(
            example_case, booster.feature_names, False, booster.pandas_categorical
        )
    return example_case[0]


def _graphviz_digraph(what: str) -> type[Digraph]:
    try:
        from graphviz import Digraph  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(f"{what} needs graphviz: pip install graphviz") from exc
    return Digraph


def create_tree_digraph(
    booster: Booster | DGBDTModel,
    tree_index: int = 0,
    show_info: list[str] | None = None,
    precision: int | None = 3,
    orientation: str = "horizontal",
    example_case: np.ndarray | DataFrame | None = None,
    max_category_values: int = 10,
    **kwargs: Any,
) -> Digraph:
    """A graphviz Digraph of tree ``tree_index`` of the model (LightGBM's
    ``create_tree_digraph``): split nodes ``name <= threshold`` (categorical:
    ``name = 1||4``), "yes" edges to the left child, leaves ``leaf i: value``.

    ``show_info``: what else nodes show, among "split_gain",
    "internal_value", "internal_count", "internal_weight", "leaf_count",
    "leaf_weight", "data_percentage".  ``precision``: decimals of the values.
    ``orientation``: "horizontal" (root at the left) or "vertical".
    ``example_case``: one row (a 2-D array or DataFrame) whose path is drawn
    in blue.  ``max_category_values``: longer category lists are shortened
    (the full list in the tooltip).  With monotone constraints, split nodes
    are green (increasing) or red (decreasing).  Other keyword arguments go
    to ``graphviz.Digraph``.  Rendering it needs Graphviz's ``dot`` program,
    building it does not.
    """
    Digraph = _graphviz_digraph("create_tree_digraph")
    booster, _ = _as_booster(booster)
    if orientation not in ("horizontal", "vertical"):
        raise ValueError(f"orientation must be 'horizontal' or 'vertical', got {orientation!r}")
    model = booster.dump_model(format="lightgbm")
    tree_infos = model["tree_info"]
    if tree_index >= len(tree_infos):
        raise IndexError("tree_index is out of range.")
    structure = tree_infos[tree_index]["tree_structure"]
    if "internal_count" not in structure:
        raise ValueError("Cannot plot trees with no split")
    ctx = {
        "feature_names": model.get("feature_names"),
        "constraints": model.get("monotone_constraints"),
        "show_info": show_info or [],
        "precision": precision,
        "example_case": _example_row(booster, example_case),
        "max_category_values": max_category_values,
        "total_count": structure["internal_count"],
    }
    graph = Digraph(**kwargs)
    rankdir = "LR" if orientation == "horizontal" else "TB"
    graph.attr("graph", nodesep="0.05", ranksep="0.3", rankdir=rankdir)
    _add(graph, structure, ctx, None, None, ctx["example_case"] is not None)
    if ctx["constraints"]:
        graph.node("legend", label=_LEGEND, shape="rectangle", color="white")
    return graph


def plot_tree(
    booster: Booster | DGBDTModel,
    ax: Axes | None = None,
    tree_index: int = 0,
    figsize: tuple[float, float] | None = None,
    dpi: int | None = None,
    show_info: list[str] | None = None,
    precision: int | None = 3,
    orientation: str = "horizontal",
    *,
    example_case: np.ndarray | DataFrame | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw tree ``tree_index`` on matplotlib axes (LightGBM's ``plot_tree``):
    :func:`create_tree_digraph`'s graph (same parameters; other keyword
    arguments go to it and ``graphviz.Digraph``) rendered to PNG by Graphviz's
    ``dot`` program, which must be installed (a RuntimeError says so
    otherwise).  Returns the matplotlib Axes.
    """
    plt = _pyplot("plot_tree")
    import matplotlib.image  # noqa: PLC0415 - optional dependency

    graph = create_tree_digraph(
        booster,
        tree_index=tree_index,
        show_info=show_info,
        precision=precision,
        orientation=orientation,
        example_case=example_case,
        **kwargs,
    )
    import graphviz  # noqa: PLC0415 - optional dependency

    try:
        png = graph.pipe(format="png")
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(
            "plot_tree renders the tree with Graphviz's `dot` program, which was not "
            "found on PATH: install Graphviz (e.g. apt-get install graphviz, brew install "
            "graphviz or conda install graphviz), or use create_tree_digraph, which "
            "does not need it"
        ) from exc
    ax = _new_axes(plt, ax, figsize, dpi)
    ax.imshow(matplotlib.image.imread(BytesIO(png)))
    ax.axis("off")
    return ax
