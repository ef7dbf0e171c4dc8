"""The database door, one module per area: typed functions over tickq.* functions and queries."""
