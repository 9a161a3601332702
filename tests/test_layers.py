"""Imports point down the declared layers and never close a cycle inside one.

The order is argued in docs/architecture.md ("The layer order"): doors →
services → models → core on the Django side, and inside ``chains/core`` the
order of ``CORE`` below. Every import counts, wherever it is written: at the
top of a module, under ``if TYPE_CHECKING:`` or inside a function. A unit is
a top-level module or package (``chains.views``, ``chains.core.sim``,
``chains.core.edit``); imports inside one unit are its own business.

Calls point down as well: one htmx edit is followed through the code with
a profiler, and no call goes from a layer into one above it (a service
calling a view's hook would be one).
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Bottom first. Inside chains/core: a unit may import the units of its own
# layer (as long as no cycle closes) and of the layers below it, never above.
CORE = (
    (
        "base",
        {"chains.core", "errors", "words", "memo", "keys", "paths", "recent", "layout", "sarif"},
    ),
    ("model", {"model", "verdicts"}),
    (
        "analysis",
        {"graph", "signals", "policy", "probes", "references", "selection", "fit", "glossary"},
    ),
    ("lint", {"lint"}),
    ("formats/sim", {"formats", "sim"}),
    (
        "uses",
        {
            "edit",
            "fixes",
            "design_doc",
            "export",
            "render",
            "dot",
            "drawing",
            "diff",
            "rebase",
            "coverage",
            "comments",
            "openapi",
            "traces",
            "postman",
            "explain",
            "patterns",
        },
    ),
)
DOORS = {
    "chains.views",
    "chains.api",
    "chains.management",
    "chains.cli",
    "chains.tasks",
    "chains.templatetags",
}
DJANGO = (
    ("core", {"chains.core"}),
    ("models", {"chains.models"}),
    ("services", {"chains.services", "chains.commandline", "chains.harness"}),
    ("doors", DOORS),
    ("project", {"designer", "chains", "chains.urls", "chains.apps"}),
)
FRAMEWORKS = ("django", "ninja", "celery", "kombu", "redis")


@dataclass(frozen=True)
class Import:
    importer: str  # a module, dotted
    imported: str  # the module it names (the module itself, not a name in it)
    line: int

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}) imports {self.imported}"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(module: str, source: str, is_package: bool, known: set[str]) -> Iterator[Import]:
    """Every import ``source`` makes of a module in ``known``, wherever it is written."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names = [(base, alias.name) for alias in node.names]
        else:
            continue
        for base, name in names:
            target = f"{base}.{name}" if name and f"{base}.{name}" in known else base
            while target and target not in known:  # `import a.b.c` names module a.b.c
                target = target.rpartition(".")[0]
            if target:
                yield Import(module, target, node.lineno)


def project_imports() -> list[Import]:
    paths = {
        module_name(p): p
        for top in ("chains", "designer")
        for p in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in p.parts
    }
    known = set(paths)
    found = {
        i
        for module, path in paths.items()
        for i in imports_of(module, path.read_text(), path.name == "__init__.py", known)
    }
    return sorted(found, key=lambda i: (i.importer, i.line, i.imported))


def unit(module: str) -> str:
    """The top-level module or package ``module`` belongs to."""
    parts = module.split(".")
    if parts[0] != "chains":
        return parts[0]
    return ".".join(parts[:3] if parts[1:2] == ["core"] else parts[:2])


def _level(name: str, layers: Iterable[tuple[str, set[str]]]) -> tuple[int, str] | None:
    for n, (title, members) in enumerate(layers):
        if name in members:
            return n, title
    return None


def django_layer(u: str) -> tuple[int, str] | None:
    return _level("chains.core" if u.startswith("chains.core") else u, DJANGO)


def core_layer(u: str) -> tuple[int, str] | None:
    return _level(u if u == "chains.core" else u.removeprefix("chains.core."), CORE)


