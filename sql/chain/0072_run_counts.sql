-- Migration 0072_run_counts.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- 0072: the metrics' counters kept as runs end, not computed from the whole history at every
-- scrape. tickq.metrics_text counted every kept run per kind and outcome and, per kind and
-- bucket, the runs at most that long: past the statement timeout at 5,000 kinds and 200,000
-- runs, so a scrape got nothing. tickq.run_count holds, per kind, every run that ever ended
-- (kept in job_run or pruned by housekeeping): what the text says, read as it is.
--
-- One row per kind, written by the triggers run_counted and run_counted_insert in the same
-- transaction as the write that ends a run (a report, a lease that expired, a skipped slot, a
-- late report that corrects a lost run): a run that ended is added, a change to one that had
-- ended takes its old values out first. Housekeeping's pruning deletes runs and changes no
-- count. runs counts by outcome in the enum's order (running's place stays 0); buckets the runs
-- whose duration was at most each bound of tickq.metrics_buckets(), in order (cumulative);
-- seconds is exact (numeric), as the text prints it; last_ok the last finish of a run that
-- ended ok.
CREATE TABLE tickq.run_count (
    kind text PRIMARY KEY REFERENCES tickq.job_kind (name) ON UPDATE CASCADE ON DELETE CASCADE,
    runs bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}',
    merged_slots bigint NOT NULL DEFAULT 0,
    timed_runs bigint NOT NULL DEFAULT 0,
    seconds numeric NOT NULL DEFAULT 0,
    buckets bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0,0}',
    last_ok timestamptz
);
COMMENT ON TABLE tickq.run_count IS
'Every run that ended, per kind, kept or pruned: how many by outcome (the enum''s order), the slots '
'merged into them, how many had a duration and their seconds, the cumulative counts per bound of '
'metrics_buckets(), the last finish of one that ended ok. Kept by the triggers run_counted and '
'run_counted_insert as runs end; what tickq.metrics_text prints.';

-- What was counted so far: the runs still in job_run and those housekeeping pruned (run_total),
-- against the bounds tickq.metrics_buckets() returns (the API files come after the migrations).
INSERT INTO tickq.run_count (kind, runs, merged_slots, timed_runs, seconds, buckets, last_ok)
SELECT
    c.kind,
    array(
        SELECT coalesce(sum(x.runs) FILTER (WHERE x.outcome = o.outcome), 0)::bigint
        FROM unnest(enum_range(NULL::tickq.outcome)) WITH ORDINALITY AS o (outcome, n)
        CROSS JOIN unnest(array_agg(c.outcome), array_agg(c.runs)) AS x (outcome, runs)
        GROUP BY o.n
        ORDER BY o.n
    ) AS runs,
    sum(c.merged) AS merged_slots,
    sum(c.timed) AS timed_runs,
    sum(c.seconds) AS seconds,
    ARRAY[
        sum(c.buckets[1]), sum(c.buckets[2]), sum(c.buckets[3]), sum(c.buckets[4]), sum(c.buckets[5]),
        sum(c.buckets[6]), sum(c.buckets[7]), sum(c.buckets[8]), sum(c.buckets[9])
    ]::bigint[] AS buckets,
    max(c.last_finished_at) FILTER (WHERE c.outcome = 'ok') AS last_ok
FROM (
    SELECT
        r.kind,
        r.outcome,
        count(*) AS runs,
        sum(greatest(r.slots - 1, 0)) AS merged,
        count(r.duration) AS timed,
        coalesce(sum(extract(EPOCH FROM r.duration)), 0) AS seconds,
        ARRAY[
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 1),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 5),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 15),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 60),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 300),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 900),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 3600),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 14400),
            count(*) FILTER (WHERE extract(EPOCH FROM r.duration) <= 86400)
        ] AS buckets,
        max(r.finished_at) AS last_finished_at
    FROM tickq.job_run AS r
    WHERE
        r.outcome <> 'running' AND EXISTS (
            SELECT FROM tickq.job_kind AS k
            WHERE k.name = r.kind
        )
    GROUP BY r.kind, r.outcome
    UNION ALL
    SELECT
        t.kind,
        t.outcome,
        t.runs,
        t.merged_slots,
        t.timed_runs,
        t.seconds::numeric AS seconds,
        (t.buckets || array_fill(0::bigint, ARRAY[9]))[1:9] AS buckets,
        t.last_finished_at
    FROM tickq.run_total AS t
) AS c
GROUP BY c.kind;

