"""PyInstaller entry point of `reelroom-server` (the headless server)."""

import multiprocessing
import sys

from app.server_main import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # worker processes (e.g. scan probing) re-enter this executable
    sys.exit(main())
