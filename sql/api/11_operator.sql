-- The operator's everyday: dead leases released at once, pauses, the health check, and the
-- due times a tick waits for.
--
-- SQLSTATEs of this file (class TQ, range TQ060-TQ069) are listed at the top of
-- sql/api/01_schedule.sql.

CREATE OR REPLACE FUNCTION tickq.release_dead_lease(
    p_run_id bigint,
    p_dispatcher text,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    -- Only a run still live and leased by exactly that dispatcher: a run already reported, or
    -- expired and claimed again by someone else, is left alone; so is one whose kind row another
    -- session holds (never waited on: its lease expires into lost as any other).
    PERFORM FROM tickq.job_kind AS k
    WHERE k.run_id = p_run_id AND k.leased_by = p_dispatcher
    FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM tickq.finish_run(p_run_id, 'lost', NULL,
        format('[tickq: dispatcher %s died before reporting; the next dispatcher on its host '
            'released the lease at %s]', p_dispatcher, p_now),
        NULL, p_now);
    RETURN true;
END
$$;
COMMENT ON FUNCTION tickq.release_dead_lease(bigint, text, timestamptz) IS
'Turns a live run leased by p_dispatcher into a lost run at once, as expire_leases does when '
'the lease runs out. For a dispatcher known to be dead (on its own host, its pid gone or '
'reused: the ledger of running commands tells); true if the run was released, false if it was '
'no longer live, no longer leased by p_dispatcher, or its kind row is held by another session.';

CREATE OR REPLACE FUNCTION tickq.next_due_at(
    p_before timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- Per lane, its first retry due before p_before; the earliest of them. Only retries: a
    -- cadence at or below the tick runs once per tick (what `tickq check` counts), while a
    -- retry's backoff is its own time, and a 30-second retry should not wait for a tick.
    SELECT min(d.due_at)
    FROM unnest(enum_range(NULL::tickq.priority)) AS p (lane)
    CROSS JOIN LATERAL (
        SELECT k.due_at FROM tickq.job_kind AS k
        WHERE tickq.kind_claimable(k) AND k.priority = p.lane AND k.due_at > p_now AND k.due_at < p_before
            AND k.run_id IS NULL AND k.next_trigger = 'retry'
            AND (k.paused_until IS NULL OR k.paused_until <= p_now)
        ORDER BY k.due_at LIMIT 1
    ) AS d
$$;
COMMENT ON FUNCTION tickq.next_due_at(timestamptz, timestamptz) IS
'The earliest time after p_now and before p_before at which a retry falls due that a claim '
'could take, or NULL: a tick stays for it rather than leave it to the next tick.';

CREATE OR REPLACE FUNCTION tickq.pause_kind(
    p_kind text,
    p_until timestamptz DEFAULT 'infinity',
    p_reason text DEFAULT NULL,
    p_by text DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_until timestamptz := coalesce(p_until, 'infinity');
BEGIN
    IF v_until <= p_now THEN
        RAISE EXCEPTION 'a pause must end after now (%), not at %', p_now, v_until
            USING ERRCODE = 'TQ060', DETAIL = 'Nothing was changed.',
            HINT = 'Give a time in the future, a duration (--for 2h), or none to pause until resumed.';
    END IF;
    IF char_length(p_reason) > 500 THEN
        RAISE EXCEPTION 'a pause reason is at most 500 characters, got %', char_length(p_reason)
            USING ERRCODE = 'TQ060', DETAIL = 'Nothing was changed.', HINT = 'Say it shorter.';
    END IF;
    UPDATE tickq.job_kind AS k SET
        paused_until = v_until,
        paused_reason = p_reason,
        paused_by = p_by,
        updated_at = p_now
    WHERE k.name = p_kind AND k.retired_at IS NULL;
    IF NOT FOUND THEN
        PERFORM tickq.unknown_kind_error(p_kind, true);
    END IF;
    RETURN v_until;
END
$$;
COMMENT ON FUNCTION tickq.pause_kind(text, timestamptz, text, text, timestamptz) IS
'An operator''s pause: claims skip the kind until p_until (infinity, the default: until '
'resume_kind), a run already going finishes, a manual run is still allowed. Kept beside the '
'registry''s enabled, which sync_registry never changes it for. Raises TQ003 unknown kind, TQ060 '
'a pause that would end by now or a reason over 500 characters.';

CREATE OR REPLACE FUNCTION tickq.resume_kind(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_was timestamptz;
BEGIN
    SELECT CASE WHEN k.paused_until > p_now THEN k.paused_until END INTO v_was
    FROM tickq.job_kind AS k
    WHERE k.name = p_kind AND k.retired_at IS NULL
    FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM tickq.unknown_kind_error(p_kind, true);
    END IF;
    IF v_was IS NOT NULL THEN
        -- Ended now rather than cleared: a kind due during the pause counts as waiting since
        -- now (stale_due_at), not since its due time.
        UPDATE tickq.job_kind AS k SET paused_until = p_now, updated_at = p_now WHERE k.name = p_kind;
    END IF;
    RETURN v_was;
END
$$;
COMMENT ON FUNCTION tickq.resume_kind(text, timestamptz) IS
'Ends a pause now; returns when it would have ended (NULL: the kind was not paused). Slots '
'missed during the pause merge into one run, as after a sleep. Raises TQ003 unknown kind.';

CREATE OR REPLACE FUNCTION tickq.record_tick(
    p_dispatcher text,
    p_host text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE sql
AS $$
    INSERT INTO tickq.dispatcher_tick AS t (host, dispatcher, last_tick_at)
    VALUES (p_host, p_dispatcher, p_now)
    ON CONFLICT (host) DO UPDATE
    SET dispatcher = excluded.dispatcher, last_tick_at = greatest(t.last_tick_at, excluded.last_tick_at)
$$;
COMMENT ON FUNCTION tickq.record_tick(text, text, timestamptz) IS
'Notes that a tick of p_dispatcher ended on p_host at p_now (one row per host): the health '
'check''s evidence that the OS timer still fires.';

CREATE OR REPLACE FUNCTION tickq.health_problems(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, problem text, detail text)
LANGUAGE sql STABLE
AS $$
    SELECT p.kind, p.problem, p.detail
    FROM (
        SELECT 1 AS rank, st.kind, 'stale' AS problem,
            format('due since %s, unclaimed for %s (stale_after %s)', st.due_at,
                tickq.format_duration(date_trunc('second', st.waiting)),
                tickq.format_duration(s.stale_after)) AS detail,
            st.due_at AS at
        FROM tickq.stale_due_at(p_now) AS st
        CROSS JOIN tickq.settings AS s
        UNION ALL
        SELECT 2, k.name, 'failing',
            format('failed %s time(s) in a row (alert_after %s), last outcome %s', k.failure_streak,
                s.alert_after, coalesce(r.outcome::text, 'unknown')),
            k.updated_at
        FROM tickq.job_kind AS k
        CROSS JOIN tickq.settings AS s
        LEFT JOIN tickq.job_run AS r ON k.last_run_id = r.id
        -- A paused kind is not run, and its operator already knows.
        WHERE k.retired_at IS NULL AND k.enabled AND k.failure_streak >= s.alert_after
            AND NOT coalesce(k.paused_until > p_now, false)
        UNION ALL
        SELECT 3, k.name, 'stuck',
            format('run %s leased by %s until %s, %s ago, without a report', k.run_id,
                k.leased_by, k.leased_until, tickq.format_duration(date_trunc('second', p_now - k.leased_until))),
            k.leased_until
        FROM tickq.job_kind AS k
        WHERE k.run_id IS NOT NULL AND k.leased_until < p_now
        UNION ALL
        SELECT 4, NULL, 'no_tick',
            CASE
                WHEN t.last_tick_at IS NULL THEN 'no tick has ended yet: is the timer installed '
                    '(tickq systemd|launchd install, tickq cron print)?'
                ELSE format('the last tick ended %s ago (on %s), more than two ticks (%s)',
                    tickq.format_duration(date_trunc('second', p_now - t.last_tick_at)),
                    t.host, tickq.format_duration(s.tick))
            END,
            t.last_tick_at
        FROM tickq.settings AS s
        LEFT JOIN LATERAL (
            SELECT dt.host, dt.last_tick_at FROM tickq.dispatcher_tick AS dt
            ORDER BY dt.last_tick_at DESC LIMIT 1
        ) AS t ON true
        WHERE t.last_tick_at IS NULL OR t.last_tick_at < p_now - 2 * s.tick
    ) AS p
    ORDER BY p.rank, p.at, p.kind
$$;
COMMENT ON FUNCTION tickq.health_problems(timestamptz) IS
'What a monitor should hear about as of p_now, one row per problem (`tickq status --check`): '
'stale kinds, unpaused kinds failing at or past settings.alert_after, runs stuck past their '
'lease, and no tick ended for two tick lengths (kind NULL).';

CREATE OR REPLACE FUNCTION tickq.registry_mirror(
    p_kind text
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- STABLE: called in the statement that syncs, it sees the mirror as it was before the sync,
    -- which tells an edit of the registry file from a row changed behind its back.
    SELECT k.registry FROM tickq.job_kind AS k WHERE k.name = p_kind
$$;
COMMENT ON FUNCTION tickq.registry_mirror(text) IS
'A kind''s registry mirror (job_kind.registry) as the calling statement''s snapshot sees it.';
