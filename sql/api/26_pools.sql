-- Weights and pools: the registry's [pools.NAME] tables (parsed, judged, synced and drifted like
-- the settings), the rules between keys (a weight at most settings.slots, a pool that exists),
-- and the claim of kinds that have a weight or pools (tickq.claim_fit, called by claim_jobs).
--
-- A pool gone from the registry: its free rows are dropped at once, and its row stays with
-- slots 0 (nothing more may take it) until the runs still holding its rows end; a later sync
-- then deletes it. No live kind can name it: the registry that dropped it would be refused.

CREATE OR REPLACE FUNCTION tickq.parse_pools(
    p_pools jsonb
) RETURNS TABLE (name text, slots integer)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_name text;
    v_key text;
BEGIN
    IF p_pools IS NULL OR jsonb_typeof(p_pools) = 'null' THEN
        RETURN;
    END IF;
    IF jsonb_typeof(p_pools) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, 'pools', 'must be a table of pools ([pools.NAME])');
    END IF;
    FOR v_name IN SELECT jsonb_object_keys(p_pools) ORDER BY 1 LOOP
        IF v_name !~ '^[a-z0-9][a-z0-9_-]{0,62}$' THEN
            PERFORM tickq.registry_error(NULL, 'pools.' || v_name,
                'a pool name is 1-63 characters of a-z, 0-9, _ - starting with a letter or digit');
        END IF;
        IF jsonb_typeof(p_pools -> v_name) <> 'object' THEN
            PERFORM tickq.registry_error(NULL, 'pools.' || v_name, 'must be a table with slots = N');
        END IF;
        SELECT k INTO v_key FROM jsonb_object_keys(p_pools -> v_name) AS k WHERE k <> 'slots' ORDER BY 1 LIMIT 1;
        IF v_key IS NOT NULL THEN
            PERFORM tickq.registry_error(NULL, 'pools.' || v_name || '.' || v_key, 'unknown key');
        END IF;
        name := v_name;
        slots := tickq.registry_count(p_pools -> v_name -> 'slots', NULL, 'pools.' || v_name || '.slots');
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.parse_pools(jsonb) IS
'The registry''s "pools" object ({NAME: {"slots": N}}; absent: none) as rows (name, slots), slots '
'within tickq.registry_limits (pools.slots); TQ002 naming the key as the file spells it '
'(pools.NAME.slots).';

CREATE OR REPLACE FUNCTION tickq.parse_weight(
    p_name text,
    p_entry jsonb
) RETURNS tickq.job_kind
LANGUAGE plpgsql
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_item jsonb := coalesce(p_entry -> 'pools', '[]');
BEGIN
    -- Their bounds here; at most settings.slots and pools that exist are rules between keys of
    -- the registry (tickq.weight_problems).
    v_kind.weight := tickq.registry_count(coalesce(p_entry -> 'weight', '1'::jsonb), p_name, 'weight');
    IF jsonb_typeof(v_item) <> 'array' OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (p)
        WHERE jsonb_typeof(e.p) <> 'string' OR e.p #>> '{}' !~ '^[a-z0-9][a-z0-9_-]{0,62}$') THEN
        PERFORM tickq.registry_error(p_name, 'pools', format('must be a list of pool names, got %s',
            left(v_item::text, 200)));
    END IF;
    v_kind.pools := tickq.registry_no_repeats(
        ARRAY(SELECT e.p FROM jsonb_array_elements_text(v_item) AS e (p)), v_item, p_name, 'pools', 'pools');
    RETURN v_kind;
END
$$;
COMMENT ON FUNCTION tickq.parse_weight(text, jsonb) IS
'A registry entry''s weight (default 1, within tickq.registry_limits) and pools (a list of pool '
'names, no repeats; kept sorted), as a job_kind row holding only those two; TQ002 naming the key.';

