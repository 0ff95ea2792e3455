"""The ORM classes (``server/db/tables.py``: SQLModel, pydantic and SQLAlchemy's ORM, ~14-20 MiB
that stay for the process's life and ~0.3 s to import) are never imported on the event loop.

The request paths of a signed-in client (sign-in, tokens, users, display preferences, devices, the
activity log, play state) run on the Core tables of ``server/db/schema.py``; the services that still
use the ORM classes (editing, box sets, playlists, live TV, metadata, images, the scanner) import them
either inside the function that runs on a database thread (``db.read(fn)``/``db.write(fn)``, the
scanner's thread) or, in an ``async def``, after ``await load_orm_classes()``
(``server/db/database.py``), which imports them on a worker thread.

The rule, checked on the source of every module of server/: an import of ``server.db.tables`` or
``sqlmodel`` is allowed only under ``if TYPE_CHECKING:``, in a plain (sync) function, or in an async
function after an ``await load_orm_classes()`` that runs before it (earlier in the same block or
in a block around it). Never at a module's top level (but ``tables.py`` itself and the Alembic
migrations, which only Alembic loads, on the migration's thread).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WATCHED = ("server.db.tables", "sqlmodel")
EXEMPT = ("server/db/tables.py", "server/db/migrations/")


def _watched(node: ast.stmt) -> bool:
    """Whether ``node`` imports the ORM classes or SQLModel (any spelling)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return any(name == w or name.startswith(w + ".") for name in names for w in WATCHED)


def _is_load(node: ast.stmt) -> bool:
    """``await load_orm_classes()`` (or ``await database.load_orm_classes()``) as a statement."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Await)):
        return False
    call = node.value.value
    if not isinstance(call, ast.Call):
        return False
    fn = call.func
    name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
    return name == "load_orm_classes"


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    out = []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for handler in getattr(node, "handlers", []) or []:
        out.append(handler.body)
    for case in getattr(node, "cases", []) or []:
        out.append(case.body)
    return out


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Every import of the ORM classes or SQLModel in ``source`` that may run on the event loop."""
    found: list[str] = []

    def visit_block(block: list[ast.stmt], where: str, loaded: bool, type_checking: bool) -> None:
        for stmt in block:
            if where == "async" and _is_load(stmt):
                loaded = True
            if _watched(stmt) and not type_checking:
                if where == "module":
                    found.append(f"{filename}:{stmt.lineno}: at the module's top level: {ast.unparse(stmt)}")
                elif where == "async" and not loaded:
                    found.append(f"{filename}:{stmt.lineno}: in an async function, with no `await load_orm_classes()`"
                                 f" before it: {ast.unparse(stmt)}")
            visit_node(stmt, where, loaded, type_checking)

    def visit_node(node: ast.AST, where: str, loaded: bool, type_checking: bool) -> None:
        if isinstance(node, ast.AsyncFunctionDef):
            visit_block(node.body, "async", False, False)
            return
        if isinstance(node, ast.FunctionDef):
            visit_block(node.body, "sync", False, False)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            visit_block(node.body, where, loaded, True)
            visit_block(node.orelse, where, loaded, type_checking)
            return
        blocks = _blocks(node)
        if blocks:
            for block in blocks:
                visit_block(block, where, loaded, type_checking)
            return
        for child in ast.iter_child_nodes(node):  # (functions defined in an expression: none in practice)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit_node(child, where, loaded, type_checking)

    tree = ast.parse(source, filename)
    visit_block(tree.body, "module", False, False)
    return found


def test_no_module_of_the_server_imports_the_orm_classes_on_the_event_loop():
    found = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT):
            continue
        found += violations(path.read_text(encoding="utf-8"), rel)
    assert found == []


def test_the_check_finds_each_kind_of_import_that_would_run_on_the_loop():
    """The rule itself: what it refuses and what it lets through."""
    refused = {
        "module": "from server.db.tables import Item\n",
        "module, plain import": "import sqlmodel\n",
        "module, submodule": "from sqlmodel.sql.expression import select\n",
        "async": "async def f():\n    from server.db.tables import Item\n",
        "async, in a branch": "async def f(x):\n    if x:\n        from server.db.tables import Item\n",
        "async, load after": "async def f():\n    from sqlmodel import select\n    await load_orm_classes()\n",
        "async, load in another branch": ("async def f(x):\n    if x:\n        await load_orm_classes()\n"
                                          "    from server.db.tables import Item\n"),
        "async in a sync function": "def f():\n    async def g():\n        import server.db.tables\n",
        "async in a class": "class C:\n    async def m(self):\n        from server.db.tables import User\n",
        "async, in a try": "async def f():\n    try:\n        from server.db.tables import Item\n    except E:\n        pass\n",
    }
    allowed = {
        "type checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from server.db.tables import Item\n",
        "sync": "def read(s):\n    from server.db.tables import Item\n",
        "sync in async": "async def f(db):\n    def read(s):\n        from server.db.tables import Item\n",
        "loaded first": "async def f():\n    await load_orm_classes()\n    from server.db.tables import Item\n",
        "loaded around": ("async def f(x):\n    await database.load_orm_classes()\n    if x:\n"
                          "        from sqlmodel import select\n"),
        "core": "async def f():\n    from server.db.schema import items\n    from sqlalchemy import select\n",
    }
    for name, source in refused.items():
        assert len(violations(source)) == 1, name
    for name, source in allowed.items():
        assert violations(source) == [], name
