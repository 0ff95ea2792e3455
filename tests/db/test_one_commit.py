"""One transaction per write: only the writer (server/db/database.py) commits. A commit inside a
``db.write`` callback would split the write into two transactions (the first half kept when the
second fails) and commit before the writer bumps its generation."""

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"


def test_only_the_writer_commits():
    found = []
    for path in sorted(SERVER.rglob("*.py")):
        rel = path.relative_to(SERVER.parent).as_posix()
        if rel == "server/db/database.py" or "/migrations/" in rel:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "commit" and not node.args):
                found.append(f"{rel}:{node.lineno}")
    assert not found, "commit() outside the writer (the writer commits each db.write): " + ", ".join(found)
