"""The layout a reviewer checks: layers without an import circle, files of a readable size,
private names kept at home.

The units are the sub-packages of ``nllbench`` (``engine``, ``measures``, ...),
its top-level modules (``options``, ``settings``, ``examples``) and the package
itself (``nllbench``: its ``__init__``, the public API). Every import counts,
also one inside a function (a lazy import is still an arrow). The layers, from
the ground up (README, "Layout"):

1. ``options`` (argparse and dataclasses only), ``engine`` (densities, NLL, Murty)
2. ``simulation`` (models, scenarios)
3. ``filters`` (reference filters, point estimators)
4. ``measures`` (GOSPA, T-GOSPA, HOTA, calibration, Theorem 1, a run's evaluation)
5. ``settings`` (the collection of settings dataclasses), ``store`` (the files)
6. ``pipeline`` (the workflow's stages), ``examples`` (the paper's examples)
7. ``trackers`` (scoring any tracker), ``torch`` (the set NLL as a training loss)
8. ``cli`` (the command line), ``nllbench`` (the public API)

A unit imports only units of lower layers (the index in :data:`LAYERS`).
"""

from __future__ import annotations

import ast
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
    ("options", "engine"),
    ("simulation",),
    ("filters",),
    ("measures",),
    ("settings", "store"),
    ("pipeline", "examples"),
    ("trackers", "torch"),
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


def test_no_private_name_imported_from_another_unit():
    found = []
    for path in sources():
        here = unit_of(module_name(path))
        for line, module, name in file_imports(path):
            if unit_of(target(module, name)) == here:
                continue
            private = [
                p for p in [*module.split("."), name or ""] if p.startswith("_") and not p.endswith("__")
            ]
            if private:
                found.append(f"{path.relative_to(SRC)}:{line}: {module} {name or ''}")
    assert not found, "\n".join(found)


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


def test_the_old_paths_of_the_moved_measures_modules_are_the_moved_modules():
    """``nllbench.measures.<old>`` (before the layout by family) imports as the moved module itself."""
    import importlib

    import nllbench.measures as measures

    for old, new in measures.MOVED.items():
        assert not is_module(f"nllbench.measures.{old}"), f"{old}: both paths exist as files"
        assert is_module(f"nllbench.measures.{new}"), new
        moved = importlib.import_module(f"nllbench.measures.{new}")
        assert importlib.import_module(f"nllbench.measures.{old}") is moved
        assert getattr(measures, old) is moved  # `from nllbench.measures import <old>` too
    from nllbench.measures.evaluate import EvaluationSettings
    from nllbench.measures.run.evaluate import EvaluationSettings as moved_class

    assert EvaluationSettings is moved_class
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("nllbench.measures.no_such_module")
