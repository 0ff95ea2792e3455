"""PyInstaller entry point of `reelroom` (the tray app)."""

import multiprocessing
import sys

from app.desktop_main import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # worker processes (e.g. scan probing) re-enter this executable
    sys.exit(main())
