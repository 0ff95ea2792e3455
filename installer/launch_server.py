"""PyInstaller entry point of `reelroom-server` (the headless server)."""

import sys

from app.server_main import main

if __name__ == "__main__":
    sys.exit(main())
