"""PyInstaller entry point of the tray app (`reelroom`)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the scanner's probe workers re-enter here in a frozen app
    sys._reelroom_freeze_support = True
    from app.desktop_main import main

    sys.exit(main())
