"""PyInstaller entry point of the headless server (`reelroom-server`)."""

import multiprocessing
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["--reelroom-reader"]:  # a reader process of the server (server/readers/)
        from server.readers.worker import main as reader_main

        sys.exit(reader_main())
    if sys.argv[1:2] == ["--reelroom-migrate"]:  # a database migration of the server (server/db/migrate.py)
        from server.db.migrate import main as migrate_main

        sys.exit(migrate_main())
    multiprocessing.freeze_support()
    sys._reelroom_freeze_support = True
    from app.server_main import main

    sys.exit(main())
