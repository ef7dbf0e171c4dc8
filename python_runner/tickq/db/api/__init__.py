"""One module per area of the database API: each function wraps one tickq.* function."""
