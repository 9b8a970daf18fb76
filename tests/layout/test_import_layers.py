"""The layout a reviewer checks: layers without an import circle, files of a readable size,
private names kept at home.

The units are the sub-packages of ``nllbench`` (``engine``, ``measures``, ...),
its top-level modules (``options``, ``settings``, ``examples``) and the package
itself (``nllbench``: its ``__init__``, the public API). Every import counts,
also one inside a function (a lazy import is still an arrow). The layers, from
the ground up (README, "Layout"):

1. ``options`` (argparse and dataclasses only), ``engine`` (densities, NLL, Murty), ``_moved``
   (old module paths: the standard library only)
2. ``simulation`` (models, scenarios)
3. ``filters`` (reference filters, point estimators)
4. ``measures`` (GOSPA, T-GOSPA, HOTA, calibration, Theorem 1, a run's evaluation)
5. ``settings`` (the collection of settings dataclasses), ``store`` (the files)
6. ``pipeline`` (the workflow's stages), ``examples`` (the paper's examples), ``trackers`` (scoring
   any tracker)
7. ``example_trackers`` (other projects' trackers run for scoring), ``torch`` (the set NLL as a
   training loss)
8. ``cli`` (the command line), ``nllbench`` (the public API)

A unit imports only units of lower layers (the index in :data:`LAYERS`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

import nllbench as nb
from nllbench.measures.hota import hota
from nllbench.measures.metrics import gospa
from nllbench.measures.tgospa import tgospa

SRC = ROOT / "src"
PACKAGE = SRC / "nllbench"

LAYERS = (
    ("options", "engine", "_moved"),
    ("simulation",),
    ("filters",),
    ("measures",),
    ("settings", "store"),
    ("pipeline", "examples", "trackers"),
    ("example_trackers", "torch"),
    ("cli", "nllbench"),
)
LAYER = {unit: k for k, units in enumerate(LAYERS) for unit in units}

MAX_LINES = 700


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """The unit of a module: ``nllbench.engine.nll`` is ``engine``, ``nllbench`` itself ``nllbench``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "nllbench"


