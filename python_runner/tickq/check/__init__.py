"""`tickq check` and `tickq simulate`: drivers of the capacity and simulation SQL functions."""
