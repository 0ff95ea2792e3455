"""In-process CPU of the by-name listings (``by_name.list_names``: Artists, AlbumArtists,
Genres, Persons and an artist search as Search/Hints asks it), without HTTP, so the cost of
building, compiling and running their statements is seen apart from the rest of a request.

    python bench/by_name_cpu.py DB [--baseline PATH] [--rounds 100]

``DB``: a reelroom.db, e.g. ``<folder>/data/reelroom.db`` of ``bench/lists.py --keep <folder>``
(100k items). ``--baseline PATH``: another checkout (``git worktree add``) measured on a copy of
the same database in the same run; CPU ms per call (median, process_time) and the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(db: str, rounds: int) -> None:
    """Print ``name<TAB>median cpu ms`` per case (run in the checkout under test)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import Session

    from server.library.catalog.by_name import NameQuery, list_names
    from server.library.catalog.query import ItemQuery

    engine = create_engine(f"sqlite:///{db}")
    with Session(engine) as s:
        libs = frozenset(r[0] for r in s.execute(text("SELECT id FROM items WHERE type = 'CollectionFolder'")))

        def scope(**kw: object) -> ItemQuery:
            return ItemQuery(recursive=True, allowed_library_ids=libs, user_id="bench", **kw)  # type: ignore[arg-type]

        cases = {
            "Artists (first 100)": lambda: NameQuery(kind="MusicArtist", scope=scope(), limit=100),
            "Artists (page 8)": lambda: NameQuery(kind="MusicArtist", scope=scope(), start_index=700, limit=100),
            "AlbumArtists (first 100)": lambda: NameQuery(kind="AlbumArtist", scope=scope(), limit=100),
            "Genres (movies)": lambda: NameQuery(kind="Genre", scope=scope(include_types=["Movie"])),
            "Persons (first 100)": lambda: NameQuery(kind="Person", scope=scope(), limit=100),
            "Artist search (hints)": lambda: NameQuery(kind="MusicArtist", scope=scope(), search_term="an", limit=20),
        }
        for name, make in cases.items():
            for _ in range(5):
                list_names(s, make())
            cpu = []
            for _ in range(rounds):
                t0 = time.process_time()
                list_names(s, make())
                cpu.append((time.process_time() - t0) * 1000)
            print(f"{name}\t{statistics.median(cpu):.3f}", flush=True)


def run(root: Path, db: Path, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="reelroom-byname-cpu-") as tmp:
        copy = Path(tmp) / "reelroom.db"
        shutil.copy(db, copy)
        out = subprocess.run([sys.executable, str(ROOT / "bench" / "by_name_cpu.py"), "--measure", str(copy),
                              "--rounds", str(rounds)], cwd=root, check=True, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(root)}).stdout
    return {name: float(v) for name, v in (line.split("\t") for line in out.splitlines() if "\t" in line)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", type=Path)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(str(args.db), args.rounds)
        return
    print(f"load average {os.getloadavg()[0]:.2f}; by_name.list_names CPU ms per call (median of {args.rounds})")
    this = run(ROOT, args.db, args.rounds)
    base = run(args.baseline.resolve(), args.db, args.rounds) if args.baseline else {}
    print(f"    {'list':<26} {'this':>8}" + (f" {'baseline':>9} {'ratio':>7}" if base else ""))
    for name, value in this.items():
        line = f"    {name:<26} {value:8.2f}"
        if base:
            line += f" {base.get(name, float('nan')):9.2f} {value / base[name] if base.get(name) else float('nan'):7.2f}"
        print(line)


if __name__ == "__main__":
    main()
