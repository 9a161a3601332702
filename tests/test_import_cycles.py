"""No module of the app imports itself back through others at load time.

A cycle makes the order of imports matter and hides which layer depends on
which (core below services below the three doors). Imports inside functions
and under ``TYPE_CHECKING`` are left out: they run after every module has
loaded. Migrations are generated and left out too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load_time_imports(path: Path, root: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports at its top level."""
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], base]).rstrip(".")
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(name for name in names if name in known)
    return found


def import_graph(root: Path = ROOT, package: str = "chains") -> nx.DiGraph:
    paths = [p for p in (root / package).rglob("*.py") if "migrations" not in p.parts]
    known = {module_name(p, root) for p in paths}
    graph = nx.DiGraph()
    for path in paths:
        source = module_name(path, root)
        graph.add_node(source)
        for target in load_time_imports(path, root, known) - {source}:
            graph.add_edge(source, target)
    return graph


def cycles(graph: nx.DiGraph) -> list[str]:
    return sorted(" -> ".join([*c, c[0]]) for c in nx.simple_cycles(graph))


def test_the_import_graph_is_read_from_the_code():
    graph = import_graph()
    assert graph.has_edge("chains.api", "chains.services.access")
    assert graph.has_edge("chains.core.formats", "chains.core.formats.load")
    assert graph.has_edge("chains.core.lint.commit", "chains.core.model")  # from ..model


def test_a_cycle_through_relative_imports_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import thing\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from . import a\nfrom pkg import a\n")
    assert [set(c) for c in nx.simple_cycles(import_graph(tmp_path, "pkg"))] == [{"pkg.a", "pkg.b"}]


def test_an_import_inside_a_function_is_not_a_load_time_cycle(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import thing\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from . import a\n")
    assert cycles(import_graph(tmp_path, "pkg")) == []


def test_no_module_imports_itself_back_at_load_time():
    assert cycles(import_graph()) == []


def test_the_app_imports_nothing_from_the_project_package():
    """``designer/`` assembles the app (root urls, the API, Celery), so only it imports the other.

    Every import counts here, those inside functions and under ``TYPE_CHECKING`` too;
    the app reaches the project's settings through ``django.conf.settings`` only.
    """
    found = []
    for path in (ROOT / "chains").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "designer"
            ]
    assert found == []