CREATE OR REPLACE FUNCTION tickq.weight_problems(
    p_registry jsonb,
    p_slots integer
) RETURNS TABLE (kind text, key text, problem text)
LANGUAGE sql STABLE
AS $$
    -- The rules between keys of the registry: a weight (a kind's, [agents]') is at most the
    -- settings' slots (a heavier run could never be claimed), and a kind names pools the
    -- registry has. Values of the wrong type are the parsers' to refuse, not these rules'.
    SELECT k.key AS kind, 'weight', format('must not be more than settings.slots (%s), got %s', p_slots, k.value -> 'weight')
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_registry -> 'kinds') = 'object' THEN p_registry -> 'kinds' END) AS k
    WHERE jsonb_typeof(k.value -> 'weight') = 'number' AND (k.value ->> 'weight')::numeric > p_slots
    UNION ALL
    SELECT k.key, 'pools', format('unknown pool "%s": the registry has no [pools.%s]', left(p.pool, 100), left(p.pool, 100))
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_registry -> 'kinds') = 'object' THEN p_registry -> 'kinds' END) AS k
    CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(k.value -> 'pools') = 'array'
        AND NOT EXISTS (SELECT FROM jsonb_array_elements(k.value -> 'pools') AS e (p) WHERE jsonb_typeof(e.p) <> 'string')
        THEN k.value -> 'pools' ELSE '[]' END) AS p (pool)
    WHERE NOT coalesce(CASE WHEN jsonb_typeof(p_registry -> 'pools') = 'object' THEN p_registry -> 'pools' END, '{}') ? p.pool
    UNION ALL
    SELECT NULL, 'agents.weight', format('must not be more than settings.slots (%s), got %s', p_slots,
        p_registry -> 'agents' -> 'weight')
    WHERE jsonb_typeof(p_registry -> 'agents' -> 'weight') = 'number' AND (p_registry -> 'agents' ->> 'weight')::numeric > p_slots
    ORDER BY 1, 2, 3
$$;
COMMENT ON FUNCTION tickq.weight_problems(jsonb, integer) IS
'The rules between keys of p_registry: a kind''s weight (key weight) and [agents] weight at most '
'p_slots (settings.slots), and each pool a kind names (key pools) one of the registry''s [pools]. '
'One row per problem; changes nothing.';