def layer_of(u: str) -> tuple[str, int, str] | None:
    """``u``'s layer as (side, rank, title): ranks compare within one side."""
    found = core_layer(u) if u.startswith("chains.core") else django_layer(u)
    if found is None:
        return None
    return ("core" if u.startswith("chains.core") else "django", *found)


def violations(imports: Iterable[Import]) -> list[str]:
    """Each import that points up a layer, or from one door into another, with its rule."""
    found = []
    for i in imports:
        a, b = unit(i.importer), unit(i.imported)
        if a == b:
            continue
        high, low = django_layer(a), django_layer(b)
        if high and low and high[0] < low[0]:
            rule = " → ".join(t for t, _ in reversed(DJANGO))
            found.append(f"{i}: {high[1]} may not import {low[1]} ({rule})")
        elif a in DOORS and b in DOORS:
            found.append(f"{i}: a door imports no other door ({', '.join(sorted(DOORS))})")
        elif a.startswith("chains.core") and b.startswith("chains.core"):
            high, low = core_layer(a), core_layer(b)
            if high and low and high[0] < low[0]:
                rule = " → ".join(t for t, _ in reversed(CORE))
                found.append(f"{i}: {high[1]} may not import {low[1]} in core ({rule})")
    return found


def points_up(caller: str, callee: str) -> bool:
    """Whether ``callee``'s unit sits above ``caller``'s in the declared order."""
    a, b = unit(caller), unit(callee)
    high, low = django_layer(a), django_layer(b)
    if high and low and high[0] != low[0]:
        return high[0] < low[0]
    high, low = core_layer(a), core_layer(b)
    return bool(a.startswith("chains.core") and high and low and high[0] < low[0])


def same_layer_cycles(imports: Iterable[Import]) -> list[str]:
    """Each cycle the imports close between units of one layer, edge by edge."""
    graph: nx.DiGraph = nx.DiGraph()
    for i in imports:
        a, b = unit(i.importer), unit(i.imported)
        if a != b and layer_of(a) == layer_of(b) is not None:
            graph.add_edge(a, b, example=i)
    return [
        " and ".join(
            str(graph.edges[a, b]["example"]) for a, b in zip(c, c[1:] + c[:1], strict=True)
        )
        + f": units of one layer ({layer_of(c[0])[2]}) import each other in a cycle"
        for c in sorted(_from_first(c) for c in nx.simple_cycles(graph))
    ]


def _from_first(cycle: list[str]) -> list[str]:
    """``cycle`` turned to start at its first unit in sort order, so reports read alike."""
    n = cycle.index(min(cycle))
    return cycle[n:] + cycle[:n]


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return project_imports()


# A decorator's wrapper stands for the function it wraps: a call through it is
# a call from whoever called the wrapped function.
WRAPPERS = {"chains.core.memo"}


def _project(frame) -> str | None:
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name if name.split(".")[0] in ("chains", "designer") else None


def calls_up(run) -> list[str]:
    """Each call ``run()`` makes from a project module into one above it (this thread)."""
    found: dict[tuple[str, str], str] = {}

    def watch(frame, event, arg):
        callee = _project(frame) if event == "call" else None
        if callee is None or frame.f_code.co_name == "<module>":
            return  # a module loading on first use: the import checks above cover it
        caller_frame = frame.f_back
        while caller_frame is not None and (
            _project(caller_frame) is None or _project(caller_frame) in WRAPPERS
        ):
            caller_frame = caller_frame.f_back
        caller = _project(caller_frame)
        if caller and points_up(caller, callee):
            where = f"{caller}:{caller_frame.f_code.co_name}"
            found.setdefault((where, callee), f"{where} calls {callee}:{frame.f_code.co_name}")

    sys.setprofile(watch)
    try:
        run()
    finally:
        sys.setprofile(None)
    return sorted(found.values())


def test_every_module_belongs_to_a_declared_layer(imports):
    modules = {i.importer for i in imports} | {i.imported for i in imports}
    undeclared = sorted({unit(m) for m in modules if layer_of(unit(m)) is None})
    assert not undeclared, f"add these to a layer in tests/test_layers.py: {undeclared}"


