"""PyInstaller entry point of `reelroom` (the tray app)."""

import sys

from app.desktop_main import main

if __name__ == "__main__":
    sys.exit(main())
