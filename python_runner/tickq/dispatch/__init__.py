"""One tick of a dispatcher: the loop (tick.py: sync, claim, refill, stay for a retry), one claim
(execute.py), a chain's steps (chain.py), upkeep (upkeep.py: orphans, dead leases, the spool,
stale kinds), alerts (alerts.py) and drift (drift.py), sharing a Context (context.py)."""
