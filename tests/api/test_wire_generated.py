"""server/wire/models.py and operations.py are what `python -m server.wire.generate` makes from the
shared Jellyfin spec: nobody edited them by hand, and the generator still reproduces them."""

import json
import os
from pathlib import Path

import pytest

from server.wire import generate

ROOT = Path(__file__).resolve().parents[2]
SPEC_NAME = Path("shared") / "jellyfin" / "openapi-10.10.7.json"


def _spec_path() -> Path | None:
    """$REELROOM_JELLYFIN_SPEC, else shared/ beside the checkout or one level up (worktrees)."""
    if os.environ.get("REELROOM_JELLYFIN_SPEC"):
        given = Path(os.environ["REELROOM_JELLYFIN_SPEC"])
        return given if given.is_file() else None
    return next((base / SPEC_NAME for base in (ROOT.parent, ROOT.parent.parent) if (base / SPEC_NAME).is_file()),
                None)


@pytest.fixture(scope="module")
def spec() -> dict:
    path = _spec_path()
    if path is None:
        pytest.skip(f"the shared Jellyfin spec ({SPEC_NAME}) is not beside this checkout: "
                    "cannot check that server/wire/ is regenerated from it")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, make", [("models.py", generate.generate_models),
                                        ("operations.py", generate.generate_operations)])
def test_the_committed_wire_module_is_what_the_generator_makes(spec, name, make):
    committed = (ROOT / "server" / "wire" / name).read_text(encoding="utf-8")
    generated = make(spec)
    if generated != committed:
        diff = [f"line {i + 1}: committed {a!r} / generated {b!r}"
                for i, (a, b) in enumerate(zip(committed.splitlines(), generated.splitlines(), strict=False))
                if a != b][:5]
        pytest.fail(f"server/wire/{name} differs from `python -m server.wire.generate <spec>`'s output "
                    f"({len(committed.splitlines())} vs {len(generated.splitlines())} lines): " + "; ".join(diff))
