"""server/api/ stays thin (docs/architecture.md): handlers start no process and touch no file
themselves; ffmpeg, file reads and writes belong to the services of their domain."""

from __future__ import annotations

import re
from pathlib import Path

API = Path(__file__).resolve().parents[2] / "server" / "api"

FORBIDDEN = {
    "starts a process": re.compile(r"\bsubprocess\b|server\.media import spawn|\bspawn\.|create_subprocess"),
    "touches a file": re.compile(r"\.(write_bytes|write_text|read_bytes|read_text|unlink|mkdir|rmdir|glob|iterdir)\b"
                                 r"|(?<![.\w])open\(|\.open\(\s*[\"']|\bos\.(remove|rename|replace|path\.)|\bshutil\."),
}


def test_handlers_start_no_process_and_touch_no_file():
    offenders = []
    for path in sorted(API.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            for what, pattern in FORBIDDEN.items():
                if pattern.search(code):
                    offenders.append(f"{path.name}:{number} {what}: {line.strip()}")
    assert offenders == []
