-- Whose queue this is: the registry that last synced it (tickq.queue_registry), the rule that a
-- sync from another registry may not retire its kinds unless it means to replace the queue, and
-- the retired kinds, listed and forgotten on purpose.
--
-- SQLSTATEs of this file (class TQ, range TQ090-TQ099) are listed at the top of
-- sql/api/01_schedule.sql.

-- A project is what the user means by "this project", whatever path or host a checkout has: a
-- registry is the queue's project when it names the project the queue recorded
-- (settings.project), or is the file of record by either of its paths (as given: a deploy's
-- `current` link is one path for every release behind it; or with links followed: the same
-- folder reached through a link, and queues recorded before the path as given was).
CREATE OR REPLACE FUNCTION tickq.same_project(
    p_stored tickq.queue_registry,
    p_source jsonb
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(p_stored.project = p_source ->> 'project', false)
        OR coalesce(p_stored.path IN (p_source ->> 'path', p_source ->> 'resolved'), false)
        OR coalesce(p_stored.resolved IN (p_source ->> 'path', p_source ->> 'resolved'), false)
$$;
COMMENT ON FUNCTION tickq.same_project(tickq.queue_registry, jsonb) IS
'Whether the registry p_source names ({path, resolved, project}: the file as given, with links '
'followed, its settings.project) is the project p_stored recorded: the same project name, or '
'the same file by either path.';

CREATE OR REPLACE FUNCTION tickq.project_problem(
    p_value jsonb
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    -- A name of a-z, 0-9, _ . - (as kind names): it is written in logs and in the embedded
    -- server's database names, and two checkouts must spell it alike.
    SELECT format('a project name is %s-%s characters of a-z, 0-9, _ . - starting with a letter '
            'or digit, got %s', l.low, l.high, left(p_value::text, 80))
    FROM tickq.registry_limit('project') AS l
    WHERE jsonb_typeof(p_value) IS DISTINCT FROM 'string'
        OR NOT (p_value #>> '{}') ~ '^[a-z0-9][a-z0-9_.-]*$'
        OR NOT char_length(p_value #>> '{}') BETWEEN l.low AND l.high
$$;
COMMENT ON FUNCTION tickq.project_problem(jsonb) IS
'What is wrong with a registry''s settings.project (for tickq.parse_settings), or NULL: a name of '
'a-z, 0-9, _ . - starting with a letter or digit, its length within registry_limits'' project '
'row.';

CREATE OR REPLACE FUNCTION tickq.queue_registry_at(
    p_source jsonb
) RETURNS TABLE (
    path text, host text, project text, synced_at timestamptz, synced boolean, this_project boolean
)
LANGUAGE sql STABLE
AS $$
    -- Whose queue this is, for `tickq status`: the registry of record, and whether p_source
    -- is that project (never synced: no registry of record, and nothing to mistake).
    SELECT q.path, nullif(q.host, ''), q.project, q.synced_at, q.path IS NOT NULL,
        q.path IS NULL OR tickq.same_project(q, p_source)
    FROM (SELECT 1) AS one
    LEFT JOIN tickq.queue_registry AS q ON true
$$;
COMMENT ON FUNCTION tickq.queue_registry_at(jsonb) IS
'The registry this queue was last synced by (path as given, host, project, when; synced false '
'when no sync named one) and whether the registry p_source names ({path, resolved, project}) is '
'that project (tickq.same_project).';

CREATE OR REPLACE FUNCTION tickq.queue_registry_problem(
    p_registry jsonb,
    p_kinds jsonb
) RETURNS text
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_source jsonb := tickq.registry_source(p_registry);
    v_project text := p_registry #>> '{settings,project}';
    v_stored tickq.queue_registry;
    v_gone text[];
    v_same boolean;
BEGIN
    IF v_source IS NULL OR p_registry -> 'replace_queue' = 'true'::jsonb THEN
        RETURN NULL;
    END IF;
    SELECT q.* INTO v_stored FROM tickq.queue_registry AS q;
    -- The kinds this sync would retire (as tickq.sync_kinds does: agents' kinds are not the file's).
    SELECT array_agg(k.name ORDER BY k.name) INTO v_gone FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL AND NOT p_kinds ? k.name AND k.name NOT LIKE 'agent.%';
    -- Another registry: another project than the one of record, or, in a queue synced before
    -- registries were recorded, one that shares no kind with the queue's live ones.
    v_same := CASE WHEN v_stored.path IS NOT NULL THEN tickq.same_project(v_stored, v_source)
        ELSE EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.retired_at IS NULL
            AND p_kinds ? k.name AND k.name NOT LIKE 'tickq.%' AND k.name NOT LIKE 'agent.%') END;
    IF v_gone IS NULL OR v_same THEN
        RETURN NULL;
    END IF;
    RETURN format('this queue was last synced by registry %s on host %s; this sync from %s on host %s '
        'would retire %s kind(s) of it (%s): if both are one project (another checkout path or host), '
        'give it one name in both registries (project = "NAME" in [settings]); to replace that queue '
        'pass --replace-queue; else give this project a queue of its own',
        coalesce(v_stored.path, '(not recorded)') || coalesce(' (project ' || v_stored.project || ')', ''),
        coalesce(nullif(v_stored.host, ''), '(not recorded)'),
        (v_source ->> 'path') || coalesce(' (project ' || v_project || ')', ''), v_source ->> 'host',
        cardinality(v_gone), array_to_string(v_gone[1:5], ', ')
            || CASE WHEN cardinality(v_gone) > 5 THEN ', ...' ELSE '' END);
END
$$;
COMMENT ON FUNCTION tickq.queue_registry_problem(jsonb, jsonb) IS
'Why a sync of p_registry may not retire kinds of this queue (it comes from another project than '
'the registry of record: tickq.same_project; in a queue synced before any path was recorded, one '
'sharing no kind with it), naming both and the ways on; NULL when it may (its own project, nothing '
'to retire, no source, or "replace_queue": true). p_kinds: the kinds it keeps.';

CREATE OR REPLACE FUNCTION tickq.registry_source(
    p_registry jsonb
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_registry -> 'source' || jsonb_build_object('project', p_registry #>> '{settings,project}',
        'resolved', coalesce(p_registry #>> '{source,resolved}', p_registry #>> '{source,path}'),
        'host', coalesce(p_registry #>> '{source,host}', ''))
    WHERE jsonb_typeof(p_registry -> 'source') = 'object' AND jsonb_typeof(p_registry #> '{source,path}') = 'string'
$$;
COMMENT ON FUNCTION tickq.registry_source(jsonb) IS
'Where p_registry comes from, as tickq.same_project reads it: its "source" ({path, resolved, host}) '
'with its settings.project; NULL for a JSON that names no source (a script''s).';

CREATE OR REPLACE FUNCTION tickq.sync_queue_registry(
    p_registry jsonb,
    p_kinds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_source jsonb := tickq.registry_source(p_registry);
    v_stored tickq.queue_registry;
    v_problem text;
BEGIN
    -- A script's JSON may name no source: synced as before, the record left as it is.
    IF v_source IS NULL THEN
        RETURN;
    END IF;
    -- The one row, whatever its key column is called (other migrations add columns of their own),
    -- locked for the rest of the sync.
    INSERT INTO tickq.queue_registry DEFAULT VALUES ON CONFLICT DO NOTHING;
    SELECT q.* INTO STRICT v_stored FROM tickq.queue_registry AS q FOR UPDATE;
    v_problem := tickq.queue_registry_problem(p_registry, p_kinds);
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION '%', v_problem USING ERRCODE = 'TQ090', DETAIL = 'Nothing was changed.',
            HINT = 'Without DATABASE_URL each project has a database of its own.';
    END IF;
    IF (v_stored.path, v_stored.resolved, v_stored.project, v_stored.host) IS DISTINCT FROM
        (v_source ->> 'path', v_source ->> 'resolved', v_source ->> 'project', v_source ->> 'host') THEN
        UPDATE tickq.queue_registry AS q SET path = v_source ->> 'path', resolved = v_source ->> 'resolved',
            project = v_source ->> 'project', host = v_source ->> 'host', synced_at = p_now;
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.sync_queue_registry(jsonb, jsonb, timestamptz) IS
'Part of tickq.sync_registry: records p_registry''s "source" ({path, resolved, host}: the file as '
'given and with links followed) and its settings.project as the registry of this queue, and '
'refuses (TQ090) a sync tickq.queue_registry_problem refuses (another project''s that would retire '
'kinds of p_kinds'' queue, unless "replace_queue": true). A JSON without a source changes nothing.';

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
    p_kind text
) RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_runs bigint;
BEGIN
    SELECT k.* INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM tickq.unknown_kind_error(p_kind, false, 'tickq status --retired lists the retired kinds.');
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
COMMENT ON FUNCTION tickq.forget_kind(text) IS
'Deletes a retired kind: its row, its runs (with their steps and turns), its alerts and drift; '
'returns how many runs went. Refuses a kind that is not retired or still has a leased run '
'(TQ091) and an unknown one (TQ003).';
