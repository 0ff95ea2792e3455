"""The shape of the import graph (issue 12): no cycles in server/, only the composition root and the
handlers import server.context, server/ never imports Qt and ui/ never imports server/.

The graph is built from the AST of every module: module-level imports, including those under
``if TYPE_CHECKING:`` and in class bodies (imports inside functions are lazy loads and are left out).
``python tests/test_architecture.py`` prints the graph's figures and its upward imports.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The modules that may import server.context: the composition root itself, the app and runner that
# build it, and the handlers, which get ``ctx`` injected.
MAY_IMPORT_CONTEXT = ("server.context", "server.app", "server.runner", "server.api")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_level_imports(tree: ast.Module):
    """Import nodes executed when the module is imported: top level, under if/try/with blocks and in
    class bodies, not inside functions."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        else:
            stack.extend(ast.iter_child_nodes(node))


def _all_imports(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement names (``from a import b`` names ``a.b`` and ``a``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [prefix] + [f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"]


def import_graph(package: str, *, module_level: bool = True) -> dict[str, set[str]]:
    """{module: modules of ``package`` it imports}. A ``from a import b`` where ``a.b`` is a module is
    an edge to ``a.b``; otherwise to ``a``."""
    files = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        nodes = _module_level_imports(tree) if module_level else _all_imports(tree)
        edges: set[str] = set()
        for node in nodes:
            targets = _targets(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                submodules = [t for t in targets[1:] if t in files]
                edges.update(submodules)
                if len(submodules) < len(targets) - 1 and targets[0] in files:
                    edges.add(targets[0])  # some names are attributes of the module itself
            else:
                edges.update(t for t in targets if t in files)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete loop through a component, for the failure message."""
    members = set(component)
    start = component[0]
    path = [start]
    seen = {start}
    node = start
    while True:
        nxt = sorted(m for m in graph[node] if m in members)
        back = [m for m in nxt if m == start]
        if back and len(path) > 1:
            return path + [start]
        step = next((m for m in nxt if m not in seen), None)
        if step is None:
            return path + [nxt[0]] if nxt else path
        path.append(step)
        seen.add(step)
        node = step


def _allowed_to_import_context(module: str) -> bool:
    return any(module == allowed or module.startswith(allowed + ".") for allowed in MAY_IMPORT_CONTEXT)


def test_server_has_no_import_cycles():
    graph = import_graph("server")
    found = cycles(graph)
    assert found == [], "import cycles in server/:\n" + "\n".join(
        f"  {len(c)} modules, e.g. " + " -> ".join(_a_cycle(graph, c)) for c in found)


# Cycles that only imports inside functions make, accepted for now (none).
LAZY_CYCLES_LEFT: list[list[str]] = []


def test_imports_inside_functions_hide_no_cycle():
    """Importing inside a function is for loading a heavy library late, not for hiding a cycle."""
    graph = import_graph("server", module_level=False)
    found = [c for c in cycles(graph) if c not in LAZY_CYCLES_LEFT]
    assert found == [], "cycles through imports inside functions:\n" + "\n".join(
        "  " + " -> ".join(_a_cycle(graph, c)) for c in found)


def test_only_the_composition_root_and_handlers_import_the_context():
    graph = import_graph("server")
    offenders = sorted(m for m, edges in graph.items()
                       if "server.context" in edges and not _allowed_to_import_context(m))
    # imports inside functions count too: they would hide the same dependency
    lazy = import_graph("server", module_level=False)
    offenders += sorted(m for m, edges in lazy.items()
                        if "server.context" in edges and not _allowed_to_import_context(m) and m not in offenders)
    assert offenders == [], f"modules that import server.context (take explicit dependencies instead): {offenders}"


def test_server_never_imports_qt_and_ui_never_imports_server():
    offenders = []
    for package, forbidden in (("server", ("PySide6", "ui", "app")), ("ui", ("server", "app"))):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in _all_imports(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if not node.level else [])
                if any(n == f or n.startswith(f + ".") for n in names for f in forbidden):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


# -- layers: a module may import its own layer and the ones below; the imports that go up are listed

LAYERS = [  # lowest first; the longest matching prefix decides a module's layer
    ("base", ["server.code_cache", "server.errors", "server.guid", "server.lazy_modules", "server.logs", "server.paths", "server.resources",
              "server.version", "server.wire", "server.db", "server.media", "server.events"]),
    ("infrastructure", ["server.tasks.scheduler", "server.http", "server.system.configuration",
                        "server.system.activity", "server.system.filesystem", "server.system.localization",
                        "server.plugins.base"]),
    ("core domains", ["server.auth", "server.users", "server.sessions", "server.net", "server.metadata",
                      "server.plugins", "server.library.scan", "server.library.catalog", "server.system",
                      "server.tasks"]),
    ("domains", ["server.library.browse", "server.images", "server.subtitles", "server.playback",
                 "server.trickplay", "server.artwork", "server.livetv", "server.syncplay", "server.web",
                 "server.readers"]),
    ("composition", ["server.context", "server.app", "server.runner", "server.api", "server.__main__",
                     "server.cli"]),
]

# The upward imports left, and why each is there (docs/architecture.md repeats this list).
UPWARD_IMPORTS = {
    ("server.library.catalog.dto", "server.trickplay.service"):
        "BaseItemDto.Trickplay: the DTO builder reads the tile rows of a page in one query (info_for)",
    ("server.library.catalog.single_item", "server.trickplay.service"):
        "the same for GET /Items/{id}'s kept DTO (info_for on the one item)",
    ("server.library.catalog.items", "server.livetv.items"):
        "the scope rule: Live TV's view and recordings follow EnableLiveTvAccess (LIVETV_LIBRARY_IDS)",
}


def layer_of(module: str) -> int:
    best, best_len = len(LAYERS) - 2, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def upward_imports() -> list[tuple[str, str]]:
    graph = import_graph("server")
    return sorted((m, t) for m, edges in graph.items() for t in edges if layer_of(t) > layer_of(m))


def test_upward_imports_are_the_listed_ones():
    """A lower layer importing a higher one is an exception with a reason: list it in UPWARD_IMPORTS
    (and docs/architecture.md), or pass the dependency in from server/context.py instead."""
    found = upward_imports()
    new = [f"{m} -> {t}" for m, t in found if (m, t) not in UPWARD_IMPORTS]
    gone = [f"{m} -> {t}" for m, t in UPWARD_IMPORTS if (m, t) not in found]
    assert not new and not gone, f"new upward imports: {new}; listed but gone: {gone}"


if __name__ == "__main__":
    g = import_graph("server")
    cs = cycles(g)
    print(f"modules: {len(g)}, edges: {sum(map(len, g.values()))}")
    print(f"cycles: {len(cs)} ({sum(map(len, cs))} modules)")
    for c in cs:
        print("  ", len(c), " -> ".join(_a_cycle(g, c)))
        if "-v" in sys.argv:
            print("     members:", ", ".join(c))
    ctx_users = sorted(m for m, e in g.items() if "server.context" in e and not _allowed_to_import_context(m))
    print(f"non-root modules importing server.context: {len(ctx_users)}", ctx_users)
    ups = upward_imports()
    print(f"upward imports: {len(ups)}")
    for m, t in ups:
        print(f"   {m} -> {t}: {UPWARD_IMPORTS.get((m, t), 'NOT LISTED')}")
