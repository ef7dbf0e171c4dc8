-- Irreversible kinds (armed by a person's first successful run) and chains (a kind whose
-- registry entry has ordered steps instead of one command).

CREATE OR REPLACE FUNCTION tickq.parse_chain(
    p_name text,
    p_entry jsonb
) RETURNS interval
LANGUAGE plpgsql
AS $$
DECLARE
    v_step jsonb;
    v_n bigint;
    v_where text;
    v_key text;
    v_total interval := '0'::interval;
BEGIN
    PERFORM tickq.registry_shape(p_entry -> 'resume', p_name, 'resume', 'boolean');
    IF NOT p_entry ? 'steps' THEN
        IF p_entry ? 'resume' THEN
            PERFORM tickq.registry_error(p_name, 'resume', 'only a chain (a kind with "steps") takes this key');
        END IF;
        RETURN NULL;
    END IF;
    IF p_entry ? 'command' THEN
        PERFORM tickq.registry_error(p_name, 'steps', 'give either "command" or "steps", not both');
    END IF;
    IF jsonb_typeof(p_entry -> 'steps') IS DISTINCT FROM 'array' OR jsonb_array_length(p_entry -> 'steps') = 0 THEN
        PERFORM tickq.registry_error(p_name, 'steps', 'must be a non-empty list of steps');
    END IF;
    FOR v_step, v_n IN SELECT e.step, e.n FROM jsonb_array_elements(p_entry -> 'steps') WITH ORDINALITY AS e (step, n)
    LOOP
        v_where := format('steps[%s]', v_n);
        IF jsonb_typeof(v_step) <> 'object' THEN
            PERFORM tickq.registry_error(p_name, v_where, 'a step must be an object');
        END IF;
        FOR v_key IN SELECT jsonb_object_keys(v_step) LOOP
            IF NOT v_key = ANY(ARRAY['name', 'command', 'timeout', 'cwd', 'env', 'continue_on_failure']) THEN
                PERFORM tickq.registry_error(p_name, v_where || '.' || v_key, 'unknown key');
            END IF;
        END LOOP;
        IF jsonb_typeof(v_step -> 'name') IS DISTINCT FROM 'string'
            OR NOT tickq.kind_name_ok(v_step ->> 'name') THEN
            PERFORM tickq.registry_error(p_name, v_where || '.name',
                'a step name is 1-100 characters of a-z, 0-9, _ . - starting with a letter or digit');
        END IF;
        PERFORM tickq.registry_shape(v_step -> 'command', p_name, v_where || '.command', 'command');
        PERFORM tickq.registry_shape(v_step -> 'cwd', p_name, v_where || '.cwd', 'string');
        PERFORM tickq.registry_shape(v_step -> 'env', p_name, v_where || '.env', 'table of strings');
        PERFORM tickq.registry_shape(v_step -> 'continue_on_failure', p_name, v_where || '.continue_on_failure',
            'boolean');
        v_total := v_total + tickq.registry_seconds(v_step -> 'timeout', p_name, v_where || '.timeout');
    END LOOP;
    -- Every repeated name at once, as one problem of the key steps.
    SELECT string_agg(format('"%s"', r.name), ', ' ORDER BY r.name), count(*) INTO v_key, v_n
    FROM (SELECT e.step ->> 'name' AS name FROM jsonb_array_elements(p_entry -> 'steps') AS e (step)
        GROUP BY 1 HAVING count(*) > 1) AS r;
    IF v_n > 0 THEN
        PERFORM tickq.registry_error(p_name, 'steps', format('step %s %s used twice',
            CASE WHEN v_n = 1 THEN 'name ' || v_key ELSE 'names ' || v_key END,
            CASE WHEN v_n = 1 THEN 'is' ELSE 'are' END));
    END IF;
    RETURN v_total;
END
$$;
COMMENT ON FUNCTION tickq.parse_chain(text, jsonb) IS
'Validates the steps (name, command, timeout, cwd, env, continue_on_failure; no name twice) and '
'resume keys of a registry entry and returns the sum of the step timeouts, or null when the kind '
'is no chain; raises TQ002 naming the kind and key.';