CREATE OR REPLACE FUNCTION tickq.sync_pools(
    p_pools jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_new jsonb := coalesce((SELECT jsonb_object_agg(p.name, p.slots) FROM tickq.parse_pools(p_pools) AS p), '{}');
    v_drift jsonb;
BEGIN
    -- Drift, as for the settings: a pool's slots that differ from the registry's, or a pool the
    -- registry no longer has (none before the first sync, none for a pool new to the queue).
    SELECT coalesce(jsonb_agg(jsonb_build_object('field', 'pools.' || p.name || '.slots', 'stored_value', p.slots,
        'registry_value', v_new -> p.name, 'registry_edit', true) ORDER BY p.name), '[]')
    INTO v_drift
    FROM tickq.pool AS p
    WHERE p.slots > 0 AND (v_new -> p.name) IS DISTINCT FROM to_jsonb(p.slots)
        AND EXISTS (SELECT FROM tickq.job_kind);
    INSERT INTO tickq.pool AS p (name, slots, updated_at)
    SELECT n.key, n.value::integer, p_now FROM jsonb_each_text(v_new) AS n (key, value)
    ON CONFLICT (name) DO UPDATE SET slots = excluded.slots, updated_at = p_now
    WHERE p.slots <> excluded.slots;
    UPDATE tickq.pool AS p SET slots = 0, updated_at = p_now WHERE NOT v_new ? p.name AND p.slots > 0;
    -- The rows, as tickq.sync_slots keeps the global ones: missing ones added, free ones past
    -- the limit dropped (a busy one is left to its run, a row another session holds to a later sync).
    INSERT INTO tickq.pool_slot (pool, n)
    SELECT p.name, g.n FROM tickq.pool AS p CROSS JOIN LATERAL generate_series(1, p.slots) AS g (n)
    ON CONFLICT (pool, n) DO NOTHING;
    DELETE FROM tickq.pool_slot AS ps WHERE (ps.pool, ps.n) IN (
        SELECT f.pool, f.n FROM tickq.pool_slot AS f INNER JOIN tickq.pool AS p ON f.pool = p.name
        WHERE f.n > p.slots AND f.run_id IS NULL FOR UPDATE OF f SKIP LOCKED);
    DELETE FROM tickq.pool AS p WHERE p.slots = 0 AND NOT EXISTS (SELECT FROM tickq.pool_slot AS ps WHERE ps.pool = p.name);
    RETURN v_drift;
END
$$;
COMMENT ON FUNCTION tickq.sync_pools(jsonb, timestamptz) IS
'Makes tickq.pool and tickq.pool_slot match the registry''s "pools" object: slots set, rows 1..slots '
'kept, free rows past the limit dropped, a pool gone from the registry drained (slots 0) and '
'deleted once no run holds its rows. Returns the drift items (field "pools.NAME.slots").';

CREATE OR REPLACE FUNCTION tickq.pool_slots_left(
    p_pool text
) RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    -- As tickq.slots_left for the global slots: normally the rows keep claims apart; while runs
    -- hold rows past a lowered limit, claims take the pool's row lock and count.
    IF NOT EXISTS (SELECT FROM tickq.pool_slot AS ps INNER JOIN tickq.pool AS p ON ps.pool = p.name
        WHERE ps.pool = p_pool AND ps.n > p.slots AND ps.run_id IS NOT NULL) THEN
        RETURN (SELECT p.slots FROM tickq.pool AS p WHERE p.name = p_pool);
    END IF;
    PERFORM FROM tickq.pool AS p WHERE p.name = p_pool FOR UPDATE;
    RETURN greatest(0, (SELECT p.slots FROM tickq.pool AS p WHERE p.name = p_pool)
        - (SELECT count(*) FROM tickq.pool_slot AS ps WHERE ps.pool = p_pool AND ps.run_id IS NOT NULL));
END
$$;
COMMENT ON FUNCTION tickq.pool_slots_left(text) IS
'Internal: how many runs a claim may still put in pool p_pool: its slots, or while runs hold rows '
'past a lowered limit, the limit less every busy row (counted under the pool row''s lock).';

REVOKE ALL ON FUNCTION tickq.pool_slots_left(text) FROM public;

CREATE OR REPLACE FUNCTION tickq.hold_from(
    p_stale_after interval,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
-- STABLE, as timestamptz - interval is (it depends on the time zone): the planner inlines it
-- into the queries that ask it, where an IMMUTABLE one over a STABLE operator would be called
-- as a function once per row.
LANGUAGE sql STABLE
AS $$
    SELECT p_now - p_stale_after / 2
$$;
COMMENT ON FUNCTION tickq.hold_from(interval, timestamptz) IS
'The due time from which the claim holds capacity for a kind that does not fit (half of '
'stale_after ago; see tickq.claim_fit). tickq.claim_fit and tickq.explain_queue both ask it.';

-- The claim of kinds with a weight or pools: claim_jobs hands its candidates (in claim order)
-- here once a candidate has either. Free slot rows are locked first (FOR UPDATE SKIP LOCKED, as
-- claim_jobs takes them: as many as p_limit kinds need with the candidates' weights, more when
-- a kind needs them), then the candidates' kind rows (SKIP LOCKED); each kind in turn is given its weight in
-- those rows and one free row of each pool it names (SKIP LOCKED too), or passed over when it
-- does not fit. The rows enforce every limit: no count is ever read without them. A light kind
-- costs no statement of its own: a claim costs two, one more per heavy kind short of locked
-- rows, and one per pool of a pooled kind.
--
-- Starvation: a heavy or pooled kind among light kinds that always fit would wait for ever,
-- since a free slot is taken by the next light kind before enough are free at once. So a
-- candidate that has waited half of stale_after and does not fit has capacity held for it: the
-- candidates after it may only use what is left after its need. Half, not all of stale_after:
-- the held capacity gathers as the runs in its way end, so a kind held from half of stale_after
-- on is claimed within stale_after whenever those runs are shorter than the other half, which
-- tickq check's worst case (the same claim) proves or names the pool or weight it waited for.
-- Past stale_after it comes first in claim order, ahead of every lane. Short of global slots,
-- its weight is held (later candidates fit only in the free rows past it); short of a pool,
-- that pool is held (no later candidate takes a row of it) and so are its other pools, but not
-- its weight, which would stop every other kind while the pool is busy with a long run. Every
-- claim holds anew, so free rows gather until the waiting kind fits: it waits at most for the
-- runs in its way to end.
CREATE OR REPLACE FUNCTION tickq.claim_fit(
    -- what it returns: one record, so claim_jobs calls it as a plain expression (OUT parameters
    -- first, so the time stays the last parameter)
    OUT picked text[],
    OUT slots integer[],
    OUT kinds integer,
    OUT pooled jsonb,
    p_candidates text[],
    p_limit integer,
    p_slots integer,
    p_over_limit boolean,
    p_stale timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS record
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    -- How many slot rows this claim may take (fewer while runs hold slots past a lowered limit).
    v_budget integer := CASE WHEN p_over_limit THEN tickq.slots_left(p_slots) ELSE p_slots END;
    v_free integer[];  -- slot rows locked by this claim and given to no kind yet
    v_held integer := 0;  -- how many of them are held for waiting kinds that did not fit
    v_held_pools text[] := '{}'::text[];  -- pools held for waiting kinds: no later candidate takes them
    v_taken text[] := '{}'::text[];  -- the pool rows given to kinds, as 'pool/n'
    v_taken_pools text[] := '{}'::text[];  -- their pools, once per row
    v_keys text[];  -- the pool rows of the kind at hand (v_kind, the loop's row, is the cursor's)
    v_pool text;
    v_n integer;
    v_rows jsonb;
    -- The candidates' kind rows in claim order, locked one at a time as the loop reaches them
    -- (a bound cursor is read a row at a time, where FOR over a query reads ahead ten): a claim
    -- locks no kind row past the last one it takes, which claims beside it may then take.
    c_kinds CURSOR FOR
        SELECT k.name, k.weight, k.pools, k.due_at <= tickq.hold_from(p_now - p_stale, p_now) AS held
        FROM tickq.job_kind AS k
        WHERE k.name = ANY(p_candidates) AND tickq.kind_claimable(k)
            AND k.run_id IS NULL AND k.due_at <= p_now AND (k.paused_until IS NULL OR k.paused_until <= p_now)
        ORDER BY array_position(p_candidates, k.name)
        FOR UPDATE SKIP LOCKED;
BEGIN
    picked := '{}'::text[];
    slots := '{}'::integer[];
    kinds := 0;
    pooled := '[]'::jsonb;
    -- Free slot rows, as many as p_limit kinds take if the heavy candidates are among them (more
    -- are locked below when a kind needs them); none free, and nothing is locked.
    v_free := ARRAY(SELECT sl.n FROM tickq.slot AS sl WHERE sl.run_id IS NULL AND sl.n <= p_slots ORDER BY sl.n
        LIMIT least(v_budget, p_limit + (SELECT coalesce(sum(k.weight - 1), 0) FROM tickq.job_kind AS k
            WHERE k.name = ANY(p_candidates) AND k.weight > 1))
        FOR UPDATE SKIP LOCKED);
    IF cardinality(v_free) = 0 OR p_limit < 1 THEN
        RETURN;
    END IF;
    -- As claim_jobs checks its picks again: a pause or another claim may have come since.
    FOR v_kind IN c_kinds LOOP
        -- Its weight in the free rows past those held for the waiting kinds before it.
        IF cardinality(v_free) < v_held + v_kind.weight AND cardinality(slots) + v_held + v_kind.weight <= v_budget THEN
            v_free := v_free || ARRAY(SELECT sl.n FROM tickq.slot AS sl
                WHERE sl.run_id IS NULL AND sl.n <= p_slots AND sl.n <> ALL(v_free) AND sl.n <> ALL(slots)
                ORDER BY sl.n LIMIT v_held + v_kind.weight - cardinality(v_free) FOR UPDATE SKIP LOCKED);
        END IF;
        IF cardinality(v_free) - v_held < v_kind.weight THEN
            IF v_kind.held THEN
                v_held := v_held + v_kind.weight;
                v_held_pools := v_held_pools || v_kind.pools;
            END IF;
            CONTINUE;
        END IF;
        -- One free row of each pool it names, within the pool's limit (counted, as
        -- tickq.pool_slots_left does, only while runs hold rows past a lowered one).
        v_rows := '[]'::jsonb;
        v_keys := '{}'::text[];
        FOREACH v_pool IN ARRAY v_kind.pools LOOP
            v_n := NULL;
            SELECT ps.n INTO v_n FROM tickq.pool AS p CROSS JOIN LATERAL (SELECT ps.n FROM tickq.pool_slot AS ps
                WHERE ps.pool = p.name AND ps.run_id IS NULL AND ps.n <= p.slots AND NOT (v_pool || '/' || ps.n) = ANY(v_taken)
                ORDER BY ps.n
                LIMIT CASE WHEN NOT EXISTS (SELECT FROM tickq.pool_slot AS b
                        WHERE b.pool = p.name AND b.n > p.slots AND b.run_id IS NOT NULL) THEN 1
                    ELSE least(1, tickq.pool_slots_left(v_pool) - cardinality(array_positions(v_taken_pools, v_pool)))
                    END
                FOR UPDATE SKIP LOCKED) AS ps
            WHERE p.name = v_pool AND NOT v_pool = ANY(v_held_pools);
            EXIT WHEN v_n IS NULL;
            v_rows := v_rows || jsonb_build_object('kind', v_kind.name, 'pool', v_pool, 'n', v_n);
            v_keys := v_keys || (v_pool || '/' || v_n);
        END LOOP;
        IF jsonb_array_length(v_rows) < cardinality(v_kind.pools) THEN
            IF v_kind.held THEN
                v_held_pools := v_held_pools || v_kind.pools;
            END IF;
            CONTINUE;
        END IF;
        -- It fits: rows are alike, so it takes the first free ones and the held count stays.
        picked := picked || array_fill(v_kind.name, ARRAY[v_kind.weight]);
        slots := slots || v_free[1:v_kind.weight];
        v_free := v_free[v_kind.weight + 1:];
        kinds := kinds + 1;
        pooled := pooled || v_rows;
        v_taken := v_taken || v_keys;
        v_taken_pools := v_taken_pools || v_kind.pools;
        EXIT WHEN kinds >= p_limit;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.claim_fit(text[], integer, integer, boolean, timestamptz, timestamptz) IS
'Internal, for tickq.claim_jobs once a candidate has a weight or pools: locks the free slot rows '
'and the candidates'' kind rows (FOR UPDATE SKIP LOCKED) and gives, in claim order, each kind '
'that fits its weight in those rows and a free row of each of its pools (SKIP LOCKED), at most '
'p_limit kinds; a kind that has waited half of stale_after (p_stale: now less stale_after) and '
'does not fit has its weight or pools held from the candidates after it. Returns one record: '
'picked (a kind once per slot row), slots (the rows, in the same order), kinds (how many) and '
'pooled ([{kind, pool, n}]).';

REVOKE ALL ON FUNCTION tickq.claim_fit(text[], integer, integer, boolean, timestamptz, timestamptz) FROM public;
