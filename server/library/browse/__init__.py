"""Browsing built on the catalog: play state, TV (seasons, episodes, Next Up), playlists,
collections, related items (similar, instant mixes, suggestions) and editing. ``service.Browse``
holds one of each (``ctx.browse``).
"""
