"""Remote metadata: provider lookups (identify), applying a chosen result to an item, and
remote images."""
