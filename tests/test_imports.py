"""The import graph of clts/ (read with ast, nothing imported): no circles; the layers point one
way (runtime -> tune registry -> algorithms -> integrations -> face, see CONTRIBUTING.md); no
module uses another package's underscore names."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "clts"

ALGORITHMS = ("clts.stl", "clts.bfast", "clts.mp", "clts.tridiag", "clts.ocean", "clts.trend")
INTEGRATIONS = ("clts.labels", "clts.plots", "clts.xarray", "clts.distributed", "clts.io",
                "clts.geotiff", "clts.xarray_ocean", "clts.compat", "clts.xarray_bfast", "clts.xarray_common",
                "clts.geotiff_bfast", "clts.geotiff_grid")
FACE = "clts"            # the package __init__: the public names
#: the face: the package __init__ and the commands (clts, clts-tune, the demo), which call the
#: public functions
FACES = (FACE, "clts.cli", "clts.cli_bfast", "clts.cli_common",
         "clts.demo", "clts.warmup", "clts.tune.cli", "clts.tune.report",
         "clts.tune.offline", "clts.tune.workloads", "clts.tune.workloads_more",
         "clts.tune.coalescing")
#: what each layer may import, besides its own package and clts.errors / clts.options /
#: clts.vocabulary / clts._version (the bottom: they import nothing of clts)
BOTTOM = ("clts.errors", "clts.options", "clts.vocabulary", "clts._version", "clts.devices",
          "clts.timeaxis")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str) -> str:
    """The nearest module of clts that ``name`` (a dotted import target) names."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str):
    """(target module, imported names, line) for every import in ``module``, also those inside
    functions (they run as surely as the others)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("clts"):
                    yield _owner(a.name), (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if not target.startswith("clts"):
                continue
            plain = []
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in MODULES:                     # from pkg import submodule
                    yield sub, (), node.lineno
                else:
                    plain.append(a.name)
            if plain:
                yield _owner(target), tuple(plain), node.lineno


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _, _ in _imports(m) if t and t != m} for m in MODULES}


def _package(module: str) -> str:
    """clts.<first part> (clts itself for the package __init__)."""
    return ".".join(module.split(".")[:2])


def _layer(module: str) -> str:
    if module in FACES:
        return "face"
    top = _package(module)
    if top in BOTTOM:
        return "bottom"
    if top == "clts.runtime":
        return "runtime"
    if top == "clts.tune":
        return "tune"
    if top in ALGORITHMS:
        return "algorithm"
    if top in INTEGRATIONS:
        return "integration"
    raise AssertionError(f"{module}: no layer (add it to tests/test_imports.py)")


def test_every_module_has_a_layer():
    for m in MODULES:
        _layer(m)


def test_no_import_circles():
    graph = _graph()
    # package __init__ files re-export their own modules: an edge into one's own package's
    # __init__ from inside it is a circle only through the __init__, which imports it anyway
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                circles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert circles == [], "import circles: " + "; ".join(" -> ".join(c) for c in circles)


ALLOWED = {
    "bottom": {"bottom"},
    "runtime": {"bottom", "runtime"},
    "tune": {"bottom", "runtime", "tune"},
    "algorithm": {"bottom", "runtime", "tune", "algorithm"},
    "integration": {"bottom", "runtime", "tune", "algorithm", "integration"},
    "face": {"bottom", "runtime", "tune", "algorithm", "integration", "face"},
}


#: the algorithms one algorithm composes: ocean's vertical solves, bfast_decompose's initial
#: season (R's bfast() starts from stl's)
ALGORITHM_USES = {("clts.ocean", "clts.tridiag"), ("clts.bfast", "clts.stl")}


def test_layers_point_one_way():
    bad = []
    for m in MODULES:
        for t, _, line in _imports(m):
            if not t or t == m:
                continue
            lm, lt = _layer(m), _layer(t)
            if lt not in ALLOWED[lm]:
                bad.append(f"{m}:{line} ({lm}) imports {t} ({lt})")
            elif lm == "algorithm" and lt == "algorithm" and _package(m) != _package(t) \
                    and (_package(m), _package(t)) not in ALGORITHM_USES:
                bad.append(f"{m}:{line}: algorithms do not import each other ({t})")
            elif lm == "tune" and lt == "algorithm" and not m.endswith((".registry",)):
                bad.append(f"{m}:{line}: the tuner finds algorithms through its registry ({t})")
    assert bad == []


def test_no_foreign_underscore_names():
    bad = []
    for m in MODULES:
        tree = ast.parse(MODULES[m].read_text(encoding="utf-8"))
        foreign_modules = {}                     # local name -> module of another package
        for t, names, line in _imports(m):
            if not t or _package(t) == _package(m):
                continue
            if t not in BOTTOM and any(p.startswith("_") and not p.startswith("__")
                                       for p in t.split(".")):
                bad.append(f"{m}:{line} imports the private module {t}")
            for n in names:
                if n.startswith("_") and not n.startswith("__"):
                    bad.append(f"{m}:{line} imports {t}.{n}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(m, node)
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in MODULES and _package(sub) != _package(m):
                        foreign_modules[a.asname or a.name] = sub
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in MODULES and a.asname and _package(a.name) != _package(m):
                        foreign_modules[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in foreign_modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{m}:{node.lineno} uses {foreign_modules[node.value.id]}."
                           f"{node.attr}")
    assert bad == []


def test_version_has_one_home():
    for m, path in MODULES.items():
        for t, names, line in _imports(m):
            assert not (t == FACE and "__version__" in names), f"{m}:{line}"


def test_no_module_over_600_lines():
    long = {m: n for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
