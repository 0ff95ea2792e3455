"""Scanning: from folders on disk to stored items.

``walk`` lists folders, ``naming/`` and ``nfo`` read names and sidecar files, ``resolve`` turns
the tree into items, ``probing`` reads streams and tags, ``store`` writes them (through
``merge``, which keeps what the user edited), ``scanner`` runs the RefreshLibrary task,
``watcher`` rescans what changed, ``virtual_folders`` holds the libraries and their folders,
``hosts`` wakes network hosts before a scan.
"""
