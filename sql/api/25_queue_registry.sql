-- Whose queue this is: the registry that last synced it (tickq.queue_registry), the rule that a
-- sync from another registry may not retire its kinds unless it means to replace the queue, and
-- the retired kinds, listed and forgotten on purpose.
--
-- SQLSTATEs of this file (class TQ, range TQ090-TQ099) are listed at the top of
-- sql/api/01_schedule.sql.

CREATE OR REPLACE FUNCTION tickq.sync_queue_registry(
    p_registry jsonb,
    p_kinds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_source jsonb := p_registry -> 'source';
    v_path text;
    v_host text;
    v_stored tickq.queue_registry;
    v_gone text[];
    v_other boolean;
BEGIN
    -- A script's JSON may name no source: synced as before, the record left as it is.
    IF jsonb_typeof(v_source) IS DISTINCT FROM 'object' OR jsonb_typeof(v_source -> 'path') <> 'string' THEN
        RETURN;
    END IF;
    v_path := v_source ->> 'path';
    v_host := coalesce(v_source ->> 'host', '');
    -- The one row, whatever its key column is called (other migrations add columns of their own).
    INSERT INTO tickq.queue_registry DEFAULT VALUES ON CONFLICT DO NOTHING;
    SELECT q.* INTO STRICT v_stored FROM tickq.queue_registry AS q FOR UPDATE;
    -- The kinds this sync would retire (as tickq.sync_kinds does: agents' kinds are not the file's).
    SELECT array_agg(k.name ORDER BY k.name) INTO v_gone FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL AND NOT p_kinds ? k.name AND k.name NOT LIKE 'agent.%';
    -- Another registry: one of record with another path, or, in a queue synced before registries
    -- were recorded, one that shares no kind with the queue's live ones.
    v_other := CASE WHEN v_stored.path IS NOT NULL THEN v_stored.path <> v_path
        ELSE NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.retired_at IS NULL
            AND p_kinds ? k.name AND k.name NOT LIKE 'tickq.%' AND k.name NOT LIKE 'agent.%') END;
    IF v_gone IS NOT NULL AND v_other AND p_registry -> 'replace_queue' IS DISTINCT FROM 'true'::jsonb THEN
        RAISE EXCEPTION 'this queue was last synced by registry % on host %; this sync from % on host % '
            'would retire % kind(s) of it (%): pass --replace-queue to replace that queue, or give '
            'this project a queue of its own', coalesce(v_stored.path, '(not recorded)'),
            coalesce(nullif(v_stored.host, ''), '(not recorded)'), v_path, v_host,
            cardinality(v_gone), array_to_string(v_gone[1:5], ', ')
                || CASE WHEN cardinality(v_gone) > 5 THEN ', ...' ELSE '' END
            USING ERRCODE = 'TQ090', DETAIL = 'Nothing was changed.',
            HINT = 'Without DATABASE_URL each registry folder has a database of its own.';
    END IF;
    IF v_stored.path IS DISTINCT FROM v_path OR v_stored.host IS DISTINCT FROM v_host THEN
        UPDATE tickq.queue_registry AS q SET path = v_path, host = v_host, synced_at = p_now;
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.sync_queue_registry(jsonb, jsonb, timestamptz) IS
'Part of tickq.sync_registry: records p_registry''s "source" ({path, host}) as the registry of '
'this queue, and refuses (TQ090) a sync from another registry (another path; in a queue synced '
'before any path was recorded, one sharing no kind with it) that would retire kinds of p_kinds'' '
'queue, unless p_registry says "replace_queue": true. A JSON without a source changes nothing.';

CREATE OR REPLACE FUNCTION tickq.retired_kinds_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, retired_at timestamptz, runs bigint, last_run_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT k.name, k.retired_at, count(r.id), max(r.finished_at)
    FROM tickq.job_kind AS k
    LEFT JOIN tickq.job_run AS r ON k.name = r.kind
    WHERE k.retired_at IS NOT NULL AND k.retired_at <= p_now
    GROUP BY k.name, k.retired_at
    ORDER BY k.retired_at DESC, k.name
$$;
COMMENT ON FUNCTION tickq.retired_kinds_at(timestamptz) IS
'The retired kinds (gone from the registry; kept with their runs until forgotten), latest first: '
'when each was retired, how many runs it keeps, when the last one finished.';

CREATE OR REPLACE FUNCTION tickq.forget_kind(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_runs bigint;
BEGIN
    SELECT k.* INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no kind "%" in the queue', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status --retired lists the retired kinds.';
    END IF;
    IF v_kind.retired_at IS NULL THEN
        RAISE EXCEPTION 'kind "%" is not retired: remove it from the registry first (its next sync retires it)', p_kind
            USING ERRCODE = 'TQ091', DETAIL = 'Nothing was changed.';
    END IF;
    IF v_kind.run_id IS NOT NULL THEN
        RAISE EXCEPTION 'kind "%" has a run still leased: forget it once that run ends', p_kind
            USING ERRCODE = 'TQ091', DETAIL = 'Nothing was changed.';
    END IF;
    DELETE FROM tickq.alert AS a WHERE a.kind = p_kind;
    DELETE FROM tickq.drift AS d WHERE d.kind = p_kind;
    -- Steps and agent turns go with their runs (ON DELETE CASCADE).
    WITH gone AS (DELETE FROM tickq.job_run AS r WHERE r.kind = p_kind RETURNING 1)
    SELECT count(*) INTO v_runs FROM gone;
    DELETE FROM tickq.job_kind AS k WHERE k.name = p_kind;
    RETURN v_runs;
END
$$;
COMMENT ON FUNCTION tickq.forget_kind(text, timestamptz) IS
'Deletes a retired kind: its row, its runs (with their steps and turns), its alerts and drift; '
'returns how many runs went. Refuses a kind that is not retired or still has a leased run '
'(TQ091) and an unknown one (TQ003).';
