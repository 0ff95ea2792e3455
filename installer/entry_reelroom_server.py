"""PyInstaller entry point of the headless server (`reelroom-server`)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys._reelroom_freeze_support = True
    from app.server_main import main

    sys.exit(main())
