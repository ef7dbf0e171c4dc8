"""The database door, one module per area: a typed function per tickq.* function or named query."""
