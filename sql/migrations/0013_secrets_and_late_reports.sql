-- 0013: env values leave the database; a run reported after its lease expired is marked late.
--
-- Registry env values are often secrets (API keys, passwords). From now on the mirror keeps
-- only a digest of each ("sha256:" and the hex sha256 of "kind:NAME=value", as
-- tickq.env_digests and tickq.registry.env_digest compute it), so drift still sees a change.
-- The values stored by earlier versions, in job_kind.registry and in the drift log, are
-- replaced by their digests here.
--
-- job_run.late_report_at: a result the dispatcher could not report in time (the database was
-- away longer than its reconnect budget) was kept in its host's spool and reported once the
-- database was back, after the lease had turned the run into `lost`; the run then carries its
-- real outcome, and this column says when that late report came.

CREATE FUNCTION pg_temp.digests(p_kind text, p_env jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    SELECT jsonb_object_agg(e.name, CASE
        WHEN e.value #>> '{}' ~ '^sha256:[0-9a-f]{64}$' THEN e.value
        ELSE to_jsonb('sha256:' || encode(sha256(convert_to(
            p_kind || ':' || e.name || '=' || (e.value #>> '{}'), 'UTF8')), 'hex'))
    END)
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_env) = 'object' THEN p_env END) AS e (name, value)
$$;

CREATE FUNCTION pg_temp.entry_digests(p_kind text, p_entry jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN jsonb_typeof(p_entry) = 'object' AND p_entry ? 'env'
        THEN jsonb_set(p_entry, '{env}', coalesce(pg_temp.digests(p_kind, p_entry -> 'env'), '{}'))
        ELSE p_entry END
$$;

UPDATE tickq.job_kind AS k SET registry = pg_temp.entry_digests(k.name, k.registry)
WHERE k.registry ? 'env';

UPDATE tickq.drift AS d SET
    stored_value = pg_temp.digests(d.kind, d.stored_value),
    registry_value = pg_temp.digests(d.kind, d.registry_value)
WHERE d.field = 'env';

UPDATE tickq.drift AS d SET
    stored_value = pg_temp.entry_digests(d.kind, d.stored_value),
    registry_value = pg_temp.entry_digests(d.kind, d.registry_value)
WHERE d.field IN ('kind', 'registry');

DROP FUNCTION pg_temp.entry_digests(text, jsonb);
DROP FUNCTION pg_temp.digests(text, jsonb);

ALTER TABLE tickq.job_run ADD COLUMN late_report_at timestamptz;
COMMENT ON COLUMN tickq.job_run.late_report_at IS
'When the run''s real result arrived after its lease had expired (tickq.report_late_run, from '
'a dispatcher''s spool); null for a result reported in time.';
