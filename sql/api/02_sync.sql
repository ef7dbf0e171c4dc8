-- Registry sync: the registry file wins on every field; each difference is recorded as drift and
-- returned classified (an edit of the file, or a row changed behind its back). The steps are
-- functions of their own: settings (20_registry_values.sql), kinds (22_kinds.sql), agents
-- (23_agent_settings.sql), then the lease, the dispatcher's record and the slot rows here, and
-- the pools (26_pools.sql).

CREATE OR REPLACE FUNCTION tickq.settings_drift(
    p_old tickq.settings,
    p_new tickq.settings
) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    -- Before the first sync (no kind at all, not even the built-in one) the stored settings are
    -- the defaults, which no registry wrote: the registry's settings replace them without drift.
    IF NOT EXISTS (SELECT FROM tickq.job_kind) THEN
        RETURN '[]'::jsonb;
    END IF;
    RETURN coalesce((
        SELECT jsonb_agg(jsonb_build_object('field', 'settings.' || o.key, 'stored_value', o.value,
            'registry_value', n.value, 'registry_edit', true))
        FROM jsonb_each(tickq.registry_settings(p_old)) AS o (key, value)
        INNER JOIN jsonb_each(tickq.registry_settings(p_new)) AS n (key, value) ON o.key = n.key
        WHERE o.value IS DISTINCT FROM n.value), '[]');
END
$$;
COMMENT ON FUNCTION tickq.settings_drift(tickq.settings, tickq.settings) IS
'The drift between the stored settings and the registry''s (none before the first sync), each '
'item {field "settings.<key>", stored_value, registry_value, registry_edit}.';

