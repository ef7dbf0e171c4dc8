"""One tick of a dispatcher: sync, claim, execute, report, refill; chains; upkeep; alerts."""
