-- `tickq explain KIND`: why a kind is or is not running now. The state is decided here, by what
-- holds the kind back as tickq.queue_status_at asks it (tickq.kind_held: retired, running,
-- disabled, unarmed, paused), then due or idle, with what an operator needs beside it; the
-- runner only prints it.

CREATE OR REPLACE FUNCTION tickq.explain_queue(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- A due kind's place in the claim order (claim_jobs: stale kinds first, oldest first, then
    -- lane, due time, name) and in its lane, the kinds ahead of it, and the runs holding slots.
    WITH due AS (
        SELECT k.name, k.priority, k.due_at, k.due_at <= p_now - s.stale_after AS stale,
            k.due_at <= tickq.hold_from(s.stale_after, p_now) AS held
        FROM tickq.job_kind AS k
        CROSS JOIN tickq.settings AS s
        WHERE tickq.kind_due(k, p_now)
    ),
    ordered AS (
        SELECT d.*, row_number() OVER (
                ORDER BY d.stale DESC, CASE WHEN d.stale THEN d.due_at END, d.priority, d.due_at, d.name
            ) AS place,
            row_number() OVER (PARTITION BY d.priority ORDER BY d.due_at, d.name) AS lane_place,
            count(*) OVER (PARTITION BY d.priority) AS lane_due
        FROM due AS d
    ),
    me AS (
        SELECT o.* FROM ordered AS o WHERE o.name = p_kind
    ),
    slots_now AS MATERIALIZED (
        SELECT g.* FROM tickq.slot_occupancy_at(p_now) AS g
    ),
    pools_now AS MATERIALIZED (
        SELECT o.* FROM tickq.pool_occupancy_at(p_now) AS o
    ),
    mine AS (
        SELECT o.* FROM pools_now AS o
        WHERE o.pool = ANY(SELECT unnest(k.pools) FROM tickq.job_kind AS k WHERE k.name = p_kind)
    ),
    -- Capacity the claim holds for kinds ahead of this one in claim order that have waited half
    -- of stale_after and do not fit now (tickq.claim_fit): short of global slots, such a kind's
    -- weight and pools are held; short only of a pool, its pools (not its weight).
    -- (Only kinds ahead of this one, due past half of stale_after: the others cost nothing.)
    held AS (
        SELECT o.name, o.place, f.short_of_slots, k.weight, k.pools,
            CASE WHEN f.short_of_slots THEN k.weight ELSE 0 END AS weight_held
        FROM (SELECT a.* FROM ordered AS a WHERE a.held AND a.place < (SELECT me.place FROM me)) AS o
        INNER JOIN tickq.job_kind AS k ON o.name = k.name
        CROSS JOIN slots_now AS g
        CROSS JOIN LATERAL (
            SELECT k.weight > g.free AS short_of_slots,
                EXISTS (SELECT FROM pools_now AS pn WHERE pn.pool = ANY(k.pools) AND pn.free = 0) AS short_of_pool
        ) AS f
        WHERE f.short_of_slots OR f.short_of_pool
    ),
    held_total AS (
        SELECT coalesce(sum(h.weight_held), 0) AS weight FROM held AS h
    )
    SELECT jsonb_build_object(
        'place', me.place,
        'lane_place', me.lane_place,
        'lane_due', me.lane_due,
        'due_kinds', (SELECT count(*) FROM ordered),
        'ahead', coalesce((
            SELECT jsonb_agg(o.name ORDER BY o.place)
            FROM ordered AS o WHERE o.place < me.place AND o.place >= me.place - 5
        ), '[]'),
        'slots', g.slots,
        'slots_free', g.free,
        'holders', g.holders,
        -- What the kind takes: its weight of the global slots and a slot of each pool it
        -- names; waits_for is each of those it cannot have now (the slots too few for its
        -- weight, a full pool).
        'weight', k.weight,
        'pools', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'pool', m.pool, 'slots', m.slots, 'busy', m.busy, 'free', m.free, 'holders', m.holders
            ) ORDER BY m.pool)
            FROM mine AS m
        ), '[]'),
        'waits_for', CASE WHEN k.weight > g.free THEN jsonb_build_array(jsonb_build_object(
                'what', 'slots', 'weight', k.weight, 'free', g.free, 'slots', g.slots))
            ELSE '[]' END
            || coalesce((
                SELECT jsonb_agg(jsonb_build_object('what', 'pool', 'pool', m.pool, 'slots', m.slots)
                    ORDER BY m.pool)
                FROM mine AS m WHERE m.free = 0
            ), '[]')
            -- a kind ahead held for, holding slots it would fit in or a pool it names (the first 5)
            || coalesce((
                SELECT jsonb_agg(jsonb_build_object('what', 'held', 'kind', x.name,
                    'weight', x.weight_held, 'pools', to_jsonb(x.pools_held)) ORDER BY x.place)
                FROM (
                    SELECT h.*, ARRAY(SELECT unnest(h.pools) INTERSECT SELECT unnest(k.pools) ORDER BY 1)
                        AS pools_held
                    FROM held AS h
                    WHERE (h.weight_held > 0 AND k.weight <= g.free AND k.weight + ht.weight > g.free)
                        OR h.pools && k.pools
                    ORDER BY h.place
                    LIMIT 5
                ) AS x
            ), '[]')
    )
    FROM slots_now AS g
    INNER JOIN tickq.job_kind AS k ON k.name = p_kind
    CROSS JOIN held_total AS ht
    LEFT JOIN me ON true
