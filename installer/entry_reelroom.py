"""PyInstaller entry point of the tray app (`reelroom`)."""

import multiprocessing
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["--reelroom-reader"]:  # a reader process of the server (server/readers/)
        from server.readers.worker import main as reader_main

        sys.exit(reader_main())
    if sys.argv[1:2] == ["--reelroom-migrate"]:  # a database migration of the server (server/db/migrate.py)
        from server.db.migrate import main as migrate_main

        sys.exit(migrate_main())
    multiprocessing.freeze_support()  # the scanner's probe workers re-enter here in a frozen app
    sys._reelroom_freeze_support = True
    from app.desktop_main import main

    sys.exit(main())
