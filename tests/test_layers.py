"""The package's imports run one way (issue 26): the layers written in
docs/architecture.md (its "Layers" table, the one place that says them), no
import circle, no import from a lower layer to a higher one, every module on
the map; imports inside functions are counted, each with its reason, and may
not grow.  Run with ``-s`` to see the figures (``python -m pytest -s
tests/test_layers.py``)."""

import ast
import pathlib
import re

import pytest

import dgbdt

ROOT = pathlib.Path(dgbdt.__file__).parent
MAP = ROOT.parent / "docs" / "architecture.md"
# Internal imports inside functions: only for import time (the estimators, the
# command's modules), each with its reason; none may be added.
MAX_IMPORTS_IN_FUNCTIONS = 6


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    _module_name(p): p
    for p in sorted(ROOT.rglob("*.py"))
    if "native" not in p.relative_to(ROOT).parts  # the kernels import only themselves
}
# Each module's text and syntax tree, read once for every check below.
TEXTS = {m: p.read_text(encoding="utf-8") for m, p in MODULES.items()}
TREES = {m: ast.parse(text) for m, text in TEXTS.items()}


def _target(module, node, is_package):
    """The dgbdt modules an import statement names (a name imported from a
    package that is itself a module counts as that module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module.split(".")[: None if is_package else -1]
    if node.level:
        base = base[: len(base) - node.level + 1]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]


def _owner(name):
    """The module of dgbdt an imported name belongs to, or None (outside, or the
    kernels)."""
    if not name.startswith("dgbdt") or name.startswith("dgbdt.native"):
        return None
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _is_type_checking(node):
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(module):
    """(imported module, line, inside a function) of every internal import of
    ``module`` (imports under ``if TYPE_CHECKING:`` are not run: left out)."""
    path = MODULES[module]
    tree = TREES[module]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for name in _target(module, child, path.name == "__init__.py"):
                    owner = _owner(name)
                    if owner is not None and owner != module:
                        found.append((owner, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


IMPORTS = {m: _imports(m) for m in MODULES}


def _layers():
    """{module: (layer index, layer name)} from the map's Layers table, lowest first."""
    text = MAP.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = {}
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| layer")]
    for index, row in enumerate(rows):
        name, modules = (c.strip() for c in row.strip("|").split("|")[:2])
        for module in re.findall(r"`([\w.]+)`", modules):
            layers[module] = (index, name)
    return layers


LAYERS = _layers()


