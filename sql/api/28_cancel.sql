-- Cancel: `tickq cancel RUN_ID|KIND` records a request on the run (request_cancel); the
-- dispatcher holding it asks every few seconds while its runs go on (cancels_requested), stops
-- the run's process tree and reports it `cancelled` (report_run; finish_run counts it as no
-- failure). A dispatcher that stopped asking is not seen: its run is lost when its lease ends.
--
-- SQLSTATEs of this file (class TQ, range TQ100-TQ109) are listed at the top of
-- sql/api/01_schedule.sql.

CREATE OR REPLACE FUNCTION tickq.asked_by(
    p_claimed text
) RETURNS text
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_identity text;
    v_claim text := left(regexp_replace(p_claimed, '[[:cntrl:]]', '?', 'g'), 200);
    -- PostgreSQL 16 and later say how the server authenticated the session (system_user:
    -- "peer:ann", "cert:CN=ann"). Asked only there, and held in a variable so that neither 15
    -- nor plpgsql_check on 15 parses a name it does not know.
    v_ask_identity text := 'SELECT system_user';
BEGIN
    IF current_setting('server_version_num')::integer >= 160000 THEN
        EXECUTE v_ask_identity INTO v_identity;
    END IF;
    IF substr(v_identity, strpos(v_identity, ':') + 1) = session_user::text THEN
        v_identity := NULL;  -- it names the role itself: nothing more to say
    END IF;
    RETURN session_user::text
        || coalesce(format(' (authenticated as %s)', v_identity), '')
        || coalesce(', claiming to be ' || nullif(v_claim, ''), '');
END
$$;
COMMENT ON FUNCTION tickq.asked_by(text) IS
'Internal: who is asking, as the database knows it: the session''s role (session_user, which '
'neither SET ROLE nor a SECURITY DEFINER function changes), how the server authenticated it '
'when that names someone else (PostgreSQL 16 and later), then p_claimed (what the client says: '
'its OS user and host) labelled as a claim, control characters replaced and cut to 200 '
'characters. Reads no session state, so it holds through a transaction pooler.';

CREATE OR REPLACE FUNCTION tickq.request_cancel(
    p_target text,
    p_reason text,
    p_claimed_by text,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, leased_by text, leased_until timestamptz,
    polled_at timestamptz, dispatcher_seen boolean
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_run tickq.job_run;
    v_kind tickq.job_kind;
    v_run_id bigint;
BEGIN
    IF length(p_reason) > 500 THEN
        RAISE EXCEPTION 'a cancel''s reason is at most 500 characters, not %', length(p_reason)
            USING ERRCODE = 'TQ102', HINT = 'Nothing was changed.';
    END IF;
    IF p_target ~ '^[0-9]{1,18}$' THEN
        v_run_id := p_target::bigint;
        SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = v_run_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no run % in the queue', v_run_id
                USING ERRCODE = 'TQ100', HINT = 'tickq history KIND lists a kind''s runs.';
        END IF;
    ELSE
        SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_target;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no kind "%" in the queue', p_target
                USING ERRCODE = 'TQ100', HINT = 'tickq status lists the kinds.';
        END IF;
        IF v_kind.run_id IS NULL THEN
            RAISE EXCEPTION 'kind "%" has no run in progress', p_target
                USING ERRCODE = 'TQ101', HINT = 'Nothing was changed.';
        END IF;
        v_run_id := v_kind.run_id;
    END IF;
    -- The live run is the one its kind's lease points at; its kind row locked as a report
    -- would (kind before run).
    SELECT k.* INTO v_kind FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.id = v_run_id AND k.run_id = v_run_id
    FOR UPDATE OF k;
    IF NOT FOUND THEN
        SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = v_run_id;
        RAISE EXCEPTION 'run % of kind "%" is not running: it ended as % at %',
            v_run_id, v_run.kind, v_run.outcome, v_run.finished_at
            USING ERRCODE = 'TQ101', HINT = 'Nothing was changed.';
    END IF;
    UPDATE tickq.job_run AS r SET
        cancel_requested_at = p_now, cancel_by = tickq.asked_by(p_claimed_by),
        cancel_role = session_user,
        cancel_reason = p_reason
    WHERE r.id = v_run_id
    RETURNING r.* INTO v_run;
    run_id := v_run_id;
    kind := v_kind.name;
    leased_by := v_kind.leased_by;
    leased_until := v_kind.leased_until;
    SELECT dp.polled_at INTO polled_at FROM tickq.dispatcher_poll AS dp WHERE dp.name = v_kind.leased_by;
    -- A dispatcher asks every few seconds while it runs commands; one that has not asked for
    -- 30 seconds (nor claimed this run since) is not seen: dead, cut off, or too old to ask.
    dispatcher_seen := greatest(polled_at, v_run.claimed_at) >= p_now - interval '30 seconds';
    RETURN NEXT;
END
$$;
COMMENT ON FUNCTION tickq.request_cancel(text, text, text, timestamptz) IS
'Asks the dispatcher holding a run to stop it: p_target is a run id or a kind (its live run). '
'Records when, who (tickq.asked_by: the session''s role, then p_claimed_by, the OS user and '
'host the client claims, labelled as a claim) and why on the run, and returns '
'the dispatcher holding it and whether it was seen lately (asked for cancels in the last 30 '
'seconds). Unknown run or kind: TQ100; not running: TQ101; a reason over 500 characters: TQ102.';

CREATE OR REPLACE FUNCTION tickq.cancels_requested(
    p_dispatcher text,
    p_run_ids bigint[],
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (run_id bigint, cancel_by text, cancel_reason text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    INSERT INTO tickq.dispatcher_poll AS dp (name, polled_at) VALUES (p_dispatcher, p_now)
    ON CONFLICT (name) DO UPDATE SET polled_at = excluded.polled_at;
    RETURN QUERY
    SELECT r.id, r.cancel_by, r.cancel_reason
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name AND k.run_id = r.id
    WHERE r.id = ANY(p_run_ids) AND r.cancel_requested_at IS NOT NULL
        AND k.leased_by = p_dispatcher
    ORDER BY r.id;
END
$$;
COMMENT ON FUNCTION tickq.cancels_requested(text, bigint[], timestamptz) IS
'The runs among p_run_ids, live and leased by p_dispatcher, whose cancel was asked (with who '
'and why); records that the dispatcher asked (tickq.dispatcher_poll), which is how '
'tickq.request_cancel knows it is alive.';
