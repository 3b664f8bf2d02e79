"""The package's import contract: stages import only the stages below them, and no module of the
package takes part in an import cycle (lazy imports inside functions included).

The layers are declared in ``pyproject.toml`` (``[tool.importlinter]``) and checked with
import-linter; the cycle check reads the same import graph through grimp, import-linter's engine.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import networkx as nx
from importlinter.cli import lint_imports

REPO = Path(__file__).resolve().parents[2]

STAGES = ["sql", "provenance", "mechanisms", "policies", "privacy", "interfaces", "graph"]


def test_import_contracts_are_kept():
    assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True) == 0


def _graph() -> nx.DiGraph:
    g = grimp.build_graph("provsql_dp", cache_dir=None)
    out = nx.DiGraph()
    for module in g.modules:
        out.add_node(module)
        for imported in g.find_modules_directly_imported_by(module):
            out.add_edge(module, imported)
    return out


def test_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert cycles == []


def test_every_stage_is_a_package_with_modules():
    for stage in STAGES:
        folder = REPO / "provsql_dp" / stage
        assert (folder / "__init__.py").is_file(), stage
        assert any(p.name != "__init__.py" for p in folder.rglob("*.py")), stage


def test_no_module_is_large():
    sizes = {p.relative_to(REPO).as_posix(): len(p.read_text().splitlines())
             for p in (REPO / "provsql_dp").rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > 550} == {}
