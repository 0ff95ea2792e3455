"""CPU time of the offline artwork run's candidate selection (no files made, no server).

    python bench/artwork_select.py --data DIR [--baseline ROOT] [--repeat 3]

``DIR`` is a data folder from ``bench/lists.py --build-only DIR --sizes 100000`` (or ``--keep``:
its ``data`` subfolder's parent). A copy of its database is given covers, so that every path of
the selection is taken: every third album gets a Primary (with a tag; every ninth a Primary
without one, which does not count), a few albums lose their year, and every tenth MusicArtist
row is dropped (its name is then an artist met only in tags: a ``byname_artwork`` plan). Then,
in a subprocess per checkout (this one and ``--baseline``, side by side on the same copy), it
times with ``time.process_time``:

- ``_artists_without_art`` (MusicArtist rows without a Primary and the album cover to copy);
- ``_by_name_plans`` (genres, music genres and rowless artists: their sources).

and prints CPU ms per call (best of ``--repeat``), with a digest of the answers: the two
checkouts must agree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def prepare(src: Path, dst: Path) -> None:
    import sqlite3

    shutil.copyfile(src, dst)
    con = sqlite3.connect(dst)
    albums = [r[0] for r in con.execute("SELECT id FROM items WHERE type = 'MusicAlbum' ORDER BY id")]
    for n, album_id in enumerate(albums):
        if n % 9 == 0:
            images = [{"Type": "Primary", "Path": f"/covers/{album_id}.jpg"}]  # no tag: not usable
        elif n % 3 == 0:
            images = [{"Type": "Primary", "Path": f"/covers/{album_id}.jpg", "Tag": f"t{album_id}"}]
        else:
            continue
        con.execute("UPDATE items SET images_json = ? WHERE id = ?", (json.dumps(images), album_id))
    con.execute("UPDATE items SET production_year = NULL WHERE type = 'MusicAlbum' AND id LIKE '0%'")
    artists = [r[0] for r in con.execute("SELECT id FROM items WHERE type = 'MusicArtist' ORDER BY id")]
    con.executemany("DELETE FROM items WHERE id = ?", [(a,) for a in artists[::10]])
    con.commit()
    con.close()


def measure(db_file: Path, repeat: int) -> dict[str, object]:
    from server.artwork.service import ArtworkService
    from server.db.database import Database, sqlite_url

    db = Database(sqlite_url(db_file))
    out: dict[str, object] = {}
    try:
        with db.session() as s:
            for name, fn in (("artists", ArtworkService._artists_without_art),
                             ("by_name", lambda s: ArtworkService._by_name_plans(None, s))):  # type: ignore[arg-type]
                best = float("inf")
                result = None
                for _ in range(repeat):
                    t0 = time.process_time()
                    result = fn(s)
                    best = min(best, time.process_time() - t0)
                if name == "artists":
                    answer = sorted((a, n, c.path, c.tag) for a, n, c in result)
                    count = len(answer)
                else:
                    plans, stale = result
                    answer = [sorted((p.item_id, p.kind, p.name, [(x.path, x.tag) for x in p.sources])
                                     for p in plans), sorted(stale)]
                    count = len(plans)
                digest = hashlib.sha1(json.dumps(answer).encode()).hexdigest()[:12]
                out[name] = {"ms": best * 1000, "count": count, "digest": digest}
    finally:
        db.close()
    return out


def run_checkout(root: Path, db_file: Path, repeat: int) -> dict[str, dict[str, object]]:
    code = (f"import sys, json; sys.path.insert(0, {str(root)!r}); sys.path.insert(1, {str(HERE)!r}); "
            f"import artwork_select as a; print(json.dumps(a.measure(__import__('pathlib').Path({str(db_file)!r}), "
            f"{repeat})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": ""}, cwd=root)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a bench/lists.py data folder")
    parser.add_argument("--baseline", type=Path, help="another checkout to time side by side")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db_src = args.data / "data" / "reelroom.db"
    with tempfile.TemporaryDirectory(prefix="artwork-select-") as tmp:
        db_file = Path(tmp) / "reelroom.db"
        prepare(db_src, db_file)
        print(f"load average {os.getloadavg()[0]:.1f}; CPU ms per call, best of {args.repeat}")
        results = {"this": run_checkout(ROOT, db_file, args.repeat)}
        if args.baseline is not None:
            results["baseline"] = run_checkout(args.baseline.resolve(), db_file, args.repeat)
        for part in ("artists", "by_name"):
            cells = [f"{who} {r[part]['ms']:8.1f} ms ({r[part]['count']} rows, {r[part]['digest']})"
                     for who, r in results.items()]
            print(f"{part:8s} " + "   ".join(cells))
        if "baseline" in results:
            same = all(results["this"][p]["digest"] == results["baseline"][p]["digest"] for p in ("artists", "by_name"))
            print("answers", "identical" if same else "DIFFER")


if __name__ == "__main__":
    main()