CREATE FUNCTION tickq.count_run() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_bounds double precision[] := tickq.metrics_buckets();
    v_old integer;
    v_new integer;
BEGIN
    -- Out with what an ended run counted before this write, in with what it counts now: one
    -- row per kind, the outcomes by their place in the enum.
    IF TG_OP = 'UPDATE' AND OLD.outcome <> 'running' THEN
        v_old := array_position(enum_range(NULL::tickq.outcome), OLD.outcome);
        UPDATE tickq.run_count AS c SET
            runs[v_old] = c.runs[v_old] - 1,
            merged_slots = c.merged_slots - greatest(OLD.slots - 1, 0),
            timed_runs = c.timed_runs - (OLD.duration IS NOT NULL)::integer,
            seconds = c.seconds - coalesce(extract(EPOCH FROM OLD.duration), 0),
            buckets = array(SELECT c.buckets[b.n] - coalesce((extract(EPOCH FROM OLD.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            -- the last success, found again only when the one taken out was it
            last_ok = CASE WHEN OLD.outcome <> 'ok' OR OLD.finished_at IS DISTINCT FROM c.last_ok THEN c.last_ok
                ELSE greatest((SELECT max(r.finished_at) FROM tickq.job_run AS r
                    WHERE r.kind = OLD.kind AND r.outcome = 'ok' AND r.id <> OLD.id),
                    (SELECT t.last_finished_at FROM tickq.run_total AS t WHERE t.kind = OLD.kind AND t.outcome = 'ok'))
            END
        WHERE c.kind = OLD.kind;
    END IF;
    IF NEW.outcome <> 'running' THEN
        v_new := array_position(enum_range(NULL::tickq.outcome), NEW.outcome);
        INSERT INTO tickq.run_count AS c (kind, runs, merged_slots, timed_runs, seconds, buckets, last_ok)
        VALUES (NEW.kind,
            array(SELECT (o.n = v_new)::integer FROM generate_subscripts(enum_range(NULL::tickq.outcome), 1) AS o (n)
                ORDER BY o.n),
            greatest(NEW.slots - 1, 0), (NEW.duration IS NOT NULL)::integer, coalesce(extract(EPOCH FROM NEW.duration), 0),
            array(SELECT coalesce((extract(EPOCH FROM NEW.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            CASE WHEN NEW.outcome = 'ok' THEN NEW.finished_at END)
        ON CONFLICT (kind) DO UPDATE SET
            runs[v_new] = c.runs[v_new] + 1,
            merged_slots = c.merged_slots + excluded.merged_slots,
            timed_runs = c.timed_runs + excluded.timed_runs,
            seconds = c.seconds + excluded.seconds,
            buckets = array(SELECT c.buckets[b.n] + excluded.buckets[b.n] FROM generate_subscripts(v_bounds, 1) AS b (n)
                ORDER BY b.n),
            last_ok = greatest(c.last_ok, excluded.last_ok);
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.count_run() IS
'Triggers run_counted and run_counted_insert: keep tickq.run_count as runs end (a run that ended '
'added, the old values of one that had ended taken out first when it changes).';

CREATE TRIGGER run_counted_insert AFTER INSERT ON tickq.job_run
FOR EACH ROW WHEN (new.outcome <> 'running') EXECUTE FUNCTION tickq.count_run();
-- A kind renamed takes its counts along by run_count's own foreign key, not through this trigger.
CREATE TRIGGER run_counted AFTER UPDATE OF outcome, duration, slots, finished_at ON tickq.job_run
FOR EACH ROW WHEN (
    (old.outcome <> 'running' OR new.outcome <> 'running')
    AND (
        old.outcome IS DISTINCT FROM new.outcome OR old.duration IS DISTINCT FROM new.duration
        OR old.slots IS DISTINCT FROM new.slots OR old.finished_at IS DISTINCT FROM new.finished_at
    )
)
EXECUTE FUNCTION tickq.count_run();

-- A kind forgotten (tickq.forget_kind) takes its pruned totals with it, as its counts.
ALTER TABLE tickq.run_total DROP CONSTRAINT run_total_kind_fkey,
ADD CONSTRAINT run_total_kind_fkey FOREIGN KEY (kind) REFERENCES tickq.job_kind (name)
ON UPDATE CASCADE ON DELETE CASCADE;
