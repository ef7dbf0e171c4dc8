"""The database door: one module per area, one typed function per tickq.* function."""
