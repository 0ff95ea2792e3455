#!/usr/bin/env python3
"""The type check of server/, app/ and ui/: mypy --strict against a baseline that only shrinks.

mypy runs with the configuration in pyproject.toml ([tool.mypy]: strict everywhere). Every module
that had strict errors when the check was introduced has its count in ``.ci/mypy-baseline.json``,
keyed by its path. The check fails when a module has more errors than its entry; a module without
an entry (a new one, or one moved to a new path) must have none, so new code is strict. A module
with fewer errors than its entry passes, with a note to lower the baseline.

    .venv/bin/python .ci/typecheck.py            # the check (.ci/run runs it)
    .venv/bin/python .ci/typecheck.py --update   # rewrite the baseline after fixing errors, or
                                                 # after modules moved (merge main, then run this;
                                                 # a conflicted baseline file is fine: each module
                                                 # starts from its larger side)

``--update`` refuses a baseline whose total grows (fix the new errors instead); only a deliberate
change of the checker (a mypy upgrade) takes ``--update --allow-growth``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.json"
UPDATE_HINT = ".venv/bin/python .ci/typecheck.py --update"
_ERROR = re.compile(r"^(?P<path>[^:\s][^:]*\.pyi?):(?P<line>\d+)(?::\d+)?: error: ")


def run_mypy(root: Path = ROOT, args: Iterable[str] = ()) -> tuple[int, list[str]]:
    """Run mypy (configuration from root's pyproject.toml); its exit code and output lines."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary",
                           "--show-error-codes", *args],
                          cwd=root, capture_output=True, text=True)
    return proc.returncode, (proc.stdout + proc.stderr).splitlines()


def count_errors(lines: Iterable[str]) -> Counter[str]:
    """Errors per module path (posix, relative to the root) in mypy's output."""
    counts: Counter[str] = Counter()
    for line in lines:
        m = _ERROR.match(line)
        if m:
            counts[Path(m["path"]).as_posix()] += 1
    return counts


@dataclass
class Verdict:
    worse: dict[str, tuple[int, int]] = field(default_factory=dict)   # path -> (allowed, found)
    better: dict[str, tuple[int, int]] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)                    # entries of absent modules

    @property
    def ok(self) -> bool:
        return not self.worse


def compare(baseline: dict[str, int], counts: Counter[str], root: Path = ROOT) -> Verdict:
    verdict = Verdict()
    for path, found in sorted(counts.items()):
        allowed = baseline.get(path, 0)
        if found > allowed:
            verdict.worse[path] = (allowed, found)
    for path, allowed in sorted(baseline.items()):
        found = counts.get(path, 0)
        if not (root / path).exists():
            verdict.stale.append(path)
        elif found < allowed:
            verdict.better[path] = (allowed, found)
    return verdict


def load_baseline(path: Path = BASELINE) -> dict[str, int]:
    if not path.exists():
        return {}
    text = path.read_text()
    if "\n<<<<<<< " in "\n" + text:
        raise ConflictedBaseline(_sides_of(text))
    data = json.loads(text)
    return {str(k): int(v) for k, v in data["modules"].items()}


class ConflictedBaseline(Exception):
    """The baseline file holds merge-conflict markers; ``merged`` takes each module's larger entry."""

    def __init__(self, sides: tuple[str, str]) -> None:
        super().__init__("merge conflict markers")
        ours, theirs = (json.loads(side)["modules"] for side in sides)
        self.merged = {k: max(int(ours.get(k, 0)), int(theirs.get(k, 0))) for k in {*ours, *theirs}}


def _sides_of(text: str) -> tuple[str, str]:
    """Both sides of a file with git's conflict markers."""
    ours: list[str] = []
    theirs: list[str] = []
    where = "both"
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            where = "ours"
        elif line.startswith("=======") and where == "ours":
            where = "theirs"
        elif line.startswith(">>>>>>> ") and where == "theirs":
            where = "both"
        else:
            if where in ("both", "ours"):
                ours.append(line)
            if where in ("both", "theirs"):
                theirs.append(line)
    return "".join(ours), "".join(theirs)


def write_baseline(counts: Counter[str], path: Path = BASELINE) -> None:
    import mypy.version

    data = {
        "about": "mypy --strict errors per module that may remain; only ever lower these. "
                 f"Regenerate: {UPDATE_HINT}",
        "mypy": mypy.version.__version__,
        "modules": dict(sorted(counts.items())),
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def report(verdict: Verdict, lines: list[str], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for path, (allowed, found) in verdict.worse.items():
        what = ("is not in the baseline: a new (or moved) module must be strict-clean"
                if allowed == 0 else f"has {found} errors, its baseline allows {allowed}")
        print(f"\n{path} {what}:", file=out)
        for line in lines:
            m = _ERROR.match(line)
            if m and Path(m["path"]).as_posix() == path:
                print(f"  {line}", file=out)
    if verdict.worse:
        print("\nFix these errors (the baseline may only shrink). If a module only moved, merge and "
              f"run `{UPDATE_HINT}` (it refuses a growing total).", file=out)
    if verdict.better or verdict.stale:
        lower = [f"{p} {a} -> {f}" for p, (a, f) in verdict.better.items()]
        lower += [f"{p} (gone)" for p in verdict.stale]
        print(f"\nFewer errors than the baseline; lower it with `{UPDATE_HINT}`: " + ", ".join(lower),
              file=out)


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    parser.add_argument("--allow-growth", action="store_true",
                        help="with --update: accept a larger total (a checker upgrade only)")
    args = parser.parse_args(argv)

    baseline_file = root / BASELINE.relative_to(ROOT)
    code, lines = run_mypy(root)
    counts = count_errors(lines)
    if code not in (0, 1) or (code == 1 and not counts):
        print("\n".join(lines), file=sys.stderr)
        print(f"mypy failed (exit {code}) without type errors to count", file=sys.stderr)
        return 2
    total = sum(counts.values())
    try:
        baseline = load_baseline(baseline_file)
    except ConflictedBaseline as conflict:
        if not args.update:
            print(f"{baseline_file.relative_to(root)} has merge conflict markers: run `{UPDATE_HINT}` "
                  "(it starts from the larger entry of each side).")
            return 1
        baseline = conflict.merged
    if args.update:
        old_total = sum(baseline.values())
        if baseline and total > old_total and not args.allow_growth:
            verdict = compare(baseline, counts, root)
            report(Verdict(worse=verdict.worse), lines)
            print(f"\nThe total would grow from {old_total} to {total}: baseline not written.")
            return 1
        write_baseline(counts, baseline_file)
        print(f"Baseline written: {total} errors in {len(counts)} modules (was {old_total}).")
        return 0
    verdict = compare(baseline, counts, root)
    report(verdict, lines)
    print(f"\nmypy --strict: {total} errors in {len(counts)} modules, baseline {sum(baseline.values())}"
          f" -> {'ok' if verdict.ok else 'FAILED'}")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
