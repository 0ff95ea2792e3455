"""Write installer/windows/iss_inputs.iss (version, paths, ports) and iss_files.txt (the bundle's
file list) for reelroom.iss.   python installer/windows/make_inputs.py dist/reelroom"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import inputs  # noqa: E402

if __name__ == "__main__":
    bundle = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/reelroom").resolve()
    if not (bundle / "reelroom.exe").exists() and not (bundle / "reelroom").exists():
        sys.exit(f"{bundle} is not a built Reelroom bundle")
    print(inputs.write_windows_inputs(bundle, Path(__file__).with_name("iss_inputs.iss")))
