-- A run or a step is reported as one of the outcomes that end it (ok, failed, timeout,
-- interrupted, cancelled): report_run, report_late_run (the spool's) and report_step refuse
-- running, lost, skipped and null alike, before they look for the run, naming what was given.
BEGIN;
SELECT plan(9);

SELECT throws_ok($$SELECT * FROM tickq.report_run(1, 'd1', 'running')$$, '22023',
    'a run is reported as ok, failed, timeout, interrupted or cancelled, not running',
    'report_run refuses running');
SELECT throws_ok($$SELECT * FROM tickq.report_run(1, 'd1', NULL)$$, '22023',
    'a run is reported as ok, failed, timeout, interrupted or cancelled, not null',
    'report_run refuses null');
SELECT throws_ok($$SELECT * FROM tickq.report_run(1, 'd1', 'skipped')$$, '22023',
    'a run is reported as ok, failed, timeout, interrupted or cancelled, not skipped',
    'report_run refuses skipped');
SELECT throws_ok($$SELECT * FROM tickq.report_late_run(1, 'd1', 'lost')$$, '22023',
    'a run is reported as ok, failed, timeout, interrupted or cancelled, not lost',
    'report_late_run refuses lost');
SELECT throws_ok($$SELECT * FROM tickq.report_late_run(1, 'd1', NULL)$$, '22023',
    'a run is reported as ok, failed, timeout, interrupted or cancelled, not null',
    'report_late_run refuses null');
SELECT throws_ok($$SELECT tickq.report_step(1, 'd1', 1, 'fetch', 'running')$$, '22023',
    'a step is reported as ok, failed, timeout, interrupted or cancelled, not running',
    'report_step refuses running, naming a step');
SELECT throws_ok($$SELECT tickq.report_step(1, 'd1', 1, 'fetch', NULL)$$, '22023',
    'a step is reported as ok, failed, timeout, interrupted or cancelled, not null',
    'report_step refuses null');
-- An ending outcome passes the check and meets the next rule: the run must exist (TQ007).
SELECT throws_ok($$SELECT * FROM tickq.report_run(-1, 'd1', 'cancelled')$$, 'TQ007', NULL,
    'report_run takes cancelled as an outcome');
SELECT throws_ok($$SELECT tickq.report_step(-1, 'd1', 1, 'fetch', 'interrupted')$$, 'TQ007', NULL,
    'report_step takes interrupted as an outcome');

SELECT * FROM finish();
ROLLBACK;
