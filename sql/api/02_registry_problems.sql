-- Every problem of a registry at once: each value tickq.sync_registry (sql/api/02_sync.sql)
-- would refuse, judged by the same functions, and the queue's refusal of another project's
-- sync, so one answer says all. Changes nothing.

CREATE OR REPLACE FUNCTION tickq.registry_problems(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, key text, problem text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings jsonb := coalesce(p_registry -> 'settings', '{}'::jsonb);
    v_kinds jsonb := coalesce(p_registry -> 'kinds', '{}'::jsonb);
    v_agents jsonb := p_registry -> 'agents';
    v_defaults tickq.settings;
    v_loose tickq.settings;
    v_zone text;
    v_key text;
    v_name text;
    v_message text;
    v_settings_ok boolean := true;
BEGIN
    -- The rules of tickq.sync_registry (the same functions), each setting, each kind and each
    -- key of [agents] checked on its own, so that one answer lists every problem where
    -- sync_registry stops at the first. Changes nothing.
    IF tickq.registry_top_problem(p_registry) IS NOT NULL THEN
        RETURN QUERY SELECT NULL::text, '*'::text, tickq.registry_top_problem(p_registry);
        RETURN;
    END IF;
    -- The registry this queue last synced, by these very rules (the digest covers the API): no
    -- problem, and no need to judge each of its kinds again on every tick.
    IF EXISTS (SELECT FROM tickq.queue_registry AS q WHERE q.digest = tickq.registry_digest(p_registry)) THEN
        RETURN;
    END IF;
    SELECT * INTO STRICT v_defaults FROM tickq.settings;
    v_zone := v_defaults.timezone;
    -- Each setting alone, against a backoff range as wide as the bounds allow, so that the rule
    -- between retry_base and retry_max is not charged to one of them (it is checked below).
    v_loose := v_defaults;
    v_loose.retry_base := make_interval(secs => (SELECT l.low FROM tickq.registry_limit('retry_base') AS l)::double precision);
    v_loose.retry_max := make_interval(secs => (SELECT l.high FROM tickq.registry_limit('retry_max') AS l)::double precision);
    FOR v_key IN SELECT jsonb_object_keys(v_settings) ORDER BY 1 LOOP
        BEGIN
            PERFORM tickq.parse_settings(jsonb_build_object(v_key, v_settings -> v_key), v_loose);
            IF v_key = 'timezone' THEN
                v_zone := v_settings ->> 'timezone';
            END IF;
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            v_settings_ok := false;
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            RETURN QUERY SELECT NULL::text, v_key, tickq.registry_problem(v_message, NULL, v_key);
        END;
    END LOOP;
    -- The one rule between settings (retry_max >= retry_base), once each is fine on its own.
    IF v_settings_ok THEN
        BEGIN
            PERFORM tickq.parse_settings(v_settings, v_defaults);
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
            RETURN QUERY SELECT NULL::text, v_key, tickq.registry_problem(v_message, NULL, v_key);
        END;
    END IF;
    FOR v_name IN SELECT jsonb_object_keys(v_kinds) ORDER BY 1 LOOP
        IF v_name LIKE 'tickq.%' THEN
            RETURN QUERY SELECT v_name, 'name'::text,
                'names starting with "tickq." are reserved for built-in kinds'::text;
            CONTINUE;
        END IF;
        RETURN QUERY SELECT v_name, p.key, p.problem
            FROM tickq.kind_problems(v_name, v_kinds -> v_name, v_zone) AS p;
    END LOOP;
    IF v_agents IS NOT NULL THEN
        RETURN QUERY SELECT NULL::text, p.key, p.problem FROM tickq.entry_problems(v_agents, 'tickq.parse_agents') AS p;
    END IF;
    RETURN QUERY SELECT NULL::text, p.key, p.problem
        FROM tickq.entry_problems(p_registry -> 'pools', 'tickq.parse_pools') AS p;
    -- The rules between keys, once the slots they are judged against are fine.
    IF v_settings_ok THEN
        RETURN QUERY SELECT w.kind, w.key, w.problem
            FROM tickq.weight_problems(p_registry, coalesce((v_settings ->> 'slots')::integer, v_defaults.slots)) AS w;
    END IF;
    -- Whose queue (a JSON naming its source): another project's sync that would retire kinds,
    -- with the file's own problems, so one answer says all (key NULL).
    RETURN QUERY SELECT NULL::text, NULL::text, q.problem FROM (SELECT tickq.queue_registry_problem(p_registry,
        v_kinds || '{"tickq.housekeeping": {}}'::jsonb) AS problem) AS q WHERE q.problem IS NOT NULL;
END
$$;
COMMENT ON FUNCTION tickq.registry_problems(jsonb, timestamptz) IS
'Every value tickq.sync_registry would refuse in p_registry, one row per setting, key of a kind '
'(tickq.kind_problems) or key of [agents] at fault (kind NULL for a setting or an agents key), '
'by the same rules, and (key NULL) the queue''s refusal of another project''s sync when '
'p_registry names its source (tickq.queue_registry_problem); changes nothing. None, without '
'judging again, for the registry the queue last synced (tickq.queue_registry.digest).';

CREATE OR REPLACE FUNCTION tickq.registry_top_problem(
    p_registry jsonb
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_registry) IS DISTINCT FROM 'object' THEN 'the registry must be a JSON object'
        WHEN jsonb_typeof(coalesce(p_registry -> 'settings', '{}')) <> 'object'
            OR jsonb_typeof(coalesce(p_registry -> 'kinds', '{}')) <> 'object'
            THEN '"settings" and "kinds" must be objects'
    END
$$;
COMMENT ON FUNCTION tickq.registry_top_problem(jsonb) IS
'What is wrong with the registry as a whole (no JSON object, or its "settings" or "kinds" no '
'object; either may be left out), or NULL: the one rule tickq.sync_registry refuses (TQ002, key '
'*) and tickq.registry_problems reports before judging any key.';

CREATE OR REPLACE FUNCTION tickq.entry_problems(
    p_table jsonb,
    p_parse regproc
) RETURNS TABLE (key text, problem text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_piece jsonb;
    v_message text;
    v_column text;
BEGIN
    -- Each entry on its own ({NAME: entry}), so that one answer names every entry at fault; a
    -- value that is no table, whole, so the parser's own refusal names it. The parser is the one
    -- the sync uses, called by name: any parser of a registry table.
    FOR v_piece IN
        SELECT p.piece FROM (
            SELECT e.key, jsonb_build_object(e.key, e.value) AS piece
            FROM jsonb_each(CASE WHEN jsonb_typeof(p_table) = 'object' THEN p_table END) AS e
            UNION ALL
            SELECT NULL, p_table WHERE jsonb_typeof(p_table) IS DISTINCT FROM 'object'
        ) AS p
        ORDER BY p.key
    LOOP
        BEGIN
            EXECUTE format('SELECT FROM %s($1)', p_parse) USING v_piece;
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_column = COLUMN_NAME;
            RETURN QUERY SELECT v_column, tickq.registry_problem(v_message, NULL, v_column);
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.entry_problems(jsonb, regproc) IS
'Every entry of a registry table (p_table: the "agents" or "pools" object) that p_parse, the '
'parser its sync uses (tickq.parse_agents, tickq.parse_pools), refuses when given that entry '
'alone, or p_table itself when it is no table: the key the refusal names, as the file spells '
'it, and what is wrong (for tickq.registry_problems). Changes nothing.';
