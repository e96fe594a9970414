"""The import graph holds the layout's rules (README, "Layout"): dependencies point inwards.

Read from the source (every import, those inside functions included; those under
``if TYPE_CHECKING:`` left out, as they never run): the rules core imports no other part,
the store only the rules, the server and the judge's tool neither each other nor the
client, the client only the wire contract; only the entry points compose them. And no
module is part of an import cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Each first-party package and where its source is.
PACKAGES = {
    "domain": ROOT / "domain",
    "storage": ROOT / "storage",
    "server": ROOT / "server",
    "replay": ROOT / "replay",
    "entrypoints": ROOT / "entrypoints",
    "totem_client": ROOT / "clients" / "python" / "totem_client",
    "totem": ROOT / "protos" / "totem",
}

#: What each package may import of the others (itself always).
ALLOWED = {
    "domain": set(),
    "storage": {"domain"},
    "server": {"domain", "storage", "totem"},
    "replay": {"domain", "storage", "totem"},
    "totem_client": {"totem"},
    "entrypoints": {"domain", "storage", "server", "replay", "totem_client", "totem"},
    "totem": set(),
}


def _modules() -> dict[str, Path]:
    modules = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for orelse in node.orelse for n in [orelse, *_runtime_nodes(orelse)])
            continue
        yield node
        yield from _runtime_nodes(node)


def _known(name: str) -> str | None:
    """The first-party module ``name`` is, or is in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> set[str]:
    """The first-party modules ``module`` imports when it runs: a name imported from a
    package counts as the submodule it is, if it is one."""
    path = MODULES[module]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                if path.name != "__init__.py":
                    package.pop()
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        found |= {known for name in targets if (known := _known(name)) and known != module}
    return found


GRAPH = {module: imports(module) for module in MODULES}


def test_each_part_imports_only_what_the_layout_allows() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if (top := target.split(".")[0]) != module.split(".")[0]
        and top not in ALLOWED[module.split(".")[0]]
    )
    assert wrong == []


def test_no_module_is_in_an_import_cycle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in GRAPH[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (top := stack.pop()) != module:
                component.append(top)
            if component:
                cycles.append(sorted([module, *component]))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_graph_is_read_at_all() -> None:
    """The rules above would hold on an empty graph: the reading itself is checked on
    imports known to exist."""
    assert "domain.kernel.match" in GRAPH["domain.jungle_speed.match"]
    assert "storage.arena" in GRAPH["server.actors"]
    assert {"server.cli", "totem_client.cli"} <= GRAPH["entrypoints.totem"]
    assert "server.codec.wire" in GRAPH["server.codec.jungle_speed"]
