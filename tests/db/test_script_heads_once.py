"""A restart checks the database against the migration scripts' heads several times (the entry
point's ``start_if_due``, ``create_at_head``, ``up_to_date``); the scripts are read once
(``script_heads`` answers again from what it read while no script changed), and an existing
database file reads none of them in ``create_at_head``."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import pytest

from server.context import ServerContext, ServerOptions
from server.db import migration_child
from server.db.migration_child import MIGRATIONS, create_at_head, script_heads, sqlite_due
from server.paths import ServerPaths
from tests.conftest import ON_POSTGRES

SCRIPT = '''"""{doc}"""
revision = "{revision}"
down_revision = {down}
'''


def _count_script_reads(monkeypatch: pytest.MonkeyPatch, folder: Path) -> collections.Counter:
    reads: collections.Counter = collections.Counter()
    read_text = Path.read_text

    def counting(self: Path, *args, **kwargs):
        if self.parent == folder:
            reads[self.name] += 1
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    return reads


@pytest.mark.skipif(ON_POSTGRES, reason="the SQLite start (a file at the head schema)")
def test_a_restart_reads_each_migration_script_at_most_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db_file = ServerPaths(tmp_path).database_file
    assert create_at_head(db_file)  # a first start's database
    getattr(migration_child, "_HEADS", {}).clear()  # (what this test process read before does not count)
    reads = _count_script_reads(monkeypatch, MIGRATIONS / "versions")
    assert sqlite_due(db_file) is False  # the entry point: no child to start
    ctx = ServerContext(ServerOptions(data_dir=tmp_path, enable_lan=False, migrate_in_child=True))
    try:
        ctx._migrate()  # what initialize runs on a thread: up to date, nothing to do
    finally:
        ctx.db.close()
    assert reads and max(reads.values()) == 1, reads
    assert not create_at_head(db_file)  # an existing file: no script read
    assert max(reads.values()) == 1, reads


def test_script_heads_follow_the_scripts_as_they_change(tmp_path: Path) -> None:
    folder = tmp_path / "versions"
    folder.mkdir()
    (folder / "a.py").write_text(SCRIPT.format(doc="base", revision="a1", down="None"), encoding="utf-8")
    (folder / "b.py").write_text(SCRIPT.format(doc="next", revision="b1", down='"a1"'), encoding="utf-8")
    assert script_heads(folder) == {"b1"}
    assert script_heads(folder) == {"b1"}
    (folder / "c.py").write_text(SCRIPT.format(doc="a branch", revision="c1", down='"a1"'), encoding="utf-8")
    assert script_heads(folder) == {"b1", "c1"}  # a script added
    (folder / "c.py").write_text(SCRIPT.format(doc="the branch merged", revision="c1", down='"b1"'), encoding="utf-8")
    assert script_heads(folder) == {"c1"}  # a script changed (another size)
    (folder / "c.py").unlink()
    assert script_heads(folder) == {"b1"}  # a script removed
    (folder / "b.py").write_text("revision = make()\n", encoding="utf-8")
    assert script_heads(folder) is None  # not plain literals: Alembic decides
    heads = script_heads(folder)
    assert heads is None
    shutil.rmtree(folder)
    assert script_heads(folder) is None  # no folder


def test_an_answer_is_a_copy(tmp_path: Path) -> None:
    folder = tmp_path / "versions"
    folder.mkdir()
    (folder / "a.py").write_text(SCRIPT.format(doc="base", revision="a1", down="None"), encoding="utf-8")
    script_heads(folder).add("changed")  # type: ignore[union-attr]
    assert script_heads(folder) == {"a1"}
