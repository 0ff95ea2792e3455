"""docs/architecture.md names every package under server/ (each folder with an __init__.py, nested
ones included, and the namespace package server/web), so the layout it shows is the real one."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
_ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[\w.-]+)/(?:\s|$)")


def server_packages() -> list[str]:
    """Package folders under server/ ("server/api", "server/library/scan/naming", ...): folders with an
    __init__.py, and top-level folders of modules without one (namespace packages: server/web)."""
    found = set()
    for path in (ROOT / "server").rglob("*.py"):
        folder = path.parent.relative_to(ROOT)
        if len(folder.parts) < 2 or "__pycache__" in folder.parts or "migrations" in folder.parts:
            continue
        if path.name == "__init__.py" or (len(folder.parts) == 2 and not (path.parent / "__init__.py").exists()):
            found.add(folder.as_posix())
    return sorted(found)


def layout_paths(text: str) -> set[str]:
    """Folder paths of the layout tree (the first code block): an entry `name/` at the start of a
    line sits inside the nearest entry above it that is indented less."""
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    stack: list[tuple[int, str]] = []
    paths = set()
    for line in block.splitlines():
        m = _ENTRY.match(line)
        if not m:
            continue
        indent = len(m["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([p for _, p in stack] + [m["name"]])
        stack.append((indent, m["name"]))
        paths.add(path)
    return paths


def named(text: str, package: str) -> bool:
    """In the layout tree, or written out as a path (`server/library/scan/`) anywhere."""
    return package in layout_paths(text) or bool(re.search(rf"{re.escape(package)}(?![\w])", text))


def test_architecture_doc_names_every_server_package():
    packages = server_packages()
    assert {"server/api", "server/db", "server/web"} <= set(packages)
    text = DOC.read_text(encoding="utf-8")
    missing = [p + "/" for p in packages if not named(text, p)]
    assert not missing, ("docs/architecture.md names neither in its layout tree nor as a path these "
                         "packages: " + ", ".join(missing))


def test_the_check_reads_the_layout_tree():
    doc = ("## Layout\n\n```\nserver/     the server\n  api/        handlers\n  library/    the library\n"
           "    scan/       walk.py and\n                naming/ (rules)\n  db/         tables\n"
           "ui/         widgets\n```\nMore: `server/auth/` and server/http.\n")
    assert layout_paths(doc) == {"server", "server/api", "server/library", "server/library/scan",
                                 "server/library/scan/naming", "server/db", "ui"}
    assert named(doc, "server/library/scan/naming") and named(doc, "server/auth") and named(doc, "server/http")
    assert not named(doc, "server/library/catalog") and not named(doc, "server/ap")
