"""The public API is listed once: ``_SOURCES`` in ``nllbench/__init__.py``.

``import nllbench`` imports each public name on first use (PEP 562), so the
package's ``__init__.py`` holds no import a type checker or a reader could
follow. ``nllbench/__init__.pyi`` gives them the same names as static imports
with a static ``__all__``; it is generated from ``_SOURCES`` (run this file as
a script to write it again) and this test fails when it is out of date.

Why a generated stub rather than imports under ``if TYPE_CHECKING:`` in
``__init__.py``: those imports and the lazy map would write every name twice,
and ruff (F401) then wants a third, static ``__all__``. A stub is what type
checkers read first (PEP 561), ruff checks it like any source, and the one
hand-written list stays the map that the lazy import runs on.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import nllbench as nb

STUB = Path(__file__).resolve().parents[2] / "src" / "nllbench" / "__init__.pyi"  # runs as a script too
LINE = 110  # ruff's line length (pyproject.toml)


def _order(name: str) -> tuple[int, str]:
    """ruff's isort order inside one import: constants, classes, then functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name


def import_line(module: str, names: tuple[str, ...]) -> str:
    names = tuple(sorted(names, key=_order))
    one = f"from {module} import {', '.join(names)}"
    if len(one) <= LINE:
        return one
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"


def stub_text(sources: dict[str, tuple[str, ...]] | None = None) -> str:
    """The stub for ``nllbench`` generated from its ``_SOURCES`` (or from ``sources``)."""
    sources = nb._SOURCES if sources is None else sources
    imports = "\n".join(import_line(m, sources[m]) for m in sorted(sources))
    names = [n for m in sources for n in sources[m]] + ["__version__"]
    return (
        '"""The public names of ``nllbench`` for type checkers and readers (PEP 561).\n\n'
        "Generated from ``_SOURCES`` in ``__init__.py`` by ``python tests/layout/test_public_api_stub.py``;\n"
        "do not edit: ``tests/layout/test_public_api_stub.py`` fails when it is out of date.\n"
        '"""\n\n'
        f"{imports}\n\n"
        "__version__: str\n\n"
        "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]\n"
    )


def test_the_stub_is_generated_from_the_lazy_map():
    assert STUB.read_text() == stub_text(), (
        "run `python tests/layout/test_public_api_stub.py` to write it again"
    )


def test_the_stub_the_lazy_map_and_all_name_the_same_things():
    tree = ast.parse(STUB.read_text())
    imported = {
        a.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names
    }
    (all_node,) = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"]
    assert imported == nb._MODULE_OF
    assert ast.literal_eval(all_node.value) == nb.__all__
    assert len(nb.__all__) == len(set(nb.__all__))  # no name listed in two modules
    for name, module in nb._MODULE_OF.items():  # each name is where the map says
        assert getattr(nb, name) is getattr(__import__(module, fromlist=[name]), name)


def test_a_long_import_is_split_as_ruff_formats_it():
    assert import_line("m", ("b", "A", "CONST")) == "from m import CONST, A, b"
    long = import_line("nllbench.x", tuple(f"name_{k:03d}" for k in range(12)))
    assert long.startswith("from nllbench.x import (\n    name_000,\n") and long.endswith("    name_011,\n)")


if __name__ == "__main__":
    STUB.write_text(stub_text())
    sys.exit(0)
