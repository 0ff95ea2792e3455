"""The catalog: reading stored items.

``query`` compiles GET /Items parameters into one SQL query, ``by_name`` lists artists, genres,
studios, people and years, ``dto`` builds BaseItemDto replies, ``items`` (ItemService) is what
handlers call, with ``home`` (Latest), ``search`` and ``search_index`` (full text),
``media_sources``, ``ids`` and ``sorting`` (the id and sort-name rules the scanner shares), and
``planner_stats`` (SQLite ANALYZE after changes).
"""