def is_module(dotted: str) -> bool:
    path = SRC.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str, str | None]]:
    """Every nllbench import of a module's source, at any depth: (line, module, imported name or None)."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out += [(node.lineno, base, a.name) for a in node.names]
    return sorted((line, m, name) for line, m, name in out if m == "nllbench" or m.startswith("nllbench."))


def file_imports(path: Path) -> list[tuple[int, str, str | None]]:
    return imports(path.read_text(), module_name(path), path.name == "__init__.py")


def target(module: str, name: str | None) -> str:
    """The module an import reaches: ``from nllbench import cli`` reaches ``nllbench.cli``."""
    if name is not None and is_module(f"{module}.{name}"):
        return f"{module}.{name}"
    return module


def edges() -> dict[tuple[str, str], list[str]]:
    """(unit, imported unit) -> the places (file:line) of the imports between two different units."""
    out: dict[tuple[str, str], list[str]] = {}
    for path in sources():
        here = unit_of(module_name(path))
        for line, module, name in file_imports(path):
            there = unit_of(target(module, name))
            if there != here:
                out.setdefault((here, there), []).append(f"{path.relative_to(SRC)}:{line}")
    return out


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (unit -> imported units), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [])):
            return found
    return None


def test_cycle_finder_finds_a_circle_and_passes_a_tree():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_every_unit_has_a_layer():
    units = {unit_of(module_name(p)) for p in sources()}
    assert units == set(LAYER), "place a new unit in LAYERS (and in the README's layout)"


def test_no_import_circle_between_units():
    graph: dict[str, set[str]] = {}
    for a, b in edges():
        graph.setdefault(a, set()).add(b)
    assert cycle(graph) is None


#: Import circles between modules of one unit still to be untied (issue 31), each as its two modules.
KNOWN_MODULE_CIRCLES = {frozenset({"nllbench.cli", "nllbench.cli.warmup"})}


def module_graph() -> dict[str, set[str]]:
    """Module -> the nllbench modules it imports (every import, also a lazy or a type-checking one)."""
    graph: dict[str, set[str]] = {}
    for path in sources():
        here = module_name(path)
        for _, module, name in file_imports(path):
            there = target(module, name)
            if there != here:
                graph.setdefault(here, set()).add(there)
    return graph


def test_no_import_circle_between_modules():
    """Not even inside a unit or a package (the T-GOSPA solver's modules once imported each other)."""
    graph = module_graph()
    for pair in KNOWN_MODULE_CIRCLES:
        a, b = sorted(pair)
        assert b in graph.get(a, set()) and a in graph.get(b, set()), (
            f"{a} and {b} no longer circle: drop them"
        )
        graph[a].discard(b)
    assert cycle(graph) is None


def test_every_import_points_down():
    upward = {
        f"{a} (layer {LAYER[a]}) imports {b} (layer {LAYER[b]}) at {', '.join(places)}"
        for (a, b), places in edges().items()
        if LAYER[b] >= LAYER[a]
    }
    assert not upward, "\n".join(sorted(upward))


def private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def home_of_private(module: str) -> str | None:
    """The package a private module belongs to: ``a.b._c.d`` -> ``a.b``; None for a public module."""
    parts = module.split(".")
    for k, part in enumerate(parts):
        if private(part):
            return ".".join(parts[:k])
    return None


def module_aliases(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The names a module binds to nllbench modules (``from nllbench.torch import _core``)."""
    package = module if is_package else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.asname for a in node.names if a.asname and a.name.startswith("nllbench")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.startswith("nllbench"):
                out |= {a.asname or a.name for a in node.names if is_module(f"{base}.{a.name}")}
    return out


def private_uses(path: Path) -> list[str]:
    """Where a module uses a private name of another module, or a private module from outside its package.

    The rule: an underscore name (``_solve``, ``_INF``) is used only in the module that defines it,
    neither imported (``from m import _x``) nor read through a module (``m._x``). An underscore
    module or package (``measures/_sequences.py``, ``measures/tracks/_tgospa/``) is imported only
    by modules inside the package that holds it (``nllbench.measures...``,
    ``nllbench.measures.tracks...``): there its names are public (no underscore), shared by its
    package and hidden from everyone else. Attributes of objects (``Gaussians._trusted``) are not
    checked here.
    """
    here = module_name(path)
    found = []
    for line, module, name in file_imports(path):
        reached = target(module, name)
        if reached == here:
            continue
        home = home_of_private(reached)
        if home is not None and not (here == home or here.startswith(home + ".")):
            found.append(f"{path.relative_to(SRC)}:{line}: {reached} is private to {home}")
        if reached == module and name is not None and private(name):
            found.append(f"{path.relative_to(SRC)}:{line}: {module} {name}")
    tree = ast.parse(path.read_text())
    aliases = module_aliases(tree, here, path.name == "__init__.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in aliases and private(node.attr):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_private_name_used_from_another_module():
    found = {str(p.relative_to(SRC)): private_uses(p) for p in sources()}
    left = [f for places in found.values() for f in places]
    assert not left, "\n".join(left)


def test_the_private_use_finder_sees_names_modules_and_attributes(tmp_path, monkeypatch):
    assert home_of_private("nllbench.measures.tracks._tgospa.close") == "nllbench.measures.tracks"
    assert home_of_private("nllbench.measures.tracks.tgospa") is None
    package = tmp_path / "nllbench"
    (package / "a" / "_p").mkdir(parents=True)
    for f in ("__init__.py", "a/__init__.py", "a/_p/__init__.py", "a/m.py", "b.py"):
        (package / f).write_text("")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    source = "from nllbench.a.m import _x\nfrom nllbench.a import _p\nfrom nllbench.a import m\nm._y\n"
    (package / "b.py").write_text(source)
    assert [f.split(": ", 1)[1] for f in private_uses(package / "b.py")] == [
        "nllbench.a.m _x",
        "nllbench.a._p is private to nllbench.a",
        "m._y",
    ]
    (package / "a" / "m.py").write_text("from nllbench.a import _p\nfrom nllbench.a._p import q\n")
    assert private_uses(package / "a" / "m.py") == []


def test_no_source_file_over_700_lines():
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in sources()}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not over, over


def test_gospa_tgospa_and_hota_are_exported_next_to_each_other():
    assert nb.gospa is gospa and nb.tgospa is tgospa and nb.hota is hota
    assert {"gospa", "tgospa", "hota", "GOSPAResult", "TGOSPAResult", "HOTAResult"} <= set(nb.__all__)
    assert all(hasattr(nb, name) for name in nb.__all__)


def test_imports_inside_functions_and_relative_imports_count():
    source = "import numpy\n\ndef f():\n    from nllbench.store import write_text\n    from . import _x\n"
    assert imports(source, "nllbench.engine.nll") == [
        (4, "nllbench.store", "write_text"),
        (5, "nllbench.engine", "_x"),
    ]
    assert imports("from .nll import nll", "nllbench.engine", is_package=True) == [
        (1, "nllbench.engine.nll", "nll")
    ]


def packages_with_moves() -> list[str]:
    """Every nllbench package whose ``__init__.py`` lists moved modules (``MOVED = {...}``)."""
    return sorted(
        module_name(p)
        for p in PACKAGE.rglob("__init__.py")
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "MOVED" for t in n.targets)
            for n in ast.parse(p.read_text()).body
        )
    )


def test_the_old_paths_of_moved_modules_are_the_moved_modules():
    """``<package>.<old>`` (each package's ``MOVED``) imports as the moved module itself."""
    import importlib

    packages = packages_with_moves()
    assert {"nllbench.engine", "nllbench.measures", "nllbench.measures.likelihood", "nllbench.torch"} <= set(
        packages
    )
    for package in packages:
        if package == "nllbench.torch":
            pytest.importorskip("torch")
        parent = importlib.import_module(package)
        for old, new in parent.MOVED.items():
            assert not is_module(f"{package}.{old}"), f"{package}.{old}: both paths exist as files"
            target = new if new.startswith("nllbench.") else f"{package}.{new}"  # absolute: left the package
            assert is_module(target), target
            moved = importlib.import_module(target)
            assert importlib.import_module(f"{package}.{old}") is moved
            assert getattr(parent, old) is moved  # `from <package> import <old>` too
    from nllbench.engine.trajectory import label_truth_statistics
    from nllbench.engine.trajectory_nll import label_truth_statistics as moved_function
    from nllbench.measures.evaluate import EvaluationSettings
    from nllbench.measures.run.evaluate import EvaluationSettings as moved_class

    assert EvaluationSettings is moved_class and label_truth_statistics is moved_function
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("nllbench.measures.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("nllbench.engine.no_such_module")
