"""Plugins: the provider framework (base.py), discovery and state (manager.py), the built-in
providers as plugins (builtin.py), fetcher order (order.py) and packages (packages.py)."""
