"""Which processes of the tray executable run server code only (and so never need Qt).

The tray program (`reelroom`) re-enters its own executable for work of the hosted server. In a
PyInstaller bundle each such process runs the executable's run-time hooks, PySide6's among them,
before its entry point; installer/rthook_plain_import.py asks ``server_only(sys.argv)`` and marks
PySide6 not importable in them. The forms recognised, exactly:

- ``--reelroom-reader`` / ``--reelroom-migrate`` as the first argument: a reader process of the
  server, a database migration (installer/entry_reelroom.py);
- ``--multiprocessing-fork`` as the first argument: a worker spawned by multiprocessing (the
  scanner's probe workers, server/library/scan/probing.py). A frozen app's spawn command line is
  ``[executable, "--multiprocessing-fork", "name=value", ...]`` on every platform
  (``multiprocessing.spawn.get_command_line``), and ``multiprocessing.freeze_support()`` in the
  entry point takes any such process as a worker (``multiprocessing.spawn.is_forking``);
- ``[executable, *flags, "-c", command, ...]`` where ``flags`` are the interpreter's own
  (``subprocess._args_from_interpreter_flags()``, compared as a set) and ``command`` starts one
  of multiprocessing's helpers: its resource tracker (started on POSIX by the spawn context for
  its semaphores) or a fork server. These are the forms PyInstaller's multiprocessing run-time
  hook diverts to that helper (and exits) before the entry point runs.

Anything else, a tray started with a user's own arguments included, is the tray, which loads Qt.
"""

from __future__ import annotations

SERVER_FLAGS = ("--reelroom-reader", "--reelroom-migrate", "--multiprocessing-fork")
HELPER_COMMANDS = (
    "from multiprocessing.resource_tracker import main",
    "from multiprocessing.forkserver import main",
    "import sys; from multiprocessing.forkserver import main",  # newer Pythons' fork server
)


def server_only(argv: list[str]) -> bool:
    """True when a process of the tray executable started with ``argv`` runs server code only."""
    if len(argv) >= 2 and argv[1] in SERVER_FLAGS:
        return True
    if "-c" not in argv:
        return False
    switch = argv.index("-c")
    if switch + 1 >= len(argv) or not argv[switch + 1].startswith(HELPER_COMMANDS):
        return False
    from subprocess import _args_from_interpreter_flags  # type: ignore[attr-defined]  # multiprocessing's

    return set(argv[1:switch]) == set(_args_from_interpreter_flags())