def _circles(imports):
    """The import circles of ``imports`` ({module: [(module, line, inside), ...]}):
    groups of modules each reachable from the others."""

    def reach(start):
        seen, todo = {start}, [start]
        while todo:
            for target, _, _ in imports[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    reached = {m: reach(m) for m in imports}
    groups = {frozenset(o for o in reached[m] if m in reached[o]) for m in imports}
    return sorted(sorted(g) for g in groups if len(g) > 1)


def test_the_map_names_every_module_in_one_layer():
    missing = sorted(set(MODULES) - set(LAYERS))
    stale = sorted(set(LAYERS) - set(MODULES))
    print(f"\nmodules missing from the map: {len(missing)}; on the map but gone: {len(stale)}")
    assert not missing, f"modules missing from docs/architecture.md's Layers table: {missing}"
    assert not stale, f"the Layers table names modules that do not exist: {stale}"


def test_no_import_circle():
    circles = _circles(IMPORTS)
    print(f"\nimport circles: {len(circles)}")
    assert not circles, f"import circles (imports inside functions included): {circles}"


def test_every_import_runs_down_or_across_its_layer():
    upward = [
        f"{m}:{line} ({LAYERS[m][1]}) imports {t} ({LAYERS[t][1]})"
        for m in MODULES
        for t, line, _ in IMPORTS[m]
        if m in LAYERS and t in LAYERS and LAYERS[t][0] > LAYERS[m][0]
    ]
    print(f"\nupward imports: {len(upward)}")
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_imports_inside_functions_do_not_grow():
    inner = [(m, t, line) for m in MODULES for t, line, inside in IMPORTS[m] if inside]
    print(f"\ninternal imports inside functions: {len(inner)} (at most {MAX_IMPORTS_IN_FUNCTIONS})")
    assert len(inner) <= MAX_IMPORTS_IN_FUNCTIONS, "\n".join(f"{m}:{n} -> {t}" for m, t, n in inner)


def test_every_import_inside_a_function_says_why():
    # ruff's PLC0415 refuses an import inside a function in the package unless
    # its noqa is there; the noqa must give the reason after a dash.
    bare = []
    for module, text in TEXTS.items():
        for n, line in enumerate(text.splitlines(), 1):
            if "noqa: PLC0415" in line and not re.search(r"PLC0415[^#]* - \S", line):
                bare.append(f"{module}:{n}: {line.strip()}")
    inside = sum(text.count("PLC0415") for text in TEXTS.values())
    print(f"\nimports inside functions (optional dependencies, MPI, import time): {inside}")
    assert not bare, "imports inside functions without a reason:\n" + "\n".join(bare)


def _entry_points():
    """The functions the map's "Entry points" table says resolve parameters."""
    text = MAP.read_text(encoding="utf-8")
    section = text.split("## Entry points", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| entry")]
    return {name for row in rows for name in re.findall(r"`([\w.]+)`", row.split("|")[2])}


def _resolve_params_sites():
    """{qualified name of the enclosing function: [line, ...]} of every call of
    resolve_params outside dgbdt.params.table."""
    sites = {}

    def visit(module, node, scope):
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}"
            if isinstance(child, ast.Call) and ast.unparse(child.func).endswith("resolve_params"):
                sites.setdefault(scope, []).append(child.lineno)
            visit(module, child, inner)

    for module, tree in TREES.items():
        if module != "dgbdt.params.table":
            visit(module, tree, module)
    return sites


def test_parameters_are_resolved_only_at_the_entry_points():
    sites, entries = _resolve_params_sites(), _entry_points()
    outside = {f: lines for f, lines in sites.items() if f not in entries}
    print(
        f"\nresolve_params call sites: {sum(map(len, sites.values()))} in {len(sites)} "
        f"entry-point functions; outside the entry points: {len(outside)}"
    )
    assert entries, "the map's Entry points table lists no function"
    assert not outside, f"resolve_params called outside the map's entry points: {outside}"
    unused = sorted(entries - set(sites))
    assert not unused, f"the map lists entry points that resolve nothing: {unused}"


def test_only_the_communication_layer_imports_mpi4py():
    importers = []
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if any(n.split(".")[0] == "mpi4py" for n in names) or (
                    isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mpi4py")
                ):
                    importers.append(module)
    print(f"\nmodules importing mpi4py: {sorted(set(importers))}")
    assert set(importers) <= {"dgbdt.distributed.comm", "dgbdt.distributed.rendezvous"}, sorted(
        set(importers)
    )


@pytest.mark.parametrize(
    "source, expected",
    [
        ({"a": ["b"], "b": ["a"], "c": ["a"]}, [["a", "b"]]),
        ({"a": ["b"], "b": ["c"], "c": ["a"], "d": []}, [["a", "b", "c"]]),
        ({"a": ["b"], "b": ["c"], "c": []}, []),
    ],
)
def test_the_circle_finder_finds_circles(source, expected):
    imports = {m: [(t, 1, False) for t in targets] for m, targets in source.items()}
    assert _circles(imports) == expected


def test_every_subpackage_is_in_the_wheel():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert packages <= listed, f"not in pyproject.toml's packages: {sorted(packages - listed)}"


RAW_COLLECTIVES = (
    "allgather", "allgather_object", "allgatherv", "allreduce", "bcast", "bcast_bytes",
    "reduce_scatter", "scatter_bytes",
)  # fmt: skip
# The communication layer, the learners and distributed reading speak MPI's
# verbs; every other module says what it computes (comm's named collectives).
RAW_ALLOWED = (
    "dgbdt.distributed.comm", "dgbdt.distributed.exact_sum", "dgbdt.treelearner.learners", "dgbdt.io.distributed", "dgbdt.io.querycuts",
)  # fmt: skip


def test_raw_collectives_only_below_and_in_the_learners():
    raw = []
    for module, tree in TREES.items():
        if module.startswith(RAW_ALLOWED):
            continue
        for node in ast.walk(tree):
            call = node.func if isinstance(node, ast.Call) else None
            if isinstance(call, ast.Attribute) and call.attr in RAW_COLLECTIVES:
                raw.append(f"{module}:{node.lineno} .{call.attr}()")
    print(f"\nraw collectives outside comm, the learners and distributed reading: {len(raw)}")
    assert not raw, raw
