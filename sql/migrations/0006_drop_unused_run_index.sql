-- 0006: the last finished run of a kind is job_kind.last_run_id (kept by finish_run), for
-- queue_status and take_alerts alike. The index that found it by (kind, finished_at) answers no
-- query any more and cost an index entry on every report.

DROP INDEX tickq.job_run_kind_finished;