def test_no_import_points_up_the_layers_or_from_one_door_into_another(imports):
    found = violations(imports)
    assert not found, "\n".join(found)


def test_no_imports_close_a_cycle_between_units_of_one_layer(imports):
    found = same_layer_cycles(imports)
    assert not found, "\n".join(found)


def test_the_core_imports_no_web_framework():
    found = [
        f"{module_name(path)} imports {name}"
        for path in sorted((ROOT / "chains" / "core").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0)
        for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        if name.split(".")[0] in FRAMEWORKS
    ]
    assert not found, "\n".join(found)


SOURCE = """
from __future__ import annotations
from typing import TYPE_CHECKING
from . import fit
if TYPE_CHECKING:
    from chains.views.common import get_chain
def late():
    import chains.core.edit
    from .lint import lint
"""
KNOWN = {
    "chains.core.fit",
    "chains.core.lint",
    "chains.core.edit",
    "chains.core.graph",
    "chains.views.common",
}


def test_the_checker_sees_imports_under_type_checking_and_inside_functions():
    found = {(i.imported, i.line) for i in imports_of("chains.core.graph", SOURCE, False, KNOWN)}
    assert found == {
        ("chains.core.fit", 4),
        ("chains.views.common", 6),
        ("chains.core.edit", 8),
        ("chains.core.lint", 9),
    }


def test_an_upward_import_is_named_with_both_modules_and_the_rule():
    found = violations(imports_of("chains.core.graph", SOURCE, False, KNOWN))
    assert found == [
        "chains.core.graph (line 6) imports chains.views.common: core may not import doors "
        "(project → doors → services → models → core)",
        "chains.core.graph (line 8) imports chains.core.edit: analysis may not import uses in "
        "core (uses → formats/sim → lint → analysis → model → base)",
        "chains.core.graph (line 9) imports chains.core.lint: analysis may not import lint in "
        "core (uses → formats/sim → lint → analysis → model → base)",
    ]


def test_a_cycle_inside_one_layer_is_named_edge_by_edge():
    both = [Import("chains.core.edit", "chains.core.render", 3)]
    both.append(Import("chains.core.render", "chains.core.edit", 7))
    assert same_layer_cycles(both) == [
        "chains.core.edit (line 3) imports chains.core.render and "
        "chains.core.render (line 7) imports chains.core.edit: "
        "units of one layer (uses) import each other in a cycle"
    ]


def _module(name: str, source: str) -> dict:
    space = {"__name__": name}
    exec(source, space)
    return space


def test_the_call_watcher_names_a_service_calling_back_a_hook_from_a_view():
    view = _module("chains.views.workspace", "def hook(spec):\n    return spec")
    service = _module("chains.services.editing", "def save(start):\n    return start(1)")
    assert calls_up(lambda: service["save"](view["hook"])) == [
        "chains.services.editing:save calls chains.views.workspace:hook"
    ]


def test_the_call_watcher_finds_nothing_when_a_view_calls_a_service():
    service = _module("chains.services.editing", "def save(spec):\n    return spec")
    view = _module("chains.views.workspace", "def edit(save):\n    return save(1)")
    assert calls_up(lambda: view["edit"](service["save"])) == []


@pytest.mark.django_db
def test_an_htmx_edit_calls_back_up_no_layer_on_its_way_through(client, flight):
    """request → form → service → core (edit, lint) → store → render, each call pointing down."""
    row = {"fields": {"id": "R9", "signal": ["code:SOLD_OUT"], "verdict": "dead_end"}}
    data = {"base": "1", "op": "add_row", "args": json.dumps(row), "select": "row:R9"}

    def edit():
        response = client.post(f"{flight.url()}edit", data, HTTP_HX_REQUEST="true")
        assert response.status_code == 200 and 'data-base="2"' in response.content.decode()

    assert calls_up(edit) == []