CREATE OR REPLACE FUNCTION tickq.command_changed(
    p_stored tickq.job_kind,
    p_incoming tickq.job_kind
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    -- What a run executes: the command or the steps, where and with what environment; and
    -- whether the kind is irreversible at all. Any of these changing disarms the kind.
    SELECT (p_stored.registry -> 'command', p_stored.registry -> 'steps', p_stored.registry -> 'cwd',
            p_stored.registry -> 'env', p_stored.irreversible)
        IS DISTINCT FROM
        (p_incoming.registry -> 'command', p_incoming.registry -> 'steps', p_incoming.registry -> 'cwd',
            p_incoming.registry -> 'env', p_incoming.irreversible)
$$;
COMMENT ON FUNCTION tickq.command_changed(tickq.job_kind, tickq.job_kind) IS
'Whether a registry entry changes what a kind runs (command, steps, cwd, env) or whether it is '
'irreversible: tickq.sync_registry then disarms the kind and logs it.';

CREATE OR REPLACE FUNCTION tickq.arm_kind(
    p_run tickq.job_run,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- Called by finish_run for a manual run a person started that ended ok, with the kind row
    -- locked. The trigger kind_armed_by_a_run checks the run again.
    UPDATE tickq.job_kind AS k SET
        armed_at = p_now,
        armed_by = p_run.run_by,
        armed_run_id = p_run.id
    WHERE k.name = p_run.kind AND k.irreversible AND k.armed_at IS NULL
        AND p_run.run_trigger = 'manual' AND p_run.outcome = 'ok'
        AND p_run.claimed_at >= k.command_since;
END
$$;
COMMENT ON FUNCTION tickq.arm_kind(tickq.job_run, timestamptz) IS
'Internal: arms the irreversible kind of a successful manual run a person started, if it is '
'unarmed and the run ran its current command.';

CREATE OR REPLACE FUNCTION tickq.report_step(
    p_run_id bigint,
    p_dispatcher text,
    p_n integer,
    p_name text,
    p_outcome tickq.outcome,
    p_exit_code integer DEFAULT NULL,
    p_output_tail text DEFAULT NULL,
    p_duration interval DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_steps jsonb;
BEGIN
    PERFORM tickq.check_reported_outcome(p_outcome, 'step');
    -- Only the dispatcher holding the run's lease reports its steps (TQ001 otherwise).
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    SELECT k.registry -> 'steps' INTO v_steps
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.id = p_run_id;
    IF v_steps IS NULL OR p_n IS NULL OR p_n < 1 OR p_n > jsonb_array_length(v_steps)
        OR v_steps -> (p_n - 1) ->> 'name' IS DISTINCT FROM p_name THEN
        RAISE EXCEPTION 'run % has no step % named "%"', p_run_id, p_n, p_name
            USING ERRCODE = 'TQ031',
            DETAIL = format('The kind''s steps are %s.',
                coalesce((SELECT string_agg(e.step ->> 'name', ', ' ORDER BY e.n)
                    FROM jsonb_array_elements(v_steps) WITH ORDINALITY AS e (step, n)), 'none: it is no chain')),
            HINT = 'The registry file and the queue disagree: sync the registry. Nothing was changed.';
    END IF;
    IF EXISTS (SELECT FROM tickq.job_step AS s WHERE s.run_id = p_run_id AND s.n = p_n) THEN
        RAISE EXCEPTION 'step % ("%") of run % was already reported', p_n, p_name, p_run_id
            USING ERRCODE = 'TQ032', HINT = 'A step is reported once. Nothing was changed.';
    END IF;
    INSERT INTO tickq.job_step (run_id, n, name, outcome, exit_code, started_at, finished_at, output_tail)
    VALUES (p_run_id, p_n, p_name, p_outcome, p_exit_code,
        p_now - greatest(coalesce(p_duration, '0'::interval), '0'::interval), p_now,
        right(p_output_tail, 65536));
END
$$;
COMMENT ON FUNCTION tickq.report_step(
    bigint, text, integer, text, tickq.outcome, integer, text, interval, timestamptz
) IS
'Records how step p_n (named p_name, as in the registry) of a chain''s live run ended: outcome, '
'exit code, duration (ending now) and the last 64 KiB of output. Only the dispatcher holding the '
'lease may report (TQ001); an unknown step raises TQ031, a step reported twice TQ032.';

CREATE OR REPLACE FUNCTION tickq.chain_start(
    p_run_id bigint,
    p_dispatcher text
) RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
    v_registry jsonb;
    v_first bigint;
    v_start integer;
BEGIN
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    SELECT r.* INTO STRICT v_run FROM tickq.job_run AS r WHERE r.id = p_run_id;
    SELECT k.registry INTO STRICT v_registry FROM tickq.job_kind AS k WHERE k.name = v_run.kind;
    IF v_registry -> 'steps' IS NULL OR v_run.run_trigger <> 'retry' OR v_registry -> 'resume' IS DISTINCT FROM 'true' THEN
        RETURN 1;
    END IF;
    -- The earlier tries of this slot: the kind's runs since its last first attempt (a kind never
    -- runs twice at once, so its runs follow each other). A step any of them ended ok is done;
    -- the retry starts at the first step that is not, so a lost try resumes where it stopped.
    SELECT max(r.id) INTO v_first
    FROM tickq.job_run AS r
    WHERE r.kind = v_run.kind AND r.id < p_run_id AND r.attempt = 1;
    SELECT min(g.n)::integer INTO v_start
    FROM generate_series(1, jsonb_array_length(v_registry -> 'steps')) AS g (n)
    WHERE NOT EXISTS (
        SELECT FROM tickq.job_run AS r
        INNER JOIN tickq.job_step AS s ON r.id = s.run_id
        WHERE r.kind = v_run.kind AND r.id < p_run_id AND r.id >= coalesce(v_first, p_run_id)
            AND s.n = g.n AND s.outcome = 'ok'
            AND s.name = v_registry -> 'steps' -> (g.n - 1) ->> 'name'
    );
    -- Every step done (the last try failed after them): run the chain again.
    RETURN coalesce(v_start, 1);
END
$$;
COMMENT ON FUNCTION tickq.chain_start(bigint, text) IS
'The step (from 1) a chain''s live run starts at: for a retry of a kind with resume = true, the '
'first step no earlier try of the same slot ended ok; otherwise 1 (start over). Raises TQ001 '
'unless p_dispatcher holds the run''s lease.';

REVOKE ALL ON FUNCTION tickq.arm_kind(tickq.job_run, timestamptz) FROM public;