CREATE OR REPLACE FUNCTION tickq.save_settings(
    p_old tickq.settings,
    p_new tickq.settings,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_new tickq.settings := p_new;
BEGIN
    -- The lease: the longest timeout plus the margin (checked again at commit by a trigger), and
    -- no floor of its own: the margin is the registry's allowance for a late report, and the
    -- lease is how long a dead dispatcher's kinds wait before another dispatcher may run them.
    v_new.lease := coalesce((SELECT max(k.timeout) FROM tickq.job_kind AS k WHERE k.retired_at IS NULL),
        '0'::interval) + v_new.lease_margin;
    IF to_jsonb(v_new) - 'updated_at' IS NOT DISTINCT FROM to_jsonb(p_old) - 'updated_at' THEN
        RETURN;
    END IF;
    UPDATE tickq.settings AS s SET
        slots = v_new.slots, tick = v_new.tick, stale_after = v_new.stale_after,
        lease_margin = v_new.lease_margin, lease = v_new.lease, timezone = v_new.timezone,
        retry_base = v_new.retry_base, retry_max = v_new.retry_max,
        capacity_margin = v_new.capacity_margin, alert_after = v_new.alert_after,
        housekeeping_every = v_new.housekeeping_every, retention = v_new.retention,
        keep_runs = v_new.keep_runs,
        updated_at = p_now;
END
$$;
COMMENT ON FUNCTION tickq.save_settings(tickq.settings, tickq.settings, timestamptz) IS
'Writes the registry''s settings (when they changed) with the lease they and the kinds need: the '
'longest timeout of a live kind plus lease_margin.';

CREATE OR REPLACE FUNCTION tickq.sync_dispatcher(
    p_registry jsonb,
    p_settings tickq.settings,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_dispatcher text := p_registry ->> 'dispatcher';
    v_fingerprint text;
    v_own_lease interval;
    v_other tickq.dispatcher;
    v_drift jsonb := '[]'::jsonb;
BEGIN
    -- The dispatcher that sent this registry (the "dispatcher" key; a script's JSON may leave it
    -- out): its claims are leased at least its own longest timeout plus its own margin, and
    -- another host's different registry synced within the last three ticks is reported as one
    -- drift row (field "registry") naming both, where the settings and kinds flap between them.
    IF v_dispatcher IS NULL THEN
        RETURN v_drift;
    END IF;
    SELECT coalesce(max(k.timeout), '0'::interval) INTO v_own_lease FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL AND k.name NOT LIKE 'agent.%';
    v_fingerprint := encode(sha256(convert_to((p_registry - 'dispatcher')::text, 'UTF8')), 'hex');
    SELECT d.* INTO v_other FROM tickq.dispatcher AS d
    WHERE d.synced_at > p_now - 3 * p_settings.tick AND d.fingerprint <> v_fingerprint
        AND regexp_replace(d.name, ':[0-9]+$', '') <> regexp_replace(v_dispatcher, ':[0-9]+$', '')
    ORDER BY d.synced_at DESC
    LIMIT 1;
    IF FOUND THEN
        v_drift := jsonb_build_array(jsonb_build_object('field', 'registry',
            'stored_value', jsonb_build_object('dispatcher', v_other.name,
                'fingerprint', v_other.fingerprint, 'synced_at', v_other.synced_at),
            'registry_value', jsonb_build_object('dispatcher', v_dispatcher, 'fingerprint', v_fingerprint),
            'registry_edit', true));
    END IF;
    -- Whether its registry can run agents: claim_jobs leases agent runs only to one that can.
    INSERT INTO tickq.dispatcher AS d (name, fingerprint, lease, synced_at, agents)
    VALUES (v_dispatcher, v_fingerprint, v_own_lease + p_settings.lease_margin, p_now,
        coalesce(jsonb_typeof(p_registry -> 'agents'), 'null') <> 'null')
    ON CONFLICT (name) DO UPDATE SET
        fingerprint = excluded.fingerprint, lease = excluded.lease, synced_at = excluded.synced_at,
        agents = excluded.agents;
    -- Older than any run of any registry could last (a 7-day timeout plus a 1-day margin).
    DELETE FROM tickq.dispatcher AS d WHERE d.synced_at < p_now - interval '8 days';
    DELETE FROM tickq.dispatcher_poll AS dp WHERE dp.polled_at < p_now - interval '8 days';
    RETURN v_drift;
END
$$;
COMMENT ON FUNCTION tickq.sync_dispatcher(jsonb, tickq.settings, timestamptz) IS
'Records the dispatcher named in p_registry (its registry''s fingerprint, the lease its kinds '
'need and whether it has an [agents] section, without which it is leased no agent run) and '
'returns a drift item (field "registry") when another host synced a different registry within '
'three ticks.';

CREATE OR REPLACE FUNCTION tickq.sync_slots(
    p_slots integer
) RETURNS void
LANGUAGE sql
AS $$
    -- One row per slot: add missing ones; drop free ones past the limit (a busy one past the
    -- limit is left to finish, claims use only slots up to the limit, and a later sync drops it).
    INSERT INTO tickq.slot (n)
    SELECT g.n FROM generate_series(1, p_slots) AS g (n)
    ON CONFLICT (n) DO NOTHING;
    -- A row another session holds is left for a later sync, never waited on.
    DELETE FROM tickq.slot AS sl WHERE sl.n IN (
        SELECT f.n FROM tickq.slot AS f WHERE f.n > p_slots AND f.run_id IS NULL FOR UPDATE SKIP LOCKED);
$$;
COMMENT ON FUNCTION tickq.sync_slots(integer) IS
'Makes the slot rows 1..p_slots exist; free slots past p_slots are dropped.';

CREATE OR REPLACE FUNCTION tickq.registry_digest(
    p_registry jsonb
) RETURNS text
LANGUAGE sql STABLE
AS $$
    -- The API checksum is in it: a new tickq's sync does its whole work once. Who sends the
    -- registry (dispatcher, source, replace_queue) is not: registry_problems is sent none of them.
    SELECT encode(sha256(convert_to((p_registry - 'dispatcher' - 'source' - 'replace_queue')::text || E'\n'
        || coalesce((SELECT c.checksum FROM tickq.api_checksum AS c), ''), 'UTF8')), 'hex');
$$;
COMMENT ON FUNCTION tickq.registry_digest(jsonb) IS
'What tickq.queue_registry.digest holds after a sync of p_registry: sha256 of the registry JSON '
'without the keys naming its sender ("dispatcher", "source", "replace_queue") and of the API '
'checksum. Where the registry was synced from is kept beside it (path, host).';

CREATE OR REPLACE FUNCTION tickq.keep_registry_digest(
    p_digest text,
    p_drift jsonb,
    p_slots integer
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- Only a sync that left the queue matching its registry may let the next one be skipped: a
    -- kind whose row another session held, or a busy slot past the limit, waits for a later sync.
    IF jsonb_path_exists(p_drift, '$[*] ? (@.field == "locked")')
        OR EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > p_slots)
        OR EXISTS (SELECT FROM tickq.pool_slot AS ps INNER JOIN tickq.pool AS p ON ps.pool = p.name WHERE ps.n > p.slots)
        OR EXISTS (SELECT FROM tickq.pool AS p WHERE p.slots = 0) THEN
        p_digest := NULL;
    END IF;
    INSERT INTO tickq.queue_registry AS q ("only", digest) VALUES (true, p_digest)
    ON CONFLICT ("only") DO UPDATE SET digest = excluded.digest;
END
$$;
COMMENT ON FUNCTION tickq.keep_registry_digest(text, jsonb, integer) IS
'Records the digest of the registry a sync just applied (NULL when it left work for a later '
'sync: a locked kind, a busy slot past p_slots or past a pool''s limit), after every write of that sync.';

CREATE OR REPLACE FUNCTION tickq.sync_registry(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text, field text, stored_value jsonb, registry_value jsonb, registry_edit boolean,
    changed text[], unit text
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings jsonb := coalesce(p_registry -> 'settings', '{}'::jsonb);
    v_kinds jsonb := coalesce(p_registry -> 'kinds', '{}'::jsonb);
    v_old tickq.settings;
    v_new tickq.settings;
    v_reserved text;
    -- Differences found, as a JSON array of {kind, field, stored_value, registry_value, registry_edit}.
    v_drift jsonb;
    v_digest text;
    v_problem record;
BEGIN
    IF tickq.registry_top_problem(p_registry) IS NOT NULL THEN
        PERFORM tickq.registry_error(NULL, '*', tickq.registry_top_problem(p_registry));
    END IF;
    -- The registry the queue last synced, from the file it was synced from, and nothing written
    -- behind its back since (tickq.forget_registry_digest's triggers forget it): nothing to do,
    -- nothing written. A source that is not the one recorded is recorded (sync_queue_registry).
    v_digest := tickq.registry_digest(p_registry);
    IF EXISTS (SELECT FROM tickq.queue_registry AS q WHERE q.digest = v_digest
            AND (p_registry #>> '{source,path}' IS NULL OR (q.path = p_registry #>> '{source,path}'
                AND q.resolved IS NOT DISTINCT FROM coalesce(p_registry #>> '{source,resolved}',
                    p_registry #>> '{source,path}')
                AND q.project IS NOT DISTINCT FROM p_registry #>> '{settings,project}'
                AND q.host IS NOT DISTINCT FROM coalesce(p_registry #>> '{source,host}', ''))))
    THEN
        RETURN;
    END IF;
    -- Each cron string parsed once for the transaction, not for each rule that reads it.
    PERFORM set_config('tickq.cron_kept', 'on', true);

    -- Settings. The row is locked for the whole sync, so two syncs never interleave.
    SELECT * INTO STRICT v_old FROM tickq.settings FOR UPDATE;
    v_new := tickq.parse_settings(v_settings, v_old);
    v_drift := tickq.settings_drift(v_old, v_new);
    -- The rules between keys (a weight at most slots, pools that exist: sql/api/26_pools.sql).
    SELECT w.kind, w.key, w.problem INTO v_problem FROM tickq.weight_problems(p_registry, v_new.slots) AS w LIMIT 1;
    IF FOUND THEN
        PERFORM tickq.registry_error(v_problem.kind, v_problem.key, v_problem.problem);
    END IF;

    -- The built-in housekeeping kind goes through the same claim path as any other kind, so it
    -- counts in capacity. Its name is reserved. Its timeout counts in the lease like any kind's:
    -- the registry may shorten it (settings.housekeeping_timeout, judged with the settings), and
    -- with it the time a dead dispatcher's runs stay leased.
    SELECT n.name INTO v_reserved FROM jsonb_object_keys(v_kinds) AS n (name) WHERE n.name LIKE 'tickq.%' LIMIT 1;
    IF v_reserved IS NOT NULL THEN
        PERFORM tickq.registry_error(v_reserved, 'name', 'names starting with "tickq." are reserved for built-in kinds');
    END IF;
    v_kinds := v_kinds || jsonb_build_object('tickq.housekeeping', jsonb_build_object(
        'command', jsonb_build_array('tickq', 'housekeeping'),
        'every', extract(EPOCH FROM v_new.housekeeping_every),
        'timeout', coalesce(v_settings -> 'housekeeping_timeout', '60'::jsonb),
        'priority', 'normal'));
    -- Whose queue: another registry's sync may not retire its kinds (unless it says so).
    PERFORM tickq.sync_queue_registry(p_registry, v_kinds, p_now);
    v_drift := v_drift || tickq.sync_kinds(v_kinds, v_new.timezone, p_now);

    -- The [agents] section: the agents' lane and caps, before the lease, which covers them too.
    -- A registry without one leaves them as they are (tickq.sync_agents).
    PERFORM tickq.sync_agents(p_registry -> 'agents', p_now);
    PERFORM tickq.save_settings(v_old, v_new, p_now);
    -- The fingerprint is the registry's content: where the file sits is not part of it.
    v_drift := v_drift || tickq.sync_dispatcher(p_registry - 'source' - 'replace_queue', v_new, p_now);
    PERFORM tickq.sync_slots(v_new.slots);
    v_drift := v_drift || tickq.sync_pools(p_registry -> 'pools', p_now);
    PERFORM tickq.keep_registry_digest(v_digest, v_drift, v_new.slots);

    RETURN QUERY
    WITH found AS (
        SELECT d.* FROM jsonb_to_recordset(v_drift) AS d (
            kind text, field text, stored_value jsonb, registry_value jsonb, registry_edit boolean)
    ), recorded AS (
        -- Runs once and to completion whether or not the query below reads it.
        INSERT INTO tickq.drift AS t (kind, field, stored_value, registry_value, detected_at)
        SELECT f.kind, f.field, f.stored_value, f.registry_value, p_now FROM found AS f
        -- A kind left for the next sync (its row held by another session) differs in nothing yet.
        WHERE f.field <> 'locked'
    )
    SELECT f.kind, f.field, f.stored_value, f.registry_value, f.registry_edit,
        -- env values are digests, which say nothing to a reader: the names that changed do.
        CASE WHEN f.field = 'env' THEN ARRAY(
            SELECT e.name FROM (SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(f.stored_value) = 'object'
                    THEN f.stored_value ELSE '{}' END)
                UNION SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(f.registry_value) = 'object'
                    THEN f.registry_value ELSE '{}' END)) AS e (name)
            WHERE (f.stored_value -> e.name) IS DISTINCT FROM (f.registry_value -> e.name)
            ORDER BY 1) END,
        -- Durations are seconds: the unit lets the runner write them as the registry does.
        CASE WHEN f.field = 'offset' THEN 's' ELSE (SELECT nullif(l.unit, '') FROM tickq.registry_limits() AS l
            WHERE l.key = regexp_replace(f.field, '^settings\.', '')) END
    FROM found AS f;
END
$$;
COMMENT ON FUNCTION tickq.sync_registry(jsonb, timestamptz) IS
'Makes the queue match the registry (JSON, durations in seconds): the settings, the kinds '
'(retiring those that left it), the agents'' caps, the lease (longest timeout + lease_margin), '
'the dispatcher''s record, the slots and the pools; writes nothing when tickq.queue_registry holds this '
'registry''s digest (synced last, nothing written behind its back since). The registry wins on '
'every field; each difference is '
'recorded in tickq.drift and returned classified: registry_edit (an edit of the registry file, '
'not a row changed behind its back), changed (the env names whose values differ), unit (''s'' '
'for a duration in seconds). A kind whose row another session holds locked is not waited on: '
'it is returned as field "locked" (not recorded) and synced by a later call.';
