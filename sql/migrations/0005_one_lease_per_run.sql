-- 0005: a run leases at most one kind, and a report finds that kind by its run in one probe.

CREATE UNIQUE INDEX job_kind_run ON tickq.job_kind (run_id) WHERE run_id IS NOT NULL;