$$;
COMMENT ON FUNCTION tickq.explain_queue(text, timestamptz) IS
'For tickq.explain_kind: a due kind''s place in the claim order and in its lane, the kinds just '
'ahead of it, the slot limit, the free slots and the runs holding slots (kind, dispatcher, '
'since, lease until, weight), the kind''s weight and each pool it names with its slots, busy, '
'free and holders, and what of them it waits for (waits_for: the slots, too few free for its '
'weight; each full pool; capacity held for a kind ahead of it that has waited half of '
'stale_after and does not fit, as tickq.claim_fit holds it: that kind''s weight if short of '
'slots, and its pools).';

CREATE OR REPLACE FUNCTION tickq.explain_kind(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_settings tickq.settings;
    v_state text;
    v_due timestamptz;
BEGIN
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind;
    IF NOT FOUND THEN
        PERFORM tickq.unknown_kind_error(p_kind, false);
    END IF;
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_due := greatest(v_kind.due_at, CASE WHEN v_kind.paused_until > p_now THEN v_kind.paused_until END);
    v_state := coalesce(tickq.kind_held(v_kind, p_now),
        CASE WHEN v_kind.due_at <= p_now THEN 'waiting' ELSE 'idle' END);
    RETURN jsonb_build_object(
        'kind', v_kind.name,
        'state', v_state,
        'now', p_now,
        'priority', v_kind.priority,
        'schedule', tickq.describe_schedule(tickq.schedule_of(v_kind)),
        'timezone', v_kind.timezone,
        'weight', v_kind.weight,
        'pools', to_jsonb(v_kind.pools),
        'retired_at', v_kind.retired_at,
        'due_at', v_kind.due_at,
        'next_due_at', CASE WHEN v_state IN ('idle', 'waiting') OR (v_state = 'paused' AND v_due < 'infinity')
            THEN v_due END,
        'trigger', v_kind.next_trigger,
        'attempts', v_kind.attempts,
        'failure_streak', v_kind.failure_streak,
        'alert_after', v_settings.alert_after,
        'stale_after', extract(EPOCH FROM v_settings.stale_after),
        'stale', v_state = 'waiting' AND v_kind.due_at <= p_now - v_settings.stale_after,
        'waiting_seconds', CASE WHEN v_state = 'waiting' THEN extract(EPOCH FROM p_now - v_kind.due_at) END,
        'run', (
            SELECT jsonb_build_object('run_id', r.id, 'dispatcher', r.dispatcher, 'trigger', r.run_trigger,
                'attempt', r.attempt, 'claimed_at', r.claimed_at, 'started_at', r.started_at,
                'leased_until', v_kind.leased_until, 'lease_expired', v_kind.leased_until < p_now)
            FROM tickq.job_run AS r WHERE r.id = v_kind.run_id
        ),
        'pause', CASE WHEN v_kind.paused_until > p_now THEN jsonb_build_object(
            'until', nullif(v_kind.paused_until, 'infinity'), 'by', v_kind.paused_by,
            'reason', v_kind.paused_reason) END,
        'irreversible', v_kind.irreversible,
        'armed_at', v_kind.armed_at,
        'armed_by', v_kind.armed_by,
        'last', (
            SELECT jsonb_build_object('run_id', r.id, 'outcome', r.outcome, 'exit_code', r.exit_code,
                'finished_at', r.finished_at, 'duration', extract(EPOCH FROM r.duration), 'trigger', r.run_trigger)
            FROM tickq.job_run AS r WHERE r.id = v_kind.last_run_id
        ),
        'queue', CASE WHEN v_state = 'waiting' THEN tickq.explain_queue(p_kind, p_now) END,
        'tick', (
            SELECT jsonb_build_object('seconds', extract(EPOCH FROM v_settings.tick),
                'last_tick_at', max(d.last_tick_at),
                'host', (array_agg(d.host ORDER BY d.last_tick_at DESC))[1])
            FROM tickq.dispatcher_tick AS d
        )
    );
END
$$;
COMMENT ON FUNCTION tickq.explain_kind(text, timestamptz) IS
'Why a kind is or is not running as of p_now, as one JSON document: its state (retired, running, '
'disabled, unarmed, paused, waiting: due and unclaimed, or idle until its next slot), the live '
'run and its lease, the pause (until, by, reason), the due time and whether it is stale, for a '
'waiting kind its place in the claim order, the runs holding the slots and the pools it names, '
'and what it waits for (explain_queue), its weight and pools, the last finished '
'run, the failure streak and the last tick. TQ003 for an unknown kind.';
