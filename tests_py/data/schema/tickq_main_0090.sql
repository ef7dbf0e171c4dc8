-- A queue made by tickq's whole migration chain 0001_queue.sql .. 0090_no_dead_clock_parameters.sql
-- and the API files of git commit 412a04b (the last before sql/migrations/0100_baseline.sql
-- replaced that chain): tickq_main_0085.sql restored and migrated with that commit's sql/, then
-- `pg_dump --schema=tickq --no-owner --inserts` (PostgreSQL 18.6): tables, rows, the migrator's
-- bookkeeping and every function of that time. Taken out, so that psycopg runs it as one simple
-- query: pg_dump's \restrict and \unrestrict lines, and SET transaction_timeout (PostgreSQL 17+).
-- tests_py/test_schema_upgrade_recent.py restores it and migrates it with today's sql/.
--
--
-- PostgreSQL database dump
--


-- Dumped from database version 18.6
-- Dumped by pg_dump version 18.6

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: tickq; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA tickq;


--
-- Name: agent_turn_entry; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.agent_turn_entry AS jsonb
	CONSTRAINT agent_turn_entry_bounded CHECK ((octet_length((VALUE)::text) <= 32768));


--
-- Name: DOMAIN agent_turn_entry; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.agent_turn_entry IS 'agent_turn.entry: one turn of an agent run as JSON, at most 32 KiB of text.';


--
-- Name: alert_condition; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.alert_condition AS ENUM (
    'failing',
    'stale'
);


--
-- Name: TYPE alert_condition; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.alert_condition IS 'What an alert is about. failing: the failure streak reached settings.alert_after. stale: the kind was due and left unclaimed longer than settings.stale_after.';


--
-- Name: calendar; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.calendar AS (
	times time without time zone[],
	minutes smallint[],
	hours smallint[],
	weekdays smallint[],
	days smallint[],
	months smallint[],
	either boolean,
	timezone text
);


--
-- Name: TYPE calendar; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.calendar IS 'A calendar schedule as tickq.calendar_next reads it: wall-clock times or real-time minutes and hours, weekday (ISO, nth, last), day-of-month and month filters, the cron OR rule, the zone.';


--
-- Name: failure_streak; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.failure_streak AS integer
	CONSTRAINT failure_streak_not_negative CHECK ((VALUE >= 0));


--
-- Name: DOMAIN failure_streak; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.failure_streak IS 'job_kind.failure_streak: failed, timed-out or lost runs in a row, 0 or more.';


--
-- Name: kind_attempts; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.kind_attempts AS integer
	CONSTRAINT attempts_not_negative CHECK ((VALUE >= 0));


--
-- Name: DOMAIN kind_attempts; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.kind_attempts IS 'job_kind.attempts: tries of the current slot so far, 0 or more.';


--
-- Name: metrics_kind; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.metrics_kind AS (
	name text,
	label text,
	outcomes bigint[],
	merged numeric,
	timed numeric,
	seconds numeric,
	buckets numeric[],
	last_ok timestamp with time zone,
	lateness numeric,
	stale boolean,
	failure_streak integer,
	running boolean,
	paused boolean,
	weight integer
);


--
-- Name: TYPE metrics_kind; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.metrics_kind IS 'A live kind as tickq.metrics_text reads it (tickq.metrics_kinds_at): its label value, its runs that ended by outcome (ok to skipped), merged slots, runs with a duration, their seconds, the cumulative counts per bound of metrics_buckets, the last success; lateness, stale, failure streak, running, paused and weight.';


--
-- Name: outcome; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.outcome AS ENUM (
    'running',
    'ok',
    'failed',
    'timeout',
    'interrupted',
    'lost',
    'cancelled',
    'skipped'
);


--
-- Name: TYPE outcome; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.outcome IS 'How a run ended. running: leased and not yet reported. ok: exit status 0. failed: non-zero exit or the command could not start. timeout: the watchdog killed it at the kind''s timeout. interrupted: the dispatcher was told to stop (SIGTERM/SIGINT) and stopped it; not the command''s fault, so the kind is due again at once and its failure streak is unchanged. lost: the lease expired without a report (the dispatcher was killed or lost its database).';


--
-- Name: output_tail; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.output_tail AS text
	CONSTRAINT output_tail_bounded CHECK ((char_length(VALUE) <= 65536));


--
-- Name: DOMAIN output_tail; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.output_tail IS 'job_run.output_tail: the last 64 KiB (65,536 characters) of a command''s output at most.';


--
-- Name: priority; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.priority AS ENUM (
    'urgent',
    'high',
    'normal',
    'low'
);


--
-- Name: TYPE priority; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.priority IS 'Claim order lane. urgent is claimed first, low last. Priority decides order, not whether a kind holds a slot: cadence does (see tickq.capacity).';


--
-- Name: run_attempt; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.run_attempt AS integer
	CONSTRAINT attempt_positive CHECK ((VALUE >= 1));


--
-- Name: DOMAIN run_attempt; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.run_attempt IS 'job_run.attempt: which try of its slot a run is, from 1.';


--
-- Name: run_slots; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.run_slots AS integer
	CONSTRAINT slots_not_negative CHECK ((VALUE >= 0));


--
-- Name: DOMAIN run_slots; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.run_slots IS 'job_run.slots: how many scheduled slots a run stands for, 0 or more.';


--
-- Name: run_trigger; Type: TYPE; Schema: tickq; Owner: -
--

CREATE TYPE tickq.run_trigger AS ENUM (
    'schedule',
    'retry',
    'manual'
);


--
-- Name: TYPE run_trigger; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TYPE tickq.run_trigger IS 'Why a run ran. schedule: its slot came. retry: an earlier attempt failed and retries remain. manual: a person asked for it (tickq run KIND).';


--
-- Name: slot_number; Type: DOMAIN; Schema: tickq; Owner: -
--

CREATE DOMAIN tickq.slot_number AS integer
	CONSTRAINT slot_number_positive CHECK ((VALUE >= 1));


--
-- Name: DOMAIN slot_number; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON DOMAIN tickq.slot_number IS 'slot.n: a slot''s number, from 1.';


--
-- Name: access_privileges(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.access_privileges() RETURNS TABLE(access text, privilege text, object_name text)
    LANGUAGE sql IMMUTABLE
    AS $$
    -- Functions are named without arguments: every signature of the name is granted, so a
    -- change of arguments (with its DROP of the old signature) needs no change here.
    SELECT g.access, g.privilege, o.name
    FROM (VALUES
        ('dispatcher', 'EXECUTE', ARRAY[
            -- what `tickq tick`, `run`, `sync` and `status` call (python_runner/tickq/db/queries)
            'sync_registry', 'claim_jobs', 'start_run', 'report_run', 'take_alerts',
            'housekeeping', 'capacity_total_at', 'capacity_verdict_at', 'queue_status_at',
            'stale_due_at', 'capacity_at', 'registry_problems', 'claim_manual', 'report_late_run',
            'live_leases',
            -- an operator's everyday (sql/api/11_operator.sql)
            'pause_kind', 'resume_kind', 'health_problems', 'record_tick', 'next_due_at',
            'release_dead_lease',
            -- cancel (sql/api/28_cancel.sql)
            'request_cancel', 'cancels_requested', 'registry_mirror',
            -- retired kinds, listed and forgotten (sql/api/25_queue_registry.sql)
            'retired_kinds_at', 'forget_kind', 'queue_registry_at',
            -- chains (sql/api/08_chain.sql)
            'chain_start', 'report_step',
            -- agents: the dispatcher starts them, the agent runner (given the dispatcher's URL)
            -- reads and records them, and `tickq agent` manages them
            'agent_for_kind', 'load_agent', 'record_agent_turn', 'save_agent', 'pause_agent',
            'resume_agent', 'remove_agent', 'agents_at', 'agent_next_runs', 'agent_runs',
            'agent_transcript', 'agent_run_transcript', 'agent_detail', 'agents_export',
            -- the status page (written after a tick when the registry asks), history, upcoming
            'report_header_at', 'report_dispatchers_at', 'report_timeline_at', 'report_waiting_at',
            'report_slots_at', 'report_kinds_at', 'upcoming_at', 'schedule_slots',
            'schedule_warnings',
            -- `tickq legacy import`: how late the tick runs each kind's slots, the tick that does not
            'tick_lateness', 'tick_on_time', 'on_time_tick', 'kind_history', 'run_detail',
            -- Prometheus metrics (`tickq metrics`, the registry's metrics_file, serve's /metrics)
            'metrics_text', 'explain_kind',
            -- weights and pools seen (sql/api/26_pools_seen.sql): status, the page
            'slot_occupancy_at', 'pool_occupancy_at', 'report_pools_at'
        ]),
        ('dispatcher', 'SELECT', ARRAY[
            'pool_occupancy', 'queue_status', 'stale_due', 'capacity',
            -- the migrator's bookkeeping: read to see that the schema is current, without DDL
            'migration', 'api_checksum'
        ]),
        ('reader', 'EXECUTE', ARRAY[
            -- a view calls its function with the privileges of the role that selects from it
            'queue_status_at', 'stale_due_at', 'capacity_at',
            -- the status page, history and upcoming (`tickq report`, `serve`, `history`, `upcoming`)
            'capacity_total_at', 'capacity_verdict_at', 'report_header_at',
            'report_dispatchers_at', 'report_timeline_at', 'report_waiting_at', 'report_slots_at',
            'report_kinds_at', 'upcoming_at', 'kind_history', 'run_detail', 'metrics_text',
            'explain_kind', 'slot_occupancy_at', 'pool_occupancy_at', 'report_pools_at',
            'agents_at', 'health_problems', 'retired_kinds_at', 'queue_registry_at',
            -- `tickq check` and `simulate` read the queue's agents to simulate beside the registry
            'agents_export'
        ]),
        ('reader', 'SELECT', ARRAY[
            'pool_occupancy', 'queue_status', 'stale_due', 'capacity', 'migration', 'api_checksum'
        ])
    ) AS g (access, privilege, names)
    CROSS JOIN LATERAL unnest(g.names) AS o (name)
$$;


--
-- Name: FUNCTION access_privileges(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.access_privileges() IS 'What each access (dispatcher, reader) is granted: EXECUTE on functions of schema tickq (by name, every signature) and SELECT on its views and the migrator''s bookkeeping tables. Nothing else.';


--
-- Name: agent_changed(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_now timestamptz;
BEGIN
    -- The agent functions pass their p_now down in tickq.agent_now (transaction-local); an edit
    -- in psql uses the clock.
    v_now := coalesce(nullif(current_setting('tickq.agent_now', true), '')::timestamptz, now());
    IF TG_OP = 'DELETE' THEN
        PERFORM tickq.retire_agent_kind(OLD.name, v_now);
        RETURN OLD;
    END IF;
    PERFORM tickq.apply_agent_kind(NEW, TG_OP = 'INSERT'
        OR (NEW.every, NEW.at_times, NEW.on_days, NEW.timezone, NEW.paused)
            IS DISTINCT FROM (OLD.every, OLD.at_times, OLD.on_days, OLD.timezone, OLD.paused), v_now);
    RETURN NEW;
END
$$;


--
-- Name: FUNCTION agent_changed(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_changed() IS 'Trigger: keeps the agent''s job_kind "agent.<name>" in step with the agent row (created, rescheduled, paused, retired when the agent is deleted).';


--
-- Name: agent_detail(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_detail(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(id bigint, name text, schedule text, state text, max_turns integer, timeout_s integer, owner text, tools text[], next_due_at timestamp with time zone, last_outcome tickq.outcome, last_finished_at timestamp with time zone, prompt text, timezone text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT a.id, a.name, a.schedule, a.state, a.max_turns, extract(EPOCH FROM a.timeout)::integer,
        a.owner, a.tools, a.next_due_at, a.last_outcome, a.last_finished_at, g.prompt, g.timezone
    FROM tickq.agents_at(p_now) AS a
    INNER JOIN tickq.agent AS g ON a.id = g.id
    WHERE a.name = p_name
$$;


--
-- Name: FUNCTION agent_detail(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_detail(p_name text, p_now timestamp with time zone) IS 'One agent as tickq agent show prints it: the list''s columns, its prompt and its zone.';


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: agent; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.agent (
    id bigint NOT NULL,
    name text NOT NULL,
    prompt text NOT NULL,
    every interval,
    at_times time without time zone[],
    on_days smallint[],
    timezone text DEFAULT 'UTC'::text NOT NULL,
    max_turns integer DEFAULT 6 NOT NULL,
    timeout interval DEFAULT '00:10:00'::interval NOT NULL,
    owner text,
    tools text[] DEFAULT '{}'::text[] NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    days smallint[],
    months smallint[],
    cron text
);


--
-- Name: TABLE agent; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.agent IS 'One row per user-built agent: a prompt (data the agent runner reads, never a command), a schedule (every, or at_times/on_days in timezone), its turn and time limits within the caps of tickq.agent_settings, an owner label and the registry tools it may use. Its queue row is the job_kind "agent.<name>", created, rescheduled, paused and retired by triggers on this table.';


--
-- Name: COLUMN agent.days; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.agent.days IS 'Days of the month of an at schedule (1..31, -1..-31 from the month''s end), as job_kind.days.';


--
-- Name: COLUMN agent.months; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.agent.months IS 'Months of an at schedule (1..12), as job_kind.months.';


--
-- Name: COLUMN agent.cron; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.agent.cron IS 'A five-field cron string (or an @ form) in timezone, as job_kind.cron.';


--
-- Name: agent_entry(tickq.agent); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_entry(p_agent tickq.agent) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- An agent as the fields tickq.save_agent takes (the schedule as tickq.parse_schedule reads it).
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'prompt', p_agent.prompt,
        'every', extract(EPOCH FROM p_agent.every)::bigint,
        'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI') ORDER BY t.at_time)
            FROM unnest(p_agent.at_times) AS t (at_time)),
        'on', (SELECT jsonb_agg(tickq.weekday_name(d.day) ORDER BY d.day) FROM unnest(p_agent.on_days) AS d (day)),
        'days', (SELECT jsonb_agg(d.day ORDER BY d.day) FROM unnest(p_agent.days) AS d (day)),
        'months', (SELECT jsonb_agg(m.month ORDER BY m.month) FROM unnest(p_agent.months) AS m (month)),
        'cron', p_agent.cron,
        'timezone', CASE WHEN p_agent.every IS NULL THEN p_agent.timezone END,
        'max_turns', p_agent.max_turns,
        'timeout', extract(EPOCH FROM p_agent.timeout)::bigint,
        'paused', p_agent.paused
    ))
$$;


--
-- Name: FUNCTION agent_entry(p_agent tickq.agent); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_entry(p_agent tickq.agent) IS 'An agent as the JSON fields tickq.save_agent takes: prompt, every, or at with on, days and months, or cron, with timezone; max_turns, timeout, paused.';


--
-- Name: agent_error(text, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_error(p_name text, p_field text, p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'agent %: %: %', coalesce(quote_literal(left(p_name, 80)), 'null'), p_field, p_message
        USING ERRCODE = 'TQ040', DETAIL = format('field %s of tickq.agent', p_field),
        HINT = 'Nothing was changed; tickq agent add --help lists the limits.';
END
$$;


--
-- Name: FUNCTION agent_error(p_name text, p_field text, p_message text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_error(p_name text, p_field text, p_message text) IS 'Raises TQ040 naming the agent, the field and the refused value.';


--
-- Name: agent_for_kind(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_for_kind(p_kind text) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT a.id FROM tickq.agent AS a WHERE 'agent.' || a.name = p_kind;
$$;


--
-- Name: FUNCTION agent_for_kind(p_kind text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_for_kind(p_kind text) IS 'The id of the agent that owns the kind p_kind ("agent.<name>"), or null. The dispatcher passes this id, and nothing else of the agent, to the registry''s agent runner.';


--
-- Name: agent_json_seconds(text, text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_json_seconds(p_name text, p_field text, p_value jsonb) RETURNS interval
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'number' OR (p_value #>> '{}')::numeric <= 0
        OR (p_value #>> '{}')::numeric > 2147483647 THEN
        PERFORM tickq.agent_error(p_name, p_field,
            format('must be a positive number of seconds, got %s', coalesce(left(p_value::text, 80), 'nothing')));
    END IF;
    RETURN make_interval(secs => (p_value #>> '{}')::double precision);
END
$$;


--
-- Name: FUNCTION agent_json_seconds(p_name text, p_field text, p_value jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_json_seconds(p_name text, p_field text, p_value jsonb) IS 'Internal: a JSON duration field of save_agent (seconds) as an interval, or TQ040 naming the field.';


--
-- Name: agent_json_text(text, text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_json_text(p_name text, p_field text, p_value jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_value) <> 'string' THEN
        PERFORM tickq.agent_error(p_name, p_field, format('must be a string, got %s', left(p_value::text, 80)));
    END IF;
    RETURN p_value #>> '{}';
END
$$;


--
-- Name: FUNCTION agent_json_text(p_name text, p_field text, p_value jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_json_text(p_name text, p_field text, p_value jsonb) IS 'Internal: a JSON string field of save_agent as text (null for null), or TQ040 naming the field.';


--
-- Name: agent_next_runs(text, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_next_runs(p_name text, p_count integer DEFAULT 5, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_at timestamp with time zone, local_time timestamp without time zone, timezone text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    v_agent tickq.agent;
    v_at timestamptz := p_now;
    v_found integer := 0;
BEGIN
    SELECT * INTO v_agent FROM tickq.agent AS a WHERE a.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent %', quote_literal(p_name) USING ERRCODE = 'TQ041',
            HINT = 'tickq agent list shows the agents.';
    END IF;
    WHILE v_found < least(p_count, 100) LOOP
        v_at := tickq.next_slot(v_agent.every, NULL, v_agent.at_times, v_agent.on_days, v_agent.days, v_agent.months,
            v_agent.cron, v_agent.timezone, v_at);
        EXIT WHEN v_at IS NULL;
        v_found := v_found + 1;
        run_at := v_at;
        local_time := v_at AT TIME ZONE v_agent.timezone;
        timezone := v_agent.timezone;
        RETURN NEXT;
    END LOOP;
END
$$;


--
-- Name: FUNCTION agent_next_runs(p_name text, p_count integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_next_runs(p_name text, p_count integer, p_now timestamp with time zone) IS 'The next p_count slots of an agent after p_now, as instants and as wall-clock times in the agent''s own zone (tickq agent show). TQ041 for an unknown agent.';


--
-- Name: agent_run_transcript(text, bigint, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_run_transcript(p_name text, p_run_id bigint, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(turn integer, recorded_at timestamp with time zone, entry jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Only a run of that agent: a run id of another kind shows nothing.
    SELECT t.turn, t.recorded_at, t.entry
    FROM tickq.agent_transcript(p_run_id, p_now) AS t
    WHERE EXISTS (SELECT FROM tickq.job_run AS r WHERE r.id = p_run_id AND r.kind = 'agent.' || p_name)
$$;


--
-- Name: FUNCTION agent_run_transcript(p_name text, p_run_id bigint, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_run_transcript(p_name text, p_run_id bigint, p_now timestamp with time zone) IS 'The transcript of run p_run_id if it is a run of agent p_name (tickq agent history NAME --run ID).';


--
-- Name: agent_runs(text, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_runs(p_name text, p_limit integer DEFAULT 20, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, run_trigger tickq.run_trigger, attempt integer, claimed_at timestamp with time zone, outcome tickq.outcome, duration interval, turns integer, output_tail text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT r.id, r.run_trigger, r.attempt, r.claimed_at, r.outcome, r.duration,
        (SELECT count(*)::integer FROM tickq.agent_turn AS t WHERE t.run_id = r.id),
        r.output_tail
    FROM tickq.job_run AS r
    WHERE r.kind = 'agent.' || p_name AND r.claimed_at <= p_now
    ORDER BY r.id DESC
    LIMIT p_limit
$$;


--
-- Name: FUNCTION agent_runs(p_name text, p_limit integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_runs(p_name text, p_limit integer, p_now timestamp with time zone) IS 'The latest runs of an agent (also of a removed one, by name), newest first, with their turn counts (tickq agent history).';


--
-- Name: agent_schedule(tickq.agent, boolean, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_schedule(p_agent tickq.agent, p_exists boolean, p_fields jsonb) RETURNS tickq.agent
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_agent tickq.agent := p_agent;
    v_item jsonb;
    v_schedule tickq.job_kind;
    v_message text;
    v_key text;
BEGIN
    -- The schedule: the fields given over the agent's own (an edit names only what changes),
    -- judged by the parser registry kinds use (tickq.parse_schedule).
    IF p_fields ?| ARRAY['every', 'at', 'on', 'days', 'months', 'cron', 'timezone'] THEN
        v_item := jsonb_strip_nulls(p_fields - ARRAY['prompt', 'max_turns', 'timeout', 'owner', 'tools', 'paused']);
        IF p_exists AND NOT v_item ?| ARRAY['every', 'at', 'cron'] THEN
            v_item := v_item || CASE WHEN p_agent.every IS NOT NULL
                THEN jsonb_build_object('every', extract(EPOCH FROM p_agent.every)::bigint)
                WHEN p_agent.cron IS NOT NULL THEN jsonb_build_object('cron', p_agent.cron)
                ELSE jsonb_build_object('at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI') ORDER BY t.at_time)
                    FROM unnest(p_agent.at_times) AS t (at_time))) END;
        END IF;
        -- An at schedule keeps its day filters and its zone unless they are given, a cron string
        -- its zone: the agent's own canonical entry (tickq.agent_entry) under what the edit says.
        IF p_exists AND NOT v_item ? 'every' AND (v_item ? 'cron') = (p_agent.cron IS NOT NULL) THEN
            v_item := (tickq.agent_entry(p_agent) - ARRAY['prompt', 'every', 'at', 'cron', 'max_turns', 'timeout',
                'paused'] - CASE WHEN v_item ? 'cron' THEN ARRAY['on', 'days', 'months'] ELSE '{}' END) || v_item;
        END IF;
        BEGIN
            v_schedule := tickq.parse_schedule(p_agent.name, v_item, (SELECT s.timezone FROM tickq.settings AS s));
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
            PERFORM tickq.agent_error(p_agent.name, v_key, tickq.registry_problem(v_message, p_agent.name, v_key));
        END;
        v_agent.every := v_schedule.every;
        v_agent.at_times := v_schedule.at_times;
        v_agent.on_days := v_schedule.on_days;
        v_agent.days := v_schedule.days;
        v_agent.months := v_schedule.months;
        v_agent.cron := v_schedule.cron;
        v_agent.timezone := v_schedule.timezone;
    END IF;
    RETURN v_agent;
END
$$;


--
-- Name: FUNCTION agent_schedule(p_agent tickq.agent, p_exists boolean, p_fields jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_schedule(p_agent tickq.agent, p_exists boolean, p_fields jsonb) IS 'Internal: p_agent with the schedule fields of save_agent (every, at, on, days, months, cron, timezone) applied over its own, judged by tickq.parse_schedule; TQ040 naming the field.';


--
-- Name: agent_transcript(bigint, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_transcript(p_run_id bigint, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(turn integer, recorded_at timestamp with time zone, entry jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT t.turn, t.recorded_at, t.entry FROM tickq.agent_turn AS t
    WHERE t.run_id = p_run_id AND t.recorded_at <= p_now
    ORDER BY t.turn
$$;


--
-- Name: FUNCTION agent_transcript(p_run_id bigint, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_transcript(p_run_id bigint, p_now timestamp with time zone) IS 'The transcript of one agent run, turn by turn (tickq agent history NAME --run ID).';


--
-- Name: agent_with_fields(tickq.agent, boolean, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agent_with_fields(p_agent tickq.agent, p_exists boolean, p_fields jsonb) RETURNS tickq.agent
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_agent tickq.agent := p_agent;
    v_item jsonb;
BEGIN
    IF p_fields ? 'prompt' THEN
        v_agent.prompt := tickq.agent_json_text(p_agent.name, 'prompt', p_fields -> 'prompt');
    END IF;
    v_agent := tickq.agent_schedule(v_agent, p_exists, p_fields);
    IF p_fields ? 'max_turns' THEN
        v_item := p_fields -> 'max_turns';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 1
                AND (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l)
            OR (v_item #>> '{}')::numeric <> trunc((v_item #>> '{}')::numeric) THEN
            PERFORM tickq.agent_error(p_agent.name, 'max_turns',
                format('turns must be a whole number from 1 to %s, got %s',
                    (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l), left(v_item::text, 80)));
        END IF;
        v_agent.max_turns := (v_item #>> '{}')::integer;
    END IF;
    IF p_fields ? 'timeout' THEN
        v_agent.timeout := tickq.agent_json_seconds(p_agent.name, 'timeout', p_fields -> 'timeout');
    END IF;
    IF p_fields ? 'owner' THEN
        v_agent.owner := tickq.agent_json_text(p_agent.name, 'owner', p_fields -> 'owner');
    END IF;
    IF p_fields ? 'tools' THEN
        v_item := p_fields -> 'tools';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array'
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t) WHERE jsonb_typeof(e.t) <> 'string') THEN
            PERFORM tickq.agent_error(p_agent.name, 'tools',
                format('must be a list of tool names, got %s', left(v_item::text, 80)));
        END IF;
        v_agent.tools := ARRAY(SELECT e.t FROM jsonb_array_elements_text(v_item) AS e (t));
    END IF;
    IF p_fields ? 'paused' THEN
        IF jsonb_typeof(p_fields -> 'paused') IS DISTINCT FROM 'boolean' THEN
            PERFORM tickq.agent_error(p_agent.name, 'paused', 'must be true or false');
        END IF;
        v_agent.paused := (p_fields ->> 'paused')::boolean;
    END IF;

    RETURN v_agent;
END
$$;


--
-- Name: FUNCTION agent_with_fields(p_agent tickq.agent, p_exists boolean, p_fields jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agent_with_fields(p_agent tickq.agent, p_exists boolean, p_fields jsonb) IS 'Internal: p_agent with the JSON fields of save_agent applied (prompt, schedule, max_turns, timeout, owner, tools, paused), each judged; TQ040 naming the field and the value.';


--
-- Name: agents_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agents_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(id bigint, name text, schedule text, state text, max_turns integer, timeout interval, owner text, tools text[], next_due_at timestamp with time zone, last_outcome tickq.outcome, last_finished_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT a.id, a.name,
        tickq.describe_schedule(a.every, NULL, a.at_times, a.on_days, a.days, a.months, a.cron, a.timezone, p_now),
        CASE WHEN a.paused THEN 'paused' WHEN k.run_id IS NOT NULL THEN 'running' ELSE 'scheduled' END,
        a.max_turns, a.timeout, a.owner, a.tools,
        CASE WHEN k.enabled THEN k.due_at END,
        r.outcome, r.finished_at
    FROM tickq.agent AS a
    LEFT JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name
    LEFT JOIN tickq.job_run AS r ON r.id = k.last_run_id
    ORDER BY a.name
$$;


--
-- Name: FUNCTION agents_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agents_at(p_now timestamp with time zone) IS 'Every agent with its schedule, state (paused, running, scheduled), limits, next due time and last outcome (tickq agent list).';


--
-- Name: agents_export(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agents_export() RETURNS TABLE(name text, fields jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- What tickq.save_agent takes, per agent: `check` and `simulate` load the queue's agents
    -- into their scratch database with it, so agents take slots there too.
    SELECT a.name, tickq.agent_entry(a)
    FROM tickq.agent AS a
    ORDER BY a.name
$$;


--
-- Name: FUNCTION agents_export(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agents_export() IS 'Every agent''s saved fields as tickq.save_agent takes them (for the simulator''s scratch queue).';


--
-- Name: agents_problems(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.agents_problems(p_agents jsonb) RETURNS TABLE(key text, problem text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_key text;
    v_message text;
    v_column text;
BEGIN
    -- Each key on its own, so that one answer names every key at fault.
    IF jsonb_typeof(p_agents) <> 'object' THEN
        RETURN QUERY SELECT 'agents'::text, 'must be a table'::text;
        RETURN;
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_agents) ORDER BY 1 LOOP
        BEGIN
            PERFORM tickq.parse_agents(jsonb_build_object(v_key, p_agents -> v_key));
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_column = COLUMN_NAME;
            RETURN QUERY SELECT v_column, tickq.registry_problem(v_message, NULL, v_column);
        END;
    END LOOP;
END
$$;


--
-- Name: FUNCTION agents_problems(p_agents jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.agents_problems(p_agents jsonb) IS 'Every key of the registry''s "agents" object that tickq.parse_agents refuses, with what is wrong (for tickq.registry_problems); changes nothing.';


--
-- Name: apply_agent_kind(tickq.agent, boolean, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.apply_agent_kind(p_agent tickq.agent, p_reschedule boolean, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_caps tickq.agent_settings;
    v_kind tickq.job_kind;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    v_kind.name := 'agent.' || p_agent.name;
    IF EXISTS (SELECT FROM tickq.job_kind AS k
        WHERE k.name = v_kind.name AND NOT k.registry ? 'agent' AND k.retired_at IS NULL) THEN
        PERFORM tickq.agent_error(p_agent.name, 'name',
            format('the registry already has a kind named %s', quote_literal(v_kind.name)));
    END IF;
    -- A mirror for psql readers; the command of an agent run comes from the registry file.
    v_kind.registry := jsonb_strip_nulls(jsonb_build_object('agent', p_agent.id, 'owner', p_agent.owner));
    v_kind.every := p_agent.every;
    v_kind.at_times := p_agent.at_times;
    v_kind.on_days := p_agent.on_days;
    v_kind.days := p_agent.days;
    v_kind.months := p_agent.months;
    v_kind.cron := p_agent.cron;
    v_kind.timezone := p_agent.timezone;
    -- The registry may have lowered its cap since the agent was saved: the lower one holds.
    v_kind.timeout := least(p_agent.timeout, v_caps.max_timeout);
    v_kind.priority := v_caps.priority;
    v_kind.retries := v_caps.retries;
    v_kind.weight := v_caps.weight;
    v_kind.enabled := NOT p_agent.paused;
    v_kind.irreversible := false;
    -- The lease must cover the new timeout before the kind carries it (checked at commit).
    UPDATE tickq.settings AS s SET lease = v_kind.timeout + s.lease_margin
    WHERE s.lease < v_kind.timeout + s.lease_margin;
    PERFORM tickq.write_kind(v_kind, p_reschedule, false, p_now);
END
$$;


--
-- Name: FUNCTION apply_agent_kind(p_agent tickq.agent, p_reschedule boolean, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.apply_agent_kind(p_agent tickq.agent, p_reschedule boolean, p_now timestamp with time zone) IS 'Internal: creates or updates the job_kind "agent.<name>" of an agent (schedule, timeout within the registry''s cap, the agents'' lane and retries, enabled unless paused) through tickq.write_kind, raising the lease when the timeout needs it; p_reschedule moves it to its next slot after p_now.';


--
-- Name: job_run; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.job_run (
    id bigint NOT NULL,
    kind text NOT NULL,
    attempt tickq.run_attempt NOT NULL,
    run_trigger tickq.run_trigger NOT NULL,
    slots tickq.run_slots DEFAULT 0 NOT NULL,
    dispatcher text NOT NULL,
    claimed_at timestamp with time zone NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    outcome tickq.outcome DEFAULT 'running'::tickq.outcome NOT NULL,
    exit_code integer,
    output_tail tickq.output_tail,
    duration interval,
    due_at timestamp with time zone,
    slot integer,
    late_report_at timestamp with time zone,
    run_by text,
    cancel_requested_at timestamp with time zone,
    cancel_by text,
    cancel_role text,
    cancel_reason text,
    slot_at timestamp with time zone,
    first_slot_at timestamp with time zone,
    slots_covered integer DEFAULT 0 NOT NULL,
    weight integer DEFAULT 1 NOT NULL,
    pools text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT finished_unless_running CHECK (((outcome = 'running'::tickq.outcome) = (finished_at IS NULL))),
    CONSTRAINT run_cancel_reason_short CHECK ((length(cancel_reason) <= 500))
)
WITH (fillfactor='90');


--
-- Name: TABLE job_run; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.job_run IS 'One row per run. slots is how many scheduled slots a schedule run stands for: more than 1 when slots missed while the machine slept were merged into this run; 0 for retries and manual runs.';


--
-- Name: COLUMN job_run.output_tail; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.output_tail IS 'The last 64 KiB of stdout and stderr together; invalid UTF-8 replaced.';


--
-- Name: COLUMN job_run.due_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.due_at IS 'When the kind was due for this run; claimed_at - due_at is how long it waited for a slot.';


--
-- Name: COLUMN job_run.slot; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.slot IS 'The slot (tickq.slot.n) the run held while it ran; null for runs that ended before tickq recorded it.';


--
-- Name: COLUMN job_run.late_report_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.late_report_at IS 'When the run''s real result arrived after its lease had expired (tickq.report_late_run, from a dispatcher''s spool); null for a result reported in time.';


--
-- Name: COLUMN job_run.run_by; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.run_by IS 'The person (OS user) who started a manual run from a terminal and confirmed it; null otherwise.';


--
-- Name: COLUMN job_run.cancel_requested_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.cancel_requested_at IS 'When tickq.request_cancel asked this run''s dispatcher to stop it (NULL: never asked).';


--
-- Name: COLUMN job_run.cancel_by; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.cancel_by IS 'Who asked for the cancel, as tickq.asked_by wrote it: the session''s role (and how the server authenticated it, when that names someone else), then what the client claims (the OS user and host of `tickq cancel`), labelled as a claim.';


--
-- Name: COLUMN job_run.cancel_role; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.cancel_role IS 'The database role (session_user) that asked for the cancel.';


--
-- Name: COLUMN job_run.cancel_reason; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.cancel_reason IS 'Why the cancel was asked (--reason), at most 500 characters.';


--
-- Name: COLUMN job_run.slot_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.slot_at IS 'The latest scheduled slot this run covers (its command''s TICKQ_SLOT): of a schedule run, the last slot merged into it; of a retry, that of the run it retries; NULL for a manual run.';


--
-- Name: COLUMN job_run.first_slot_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.first_slot_at IS 'The earliest scheduled slot this run covers (TICKQ_FIRST_SLOT): the kind''s due time for a schedule run, that of the run it retries for a retry; NULL for a manual run.';


--
-- Name: COLUMN job_run.slots_covered; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.slots_covered IS 'How many scheduled slots this run covers (TICKQ_SLOTS): slots for a schedule run, the retried run''s for a retry (whose slots is 0: it takes no slot of its own), 0 for a manual run.';


--
-- Name: COLUMN job_run.weight; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.weight IS 'How many global slot rows the run held (its kind''s weight when claimed).';


--
-- Name: COLUMN job_run.pools; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_run.pools IS 'The pools the run held one slot of (its kind''s pools when claimed).';


--
-- Name: arm_kind(tickq.job_run, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.arm_kind(p_run tickq.job_run, p_now timestamp with time zone DEFAULT now()) RETURNS void
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


--
-- Name: FUNCTION arm_kind(p_run tickq.job_run, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.arm_kind(p_run tickq.job_run, p_now timestamp with time zone) IS 'Internal: arms the irreversible kind of a successful manual run a person started, if it is unarmed and the run ran its current command.';


--
-- Name: asked_by(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.asked_by(p_claimed text) RETURNS text
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


--
-- Name: FUNCTION asked_by(p_claimed text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.asked_by(p_claimed text) IS 'Internal: who is asking, as the database knows it: the session''s role (session_user, which neither SET ROLE nor a SECURITY DEFINER function changes), how the server authenticated it when that names someone else (PostgreSQL 16 and later), then p_claimed (what the client says: its OS user and host) labelled as a claim, control characters replaced and cut to 200 characters. Reads no session state, so it holds through a transaction pooler.';


--
-- Name: calendar_count(tickq.calendar, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_count(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_day date := (p_since AT TIME ZONE p_calendar.timezone)::date - 1;
    v_last date := (p_now AT TIME ZONE p_calendar.timezone)::date + 1;
    v_count integer := 0;
BEGIN
    -- At most 100,000 (a minutely cron asleep for months counts no further).
    WHILE v_day <= v_last AND v_count < 100000 LOOP
        IF tickq.calendar_day(p_calendar, v_day) THEN
            v_count := v_count + (SELECT count(*)::integer FROM tickq.calendar_day_slots(p_calendar, v_day) AS s (slot)
                WHERE s.slot > p_since AND s.slot <= p_now);
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN least(v_count, 100000);
END
$$;


--
-- Name: FUNCTION calendar_count(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_count(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone) IS 'How many slots of a calendar fall in (p_since, p_now], at most 100,000.';


--
-- Name: calendar_day(tickq.calendar, date); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_day(p_calendar tickq.calendar, p_day date) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    -- Simple expressions only (no query), so a walk over many days stays cheap.
    v_dom integer := extract(DAY FROM p_day)::integer;
    v_dow integer := extract(ISODOW FROM p_day)::integer;
    v_dim integer := extract(DAY FROM date_trunc('month', p_day) + interval '1 month - 1 day')::integer;
    v_day_ok boolean;
    v_weekday_ok boolean;
BEGIN
    -- days: 1..31, or -1 (the last day) .. -31 from the month's end; weekdays: ISO 1..7, nth
    -- 10 * n + weekday, last 90 + weekday. Filters combine with AND (cron's either: days OR
    -- weekdays).
    IF p_calendar.months IS NOT NULL AND NOT extract(MONTH FROM p_day)::smallint = ANY(p_calendar.months) THEN
        RETURN false;
    END IF;
    v_day_ok := p_calendar.days IS NULL OR v_dom = ANY(p_calendar.days) OR v_dom - v_dim - 1 = ANY(p_calendar.days);
    v_weekday_ok := p_calendar.weekdays IS NULL OR v_dow = ANY(p_calendar.weekdays)
        OR 10 * ((v_dom - 1) / 7 + 1) + v_dow = ANY(p_calendar.weekdays)
        OR (v_dom + 7 > v_dim AND 90 + v_dow = ANY(p_calendar.weekdays));
    RETURN CASE WHEN p_calendar.either THEN v_day_ok OR v_weekday_ok ELSE v_day_ok AND v_weekday_ok END;
END
$$;


--
-- Name: FUNCTION calendar_day(p_calendar tickq.calendar, p_day date); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_day(p_calendar tickq.calendar, p_day date) IS 'True when the local date p_day is a day of the calendar (months, days of the month, weekdays, nth and last weekdays; cron''s OR rule).';


--
-- Name: calendar_day_first(tickq.calendar, date, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_day_first(p_calendar tickq.calendar, p_day date, p_after timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_zone text := p_calendar.timezone;
    -- one offset from the day before to the day after: wall times map to instants in order
    v_steady boolean := v_zone = 'UTC' OR ((p_day - 1)::timestamp AT TIME ZONE 'UTC' AT TIME ZONE v_zone)
        - (p_day - 1)::timestamp = ((p_day + 2)::timestamp AT TIME ZONE 'UTC' AT TIME ZONE v_zone) - (p_day + 2)::timestamp;
    v_floor timestamp := (p_after AT TIME ZONE v_zone) - CASE WHEN v_steady THEN interval '0' ELSE interval '3 hours' END;
    v_best timestamptz;
    v_wall timestamp;
    v_later timestamptz;
    v_time time;
    v_hour smallint;
    v_minute smallint;
BEGIN
    -- tickq.calendar_day_slots' rule, walked in wall-clock order with simple expressions only,
    -- from three hours of wall time before p_after to three past the first slot found (no
    -- clock change moves a slot further), so a minutely cron costs a few steps, not a day's
    -- 1,440; around a day whose zone keeps its offset (most days), from p_after to the first
    -- slot found: wall times are instants in the same order.
    IF p_calendar.times IS NOT NULL THEN
        FOREACH v_time IN ARRAY p_calendar.times LOOP
            v_later := (p_day + v_time) AT TIME ZONE v_zone;
            IF v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
            END IF;
        END LOOP;
        RETURN v_best;
    END IF;
    <<hours>>
    FOREACH v_hour IN ARRAY p_calendar.hours LOOP
        CONTINUE WHEN p_day + make_time(v_hour, 59, 0) < v_floor;  -- the whole hour before the floor
        FOREACH v_minute IN ARRAY p_calendar.minutes LOOP
            v_wall := p_day + make_time(v_hour, v_minute, 0);
            CONTINUE WHEN v_wall < v_floor;
            EXIT hours WHEN v_best IS NOT NULL AND v_wall > (v_best AT TIME ZONE v_zone) + interval '3 hours';
            v_later := v_wall AT TIME ZONE v_zone;
            IF v_later AT TIME ZONE v_zone = v_wall AND v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
                EXIT hours WHEN v_steady;
            END IF;
            CONTINUE WHEN v_steady;
            -- the first occurrence of a repeated wall time, read with the offset of a day before
            v_later := (v_wall - ((v_later - interval '1 day') AT TIME ZONE v_zone
                - (v_later - interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC';
            IF v_later AT TIME ZONE v_zone = v_wall AND v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
            END IF;
        END LOOP;
    END LOOP;
    RETURN v_best;
END
$$;


--
-- Name: FUNCTION calendar_day_first(p_calendar tickq.calendar, p_day date, p_after timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_day_first(p_calendar tickq.calendar, p_day date, p_after timestamp with time zone) IS 'The first slot of the local date p_day strictly after p_after (the day not judged against the day filters), by tickq.calendar_day_slots'' rule; NULL when none.';


--
-- Name: calendar_day_slots(tickq.calendar, date); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_day_slots(p_calendar tickq.calendar, p_day date) RETURNS SETOF timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    -- Wall-clock times: each maps to one instant (PostgreSQL reads a time in a gap with the
    -- offset before it, an ambiguous one with the offset after it).
    SELECT (p_day + t.at_time) AT TIME ZONE p_calendar.timezone
    FROM unnest(p_calendar.times) AS t (at_time)
    UNION
    -- Real time: the instants whose local time is the wall time, with the offset after a change
    -- and the one a day before it (both when the hour repeats, none when it is skipped).
    SELECT c.at
    FROM unnest(p_calendar.hours) AS h (hour)
    CROSS JOIN unnest(p_calendar.minutes) AS m (minute)
    CROSS JOIN LATERAL (SELECT p_day + make_time(h.hour, m.minute, 0) AS wall) AS w
    CROSS JOIN LATERAL (SELECT w.wall AT TIME ZONE p_calendar.timezone AS later) AS l
    CROSS JOIN LATERAL (VALUES (l.later), ((w.wall - ((l.later - interval '1 day') AT TIME ZONE p_calendar.timezone
        - (l.later - interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC')) AS c (at)
    WHERE c.at AT TIME ZONE p_calendar.timezone = w.wall
$$;


--
-- Name: FUNCTION calendar_day_slots(p_calendar tickq.calendar, p_day date); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_day_slots(p_calendar tickq.calendar, p_day date) IS 'The slots of the local date p_day (not judged against the day filters): wall-clock times by tickq''s daylight-saving rule, real-time minutes and hours as they occur.';


--
-- Name: calendar_last(tickq.calendar, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_last(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_day date := (p_now AT TIME ZONE p_calendar.timezone)::date + 1;
    v_first date := (p_since AT TIME ZONE p_calendar.timezone)::date - 1;
    v_slot timestamptz;
BEGIN
    -- Walked back from p_now's local day: the latest slot is on the first day that has one.
    WHILE v_day >= v_first LOOP
        IF tickq.calendar_day(p_calendar, v_day) THEN
            v_slot := (SELECT max(s.slot) FROM tickq.calendar_day_slots(p_calendar, v_day) AS s (slot)
                WHERE s.slot > p_since AND s.slot <= p_now);
            IF v_slot IS NOT NULL THEN
                RETURN v_slot;
            END IF;
        END IF;
        v_day := v_day - 1;
    END LOOP;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION calendar_last(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_last(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone) IS 'The latest slot of a calendar in (p_since, p_now], or NULL when none.';


--
-- Name: calendar_next(tickq.calendar, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_next(p_calendar tickq.calendar, p_after timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    -- From the local day before (a gap at midnight can move a slot across a date) through 56
    -- years ahead: the longest a valid calendar waits is a Monday the 29th of February (40 years
    -- around 2100).
    v_day date := (p_after AT TIME ZONE p_calendar.timezone)::date - 1;
    v_last date := v_day + 20455;
    v_slot timestamptz;
    v_dom integer;
    v_dow integer;
    v_dim integer;
    v_day_ok boolean;
    v_weekday_ok boolean;
BEGIN
    WHILE v_day <= v_last LOOP
        IF p_calendar.months IS NOT NULL AND NOT extract(MONTH FROM v_day)::smallint = ANY(p_calendar.months) THEN
            -- a month the calendar does not take: on to the next month's first day
            v_day := (date_trunc('month', v_day) + interval '1 month')::date;
            CONTINUE;
        END IF;
        -- tickq.calendar_day, inline: a call per day would cost more than the rest of the walk.
        v_dom := extract(DAY FROM v_day)::integer;
        v_dow := extract(ISODOW FROM v_day)::integer;
        v_dim := extract(DAY FROM date_trunc('month', v_day) + interval '1 month - 1 day')::integer;
        v_day_ok := p_calendar.days IS NULL OR v_dom = ANY(p_calendar.days)
            OR v_dom - v_dim - 1 = ANY(p_calendar.days);
        v_weekday_ok := p_calendar.weekdays IS NULL OR v_dow = ANY(p_calendar.weekdays)
            OR 10 * ((v_dom - 1) / 7 + 1) + v_dow = ANY(p_calendar.weekdays)
            OR (v_dom + 7 > v_dim AND 90 + v_dow = ANY(p_calendar.weekdays));
        IF (p_calendar.either AND (v_day_ok OR v_weekday_ok)) OR (v_day_ok AND v_weekday_ok) THEN
            v_slot := tickq.calendar_day_first(p_calendar, v_day, p_after);
            IF v_slot IS NOT NULL THEN
                RETURN v_slot;
            END IF;
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION calendar_next(p_calendar tickq.calendar, p_after timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_next(p_calendar tickq.calendar, p_after timestamp with time zone) IS 'The first slot of a calendar strictly after p_after, or NULL when none falls within 56 years.';


--
-- Name: calendar_of(time without time zone[], smallint[], smallint[], smallint[], text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_of(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text) RETURNS tickq.calendar
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_cron IS NOT NULL THEN tickq.cron_calendar(p_cron, p_timezone)
        ELSE ROW(p_at_times, NULL, NULL, p_on_days, p_days, p_months, false, p_timezone)::tickq.calendar END
$$;


--
-- Name: FUNCTION calendar_of(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_of(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text) IS 'A kind''s schedule columns (at_times, on_days, days, months, or cron) as one tickq.calendar.';


--
-- Name: calendar_slots_in(time without time zone[], smallint[], text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS SETOF timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT tickq.calendar_slots_in(p_at_times, p_on_days, NULL, NULL, NULL, p_timezone, p_until, p_now)
$$;


--
-- Name: FUNCTION calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone) IS 'tickq.calendar_slots_in for at times and weekdays alone.';


--
-- Name: calendar_slots_in(time without time zone[], smallint[], smallint[], smallint[], text, text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS SETOF timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    -- Walked with next_slot, which owns the calendar and its daylight-saving rules.
    WITH RECURSIVE walk (slot) AS (
        SELECT tickq.next_slot(NULL, NULL, p_at_times, p_on_days, p_days, p_months, p_cron, p_timezone,
            p_now - interval '1 microsecond')
        UNION ALL
        SELECT tickq.next_slot(NULL, NULL, p_at_times, p_on_days, p_days, p_months, p_cron, p_timezone, w.slot)
        FROM walk AS w
        WHERE w.slot < p_until
    )
    SELECT w.slot FROM walk AS w WHERE w.slot < p_until
$$;


--
-- Name: FUNCTION calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone) IS 'Every slot of a calendar schedule (at times with their day filters, or a cron string) from p_now (included) until p_until (excluded).';


--
-- Name: cancels_requested(text, bigint[], timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.cancels_requested(p_dispatcher text, p_run_ids bigint[], p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, cancel_by text, cancel_reason text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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


--
-- Name: FUNCTION cancels_requested(p_dispatcher text, p_run_ids bigint[], p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.cancels_requested(p_dispatcher text, p_run_ids bigint[], p_now timestamp with time zone) IS 'The runs among p_run_ids, live and leased by p_dispatcher, whose cancel was asked (with who and why); records that the dispatcher asked (tickq.dispatcher_poll), which is how tickq.request_cancel knows it is alive.';


--
-- Name: capacity_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.capacity_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, schedule text, runs_per_tick numeric, expected_duration interval, duration_source text, slot_share numeric)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT
        k.name,
        k.priority,
        tickq.describe_schedule(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, p_now),
        round(d.runs_per_tick, 4),
        e.expected,
        e.source,
        -- A kind never runs twice at once, so it never keeps more than one run going; each run
        -- holds its weight in slots.
        round(k.weight * least(1, d.runs_per_tick * extract(EPOCH FROM e.expected) / extract(EPOCH FROM s.tick)), 4)
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    CROSS JOIN LATERAL (
        SELECT CASE WHEN k.every IS NULL THEN tickq.slots_between(k.every, k.every_offset, k.at_times, k.on_days,
            k.days, k.months, k.cron, k.timezone, p_now, p_now + interval '7 days') END AS week
    ) AS w
    CROSS JOIN LATERAL (
        SELECT CASE
            -- A cadence at or below the tick asks for one run every tick; a slower one for
            -- tick / cadence.
            WHEN k.every IS NOT NULL THEN least(1, extract(EPOCH FROM s.tick) / extract(EPOCH FROM k.every))
            -- A calendar schedule: its slots per week spread over the week's ticks.
            WHEN k.cron IS NULL AND k.days IS NULL AND k.months IS NULL AND k.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]
                IS NOT false
                THEN cardinality(k.at_times) * coalesce(cardinality(k.on_days), 7)
                    * extract(EPOCH FROM s.tick) / extract(EPOCH FROM interval '7 days')
            -- Days of the month, months, nth weekdays, cron: the slots of the coming week, or of
            -- the coming year (52 weeks) for one with fewer than one a day.
            ELSE CASE WHEN w.week >= 7 THEN w.week ELSE tickq.slots_between(k.every, k.every_offset, k.at_times,
                    k.on_days, k.days, k.months, k.cron, k.timezone, p_now, p_now + interval '364 days') / 52.0 END
                * extract(EPOCH FROM s.tick) / extract(EPOCH FROM interval '7 days')
        END AS runs_per_tick
    ) AS d
    CROSS JOIN LATERAL tickq.expected_duration(k.name, p_now) AS e
    WHERE k.enabled
    ORDER BY 7 DESC, k.priority, k.name
$$;


--
-- Name: FUNCTION capacity_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.capacity_at(p_now timestamp with time zone) IS 'One row per enabled kind: runs it asks for per tick, expected duration, and the slots it keeps busy on average (its weight x runs per tick x expected duration / tick, the latter at most 1). Largest share first.';


--
-- Name: capacity_total_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.capacity_total_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(lane text, kinds integer, runs_per_tick numeric, slot_share numeric, slots integer, budget numeric, fits boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    WITH per_kind AS (SELECT * FROM tickq.capacity_at(p_now)),
    lanes AS (
        SELECT
            p.priority::text AS lane,
            count(*)::integer AS kinds,
            sum(p.runs_per_tick) AS runs_per_tick,
            sum(p.slot_share) AS slot_share,
            array_position(enum_range(NULL::tickq.priority), p.priority) AS ord
        FROM per_kind AS p
        GROUP BY p.priority
        UNION ALL
        SELECT 'total', count(*)::integer, coalesce(sum(p.runs_per_tick), 0), coalesce(sum(p.slot_share), 0), 99
        FROM per_kind AS p
    )
    SELECT
        l.lane,
        l.kinds,
        round(l.runs_per_tick, 4),
        round(l.slot_share, 4),
        s.slots,
        round(s.slots * (1 - s.capacity_margin), 4),
        CASE WHEN l.lane = 'total' THEN l.slot_share <= s.slots * (1 - s.capacity_margin) END
    FROM lanes AS l
    CROSS JOIN tickq.settings AS s
    ORDER BY l.ord
$$;


--
-- Name: FUNCTION capacity_total_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.capacity_total_at(p_now timestamp with time zone) IS 'The capacity invariant: slot shares and runs per tick summed per priority lane and in total; fits (on the total row) is whether the total share stays at or below slots * (1 - capacity_margin).';


--
-- Name: capacity_verdict_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.capacity_verdict_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(fits boolean, slot_share numeric, budget numeric, slots integer, margin numeric, runs_per_tick numeric, worst_lane text, worst_lane_share numeric)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    WITH totals AS (SELECT * FROM tickq.capacity_total_at(p_now))
    SELECT t.fits, t.slot_share, t.budget, t.slots, s.capacity_margin, t.runs_per_tick, w.lane, w.slot_share
    FROM totals AS t
    CROSS JOIN tickq.settings AS s
    -- When the total does not fit, the lane to act on is the one that takes the most slots (the
    -- more urgent lane on a tie).
    LEFT JOIN LATERAL (
        SELECT l.lane, l.slot_share
        FROM totals AS l
        WHERE NOT t.fits AND l.lane <> 'total' AND l.slot_share > 0
        ORDER BY l.slot_share DESC, array_position(enum_range(NULL::tickq.priority), l.lane::tickq.priority)
        LIMIT 1
    ) AS w ON true
    WHERE t.lane = 'total'
$$;


--
-- Name: FUNCTION capacity_verdict_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.capacity_verdict_at(p_now timestamp with time zone) IS 'What tickq check decides about capacity: whether the total slot share fits the budget (slots less the capacity_margin, also returned), the total share and runs per tick, and when it does not fit the lane that takes the most slots, with its share.';


--
-- Name: catch_up_kinds(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.catch_up_kinds(p_dispatcher text DEFAULT 'unnamed'::text, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_name text;
    v_kind tickq.job_kind;
    v_edge timestamptz;
    v_run_id bigint;
    v_skipped integer := 0;
BEGIN
    FOR v_name IN SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name) ORDER BY 1 LOOP
        -- Locked as a claim locks (another claim's or report's row is left to it), then judged
        -- again by a statement that sees what was committed before the lock.
        SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = v_name FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND OR NOT EXISTS (
            SELECT FROM tickq.kinds_to_catch_up(p_now) AS c (name) WHERE c.name = v_name);
        -- Skipped: every slot from the due time up to (not at) p_now - catch_up.
        v_edge := p_now - v_kind.catch_up - interval '1 microsecond';
        INSERT INTO tickq.job_run AS r (kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at,
            outcome, due_at, output_tail, slot_at, first_slot_at, slots_covered)
        SELECT v_kind.name, v_kind.attempts + 1, 'schedule', 0, p_dispatcher, p_now, p_now, 'skipped', v_kind.due_at,
            format('[tickq: skipped %s slot(s) from %s to %s: more than catch_up %s late]', s.n,
                v_kind.due_at, s.last, tickq.format_duration(v_kind.catch_up)),
            s.last, v_kind.due_at, s.n
        FROM (SELECT tickq.last_slot(v_kind.every, v_kind.every_offset, v_kind.at_times, v_kind.on_days, v_kind.days,
                v_kind.months, v_kind.cron, v_kind.timezone, v_kind.due_at, v_edge) AS last,
            1 + tickq.slots_between(v_kind.every, v_kind.every_offset, v_kind.at_times, v_kind.on_days,
                v_kind.days, v_kind.months, v_kind.cron, v_kind.timezone, v_kind.due_at, v_edge) AS n) AS s
        RETURNING r.id INTO v_run_id;
        -- On to the first slot still within the window (due now), else the next one ahead. A
        -- schedule with no slot ahead waits a day, as tickq.finish_run has it.
        UPDATE tickq.job_kind AS k SET
            due_at = coalesce(tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months,
                k.cron, k.timezone, v_edge), p_now + interval '1 day'),
            last_run_id = v_run_id,
            attempts = 0,
            updated_at = p_now
        WHERE k.name = v_name;
        v_skipped := v_skipped + 1;
    END LOOP;
    RETURN v_skipped;
END
$$;


--
-- Name: FUNCTION catch_up_kinds(p_dispatcher text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.catch_up_kinds(p_dispatcher text, p_now timestamp with time zone) IS 'Before a claim (tickq.claim_jobs calls it when tickq.kinds_to_catch_up finds a kind): for each kind due later than its catch_up, records its slots older than the window as one job_run of outcome skipped by p_dispatcher (no command; slot_at, first_slot_at and slots_covered name them) and moves the kind to its first slot within the window, else its next slot. Returns how many kinds it moved. The failure streak, retries and alerts are left alone.';


--
-- Name: chain_start(bigint, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.chain_start(p_run_id bigint, p_dispatcher text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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


--
-- Name: FUNCTION chain_start(p_run_id bigint, p_dispatcher text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.chain_start(p_run_id bigint, p_dispatcher text) IS 'The step (from 1) a chain''s live run starts at: for a retry of a kind with resume = true, the first step no earlier try of the same slot ended ok; otherwise 1 (start over). Raises TQ001 unless p_dispatcher holds the run''s lease.';


--
-- Name: chain_summary(bigint); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.chain_summary(p_run_id bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    -- e.g. "3/5 ok, failed at sf_push" or "2/5 ok from step 3 (resumed), timeout at ingest".
    SELECT format('%s/%s ok', count(*) FILTER (WHERE s.outcome = 'ok'), jsonb_array_length(k.registry -> 'steps'))
        || CASE WHEN min(s.n) > 1 THEN format(' from step %s (resumed)', min(s.n)) ELSE '' END
        || coalesce(', ' || string_agg(s.outcome || ' at ' || s.name, ', ' ORDER BY s.n)
            FILTER (WHERE s.outcome <> 'ok'), '')
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    LEFT JOIN tickq.job_step AS s ON r.id = s.run_id
    WHERE r.id = p_run_id AND k.registry ? 'steps'
    GROUP BY k.registry
$$;


--
-- Name: FUNCTION chain_summary(p_run_id bigint); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.chain_summary(p_run_id bigint) IS 'One line on the steps of a chain''s run: how many of the chain''s steps ended ok, where a resumed run started, and each step that did not end ok; null for a run of a plain kind.';


--
-- Name: check_agent(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.check_agent() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_caps tickq.agent_settings;
    v_every numrange;
    v_at numrange;
    v_tools numrange;
    v_prompt numrange;
    v_field text;
    v_problem text;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    -- An agent row's own bounds: rows agent.* of the one table of bounds.
    SELECT range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.every')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.at')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.tools')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.prompt'))
    INTO STRICT v_every, v_at, v_tools, v_prompt
    FROM tickq.registry_limits() AS l WHERE l.key LIKE 'agent.%';
    SELECT r.field, r.problem INTO v_field, v_problem
    FROM (VALUES
        (1, 'name', NEW.name IS NULL OR NEW.name !~ '^[a-z0-9][a-z0-9_-]{0,62}$',
            format('an agent name is 1-63 characters of a-z 0-9 _ - starting with a letter or digit, got %s',
                coalesce(quote_literal(left(NEW.name, 80)), 'null'))),
        (2, 'name', TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name,
            format('an agent keeps its name (%s); remove it and add it again under %s',
                quote_literal(OLD.name), quote_literal(left(NEW.name, 80)))),
        (3, 'prompt', NEW.prompt IS NULL OR btrim(NEW.prompt) = '' OR NOT char_length(NEW.prompt)::numeric <@ v_prompt,
            format('a prompt is %s to %s characters, not blank, got %s characters',
                lower(v_prompt), upper(v_prompt), coalesce(char_length(NEW.prompt), 0))),
        (4, 'schedule', num_nonnulls(NEW.every, NEW.at_times, NEW.cron) <> 1,
            'give exactly one of every, at or cron'),
        (5, 'every', NOT extract(EPOCH FROM NEW.every) <@ v_every,
            format('every must be from %s to %s, got %s', tickq.format_duration(make_interval(secs => lower(v_every))),
                tickq.format_duration(make_interval(secs => upper(v_every))), tickq.format_duration(NEW.every))),
        (6, 'at', NOT cardinality(NEW.at_times)::numeric <@ v_at,
            format('at takes %s to %s times of day, got %s', lower(v_at), upper(v_at), NEW.at_times)),
        (7, 'on', NEW.on_days IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.on_days) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.on_days) AS d (day) WHERE d.day IS NULL
                OR NOT (d.day BETWEEN 1 AND 7 OR d.day % 10 BETWEEN 1 AND 7 AND d.day / 10 IN (1, 2, 3, 4, 5, 9)))),
            format('on takes weekdays (1-7: mon-sun, 10n+1..7: nth, 91-97: last) with an at schedule, got %s',
                NEW.on_days)),
        (15, 'days', NEW.days IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.days) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day IS NULL OR d.day = 0
                OR NOT d.day BETWEEN -31 AND 31)),
            format('days takes days of the month 1 to 31 or -1 to -31 with an at schedule, got %s', NEW.days)),
        (16, 'months', NEW.months IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.months) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.months) AS m (month) WHERE m.month IS NULL OR NOT m.month BETWEEN 1 AND 12)),
            format('months takes months 1 to 12 with an at schedule, got %s', NEW.months)),
        (17, 'cron', CASE WHEN NEW.cron IS NOT NULL THEN tickq.cron_problem(NEW.cron) IS NOT NULL ELSE false END,
            CASE WHEN NEW.cron IS NOT NULL THEN tickq.cron_problem(NEW.cron) END),
        (8, 'timezone', NOT tickq.is_timezone(NEW.timezone),
            format('unknown time zone %s (use an IANA name such as America/Chicago)',
                coalesce(quote_literal(left(NEW.timezone, 80)), 'null'))),
        (9, 'timezone', NEW.every IS NOT NULL AND NEW.timezone <> 'UTC',
            format('only an at or cron schedule takes a time zone, got %s', quote_literal(NEW.timezone))),
        (10, 'max_turns', NEW.max_turns IS NULL OR NOT NEW.max_turns BETWEEN 1 AND v_caps.max_turns,
            format('turns must be from 1 to %s (the registry''s cap), got %s',
                v_caps.max_turns, coalesce(NEW.max_turns::text, 'null'))),
        (11, 'timeout', NEW.timeout IS NULL OR NEW.timeout < '1 second'::interval
            OR NEW.timeout > v_caps.max_timeout,
            format('timeout must be from 1s to %s (the registry''s cap), got %s',
                tickq.format_duration(v_caps.max_timeout),
                coalesce(tickq.format_duration(NEW.timeout), 'null'))),
        (12, 'owner', NEW.owner IS NOT NULL AND (NEW.owner !~ '^[[:print:]]{1,100}$' OR btrim(NEW.owner) = ''),
            format('an owner label is 1 to 100 printable characters, got %s',
                quote_literal(left(NEW.owner, 120)))),
        (13, 'tools', NEW.tools IS NULL OR NOT cardinality(NEW.tools)::numeric <@ v_tools OR EXISTS (
            SELECT FROM unnest(NEW.tools) AS t (tool) WHERE t.tool IS NULL OR t.tool !~ '^[a-z0-9][a-z0-9_-]{0,62}$')
            OR cardinality(NEW.tools) <> (SELECT count(DISTINCT t.tool) FROM unnest(NEW.tools) AS t (tool)),
            format('tools are up to %s distinct tool names (a-z 0-9 _ -), got %s', upper(v_tools), NEW.tools)),
        (14, 'tools', (TG_OP = 'INSERT' OR NEW.tools IS DISTINCT FROM OLD.tools)
            AND NOT NEW.tools <@ v_caps.tools,
            format('the registry''s [agents.tools] has no tool %s (it offers %s)',
                (SELECT string_agg(quote_literal(t.tool), ', ') FROM unnest(NEW.tools) AS t (tool)
                    WHERE NOT t.tool = ANY(v_caps.tools)),
                coalesce(nullif(array_to_string(v_caps.tools, ', '), ''), 'none')))
    ) AS r (n, field, broken, problem)
    WHERE r.broken
    ORDER BY r.n
    LIMIT 1;
    IF v_field IS NOT NULL THEN
        RAISE EXCEPTION 'agent %: %: %', coalesce(quote_literal(left(NEW.name, 80)), 'null'), v_field, v_problem
            USING ERRCODE = CASE WHEN v_field = 'tools' AND v_problem LIKE 'the registry%' THEN 'TQ043'
                ELSE 'TQ040' END,
            DETAIL = format('field %s of tickq.agent', v_field),
            HINT = 'Nothing was changed; tickq agent add --help lists the limits.';
    END IF;
    RETURN NEW;
END
$_$;


--
-- Name: FUNCTION check_agent(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.check_agent() IS 'Trigger: refuses an agent row that breaks a rule (name shape, prompt size, one schedule of every, at (with on, days, months) or cron, known time zone, turns and timeout within the registry''s caps, owner label, tools the registry offers; every, the count of at times and of tools and the prompt''s length within the rows agent.* of tickq.registry_limits, the caps within agents.*) with TQ040 (TQ043 for a tool) naming the field and the value.';


--
-- Name: check_kind(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.check_kind() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_rule text;
    v_problem text;
BEGIN
    IF NOT tickq.kind_name_ok(NEW.name) THEN
        v_rule := 'name_format';
        v_problem := 'the name must be 1-100 of a-z 0-9 _ . - starting with a letter or digit';
    ELSIF (NEW.every IS NOT NULL)::int + (NEW.at_times IS NOT NULL)::int + (NEW.cron IS NOT NULL)::int <> 1 THEN
        v_rule := 'one_schedule';
        v_problem := 'exactly one of every, at_times and cron must be set';
    ELSIF NEW.every IS NOT NULL AND NOT tickq.within_limit('every', extract(EPOCH FROM NEW.every)) THEN
        v_rule := 'every_bounded';
        v_problem := (SELECT format('every must be from %s to %s seconds, got %s', l.low, l.high, NEW.every)
            FROM tickq.registry_limits() AS l WHERE l.key = 'every');
    ELSIF cardinality(NEW.at_times) = 0 THEN
        v_rule := 'at_times_not_empty';
        v_problem := 'at_times must not be empty';
    ELSIF (NEW.on_days IS NOT NULL OR NEW.days IS NOT NULL OR NEW.months IS NOT NULL) AND NEW.at_times IS NULL THEN
        v_rule := 'on_days_need_at';
        v_problem := 'on_days, days and months need at_times';
    ELSIF NEW.on_days IS NOT NULL AND NOT (cardinality(NEW.on_days) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.on_days) AS d (day)
        WHERE NOT (d.day BETWEEN 1 AND 7 OR d.day % 10 BETWEEN 1 AND 7 AND d.day / 10 BETWEEN 1 AND 5
            OR d.day BETWEEN 91 AND 97))) THEN
        v_rule := 'on_days_iso';
        v_problem := format('on_days must be ISO weekdays 1-7, nth weekdays 11-57 or last weekdays 91-97, got %s',
            NEW.on_days);
    ELSIF NOT tickq.within_limit('timeout', extract(EPOCH FROM NEW.timeout)) THEN
        v_rule := 'timeout_bounded';
        v_problem := (SELECT format('timeout must be from %s to %s seconds, got %s', l.low, l.high, NEW.timeout)
            FROM tickq.registry_limits() AS l WHERE l.key = 'timeout');
    ELSIF NOT tickq.within_limit('retries', NEW.retries) THEN
        v_rule := 'retries_bounded';
        v_problem := (SELECT format('retries must be from %s to %s, got %s', l.low, l.high, NEW.retries)
            FROM tickq.registry_limits() AS l WHERE l.key = 'retries');
    ELSIF NEW.retired_at IS NOT NULL AND NEW.enabled THEN
        v_rule := 'retired_is_disabled';
        v_problem := 'a retired kind must be disabled';
    ELSIF NOT tickq.is_timezone(NEW.timezone) THEN
        v_rule := 'timezone_known';
        v_problem := format('unknown time zone "%s"', NEW.timezone);
    ELSIF NEW.at_times IS NOT NULL
        AND cardinality(NEW.at_times) <> (SELECT count(DISTINCT t.at_time) FROM unnest(NEW.at_times) AS t (at_time)) THEN
        v_rule := 'at_times_distinct';
        v_problem := format('at_times must not repeat, got %s', NEW.at_times);
    ELSIF NEW.on_days IS NOT NULL
        AND cardinality(NEW.on_days) <> (SELECT count(DISTINCT d.day) FROM unnest(NEW.on_days) AS d (day)) THEN
        v_rule := 'on_days_distinct';
        v_problem := format('on_days must not repeat, got %s', NEW.on_days);
    ELSIF NEW.days IS NOT NULL AND NOT (cardinality(NEW.days) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day = 0 OR NOT tickq.within_limit('days', d.day))
        AND cardinality(NEW.days) = (SELECT count(DISTINCT d.day) FROM unnest(NEW.days) AS d (day))) THEN
        v_rule := 'days_of_month';
        v_problem := format('days must be distinct days 1..31 or -1..-31, got %s', NEW.days);
    ELSIF NEW.months IS NOT NULL AND NOT (cardinality(NEW.months) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.months) AS m (month) WHERE NOT tickq.within_limit('months', m.month))
        AND cardinality(NEW.months) = (SELECT count(DISTINCT m.month) FROM unnest(NEW.months) AS m (month))) THEN
        v_rule := 'months_of_year';
        v_problem := format('months must be distinct months 1..12, got %s', NEW.months);
    END IF;
    IF v_rule IS NOT NULL THEN
        RAISE EXCEPTION 'kind "%": %', NEW.name, v_problem
            USING ERRCODE = 'check_violation', CONSTRAINT = v_rule, SCHEMA = 'tickq',
            TABLE = 'job_kind', HINT = 'The registry file is checked by tickq.sync_registry first.';
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: FUNCTION check_kind(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.check_kind() IS 'Trigger: refuses a job_kind row that breaks a rule (name, one schedule of every, at_times and cron, bounded cadence and timeout, weekdays, days of the month, months, known time zone, no repeats), naming the first rule broken and the value; fires only when one of those columns is written. Each rule a plain test, in order: a valid row builds no message.';


--
-- Name: check_kind_armed(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.check_kind_armed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    IF (NEW.armed_at IS NULL) AND (NEW.armed_by IS NULL) AND (NEW.armed_run_id IS NULL) THEN
        RETURN NEW;
    END IF;
    -- Checked when the arming changes, not at every sync that rewrites the same values: the
    -- arming run may since have been pruned by housekeeping.
    IF TG_OP = 'UPDATE' AND (NEW.armed_at, NEW.armed_by, NEW.armed_run_id, NEW.irreversible, NEW.command_since)
        IS NOT DISTINCT FROM (OLD.armed_at, OLD.armed_by, OLD.armed_run_id, OLD.irreversible, OLD.command_since) THEN
        RETURN NEW;
    END IF;
    IF NOT NEW.irreversible THEN
        RAISE EXCEPTION 'kind "%" is not irreversible and cannot be armed', NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = NEW.armed_run_id;
    IF NEW.armed_at IS NULL OR NEW.armed_by IS NULL OR NOT FOUND
        OR v_run.kind <> NEW.name OR v_run.run_trigger <> 'manual' OR v_run.outcome <> 'ok'
        OR v_run.run_by IS DISTINCT FROM NEW.armed_by
        OR v_run.claimed_at < NEW.command_since THEN
        RAISE EXCEPTION 'kind "%" can only be armed by a successful manual run started by a person',
            NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind',
            DETAIL = format('armed_run_id %s names no manual run of the current command that ended ok '
                'and was started by %s.', NEW.armed_run_id, coalesce(NEW.armed_by, 'nobody')),
            HINT = 'Run it once by hand: tickq run KIND, from a terminal.';
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: FUNCTION check_kind_armed(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.check_kind_armed() IS 'Trigger: an irreversible kind is armed only by a manual run of its current command, started by the person named in armed_by, that ended ok; fires only when the arming columns are written.';


--
-- Name: check_kind_offset(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.check_kind_offset() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.every_offset IS NOT NULL AND (NEW.every IS NULL OR NEW.every_offset <= '0'::interval
        OR NEW.every_offset >= NEW.every) THEN
        RAISE EXCEPTION 'kind "%": every_offset must be above 0 and below every (%), got %',
            NEW.name, NEW.every, NEW.every_offset
            USING ERRCODE = 'check_violation', CONSTRAINT = 'every_offset_in_cadence',
            SCHEMA = 'tickq', TABLE = 'job_kind',
            HINT = 'The registry file is checked by tickq.sync_registry first.';
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: FUNCTION check_kind_offset(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.check_kind_offset() IS 'Trigger: refuses a job_kind row whose every_offset is not inside its cadence (0 < offset < every, and only on an every cadence); fires only when every or every_offset is written.';


--
-- Name: check_lease_covers_timeouts(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.check_lease_covers_timeouts() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_lease interval;
    v_kind text;
    v_timeout interval;
BEGIN
    SELECT s.lease INTO v_lease FROM tickq.settings AS s;
    SELECT k.name, k.timeout INTO v_kind, v_timeout
    FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL
    ORDER BY k.timeout DESC
    LIMIT 1;
    IF v_timeout > v_lease THEN
        RAISE EXCEPTION 'lease % is shorter than the timeout % of kind "%"', v_lease, v_timeout, v_kind
            USING ERRCODE = 'TQ004',
            DETAIL = 'A lease shorter than a watchdog would let a second dispatcher start a kind that is still running.',
            HINT = 'Let tickq.sync_registry set the lease (longest timeout plus lease_margin).';
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION check_lease_covers_timeouts(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.check_lease_covers_timeouts() IS 'Constraint trigger: refuses a commit that leaves settings.lease shorter than any kind''s timeout.';


--
-- Name: claim_candidates(integer, boolean, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_candidates(p_limit integer, p_agents boolean, p_stale timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS text[]
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    -- Called by claim_jobs, whose plan_cache_mode (force_generic_plan) holds here too.
    RETURN ARRAY(
        SELECT c.name
        -- One range per lane: a lateral subquery per priority, each an index range with its own
        -- LIMIT (the planner runs it once per lane).
        FROM unnest(enum_range(NULL::tickq.priority)) AS lane (priority)
        CROSS JOIN LATERAL (
            SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
            WHERE tickq.kind_claimable(k)
                AND k.run_id IS NULL AND k.priority = lane.priority AND k.due_at <= p_now
                AND (k.paused_until IS NULL OR k.paused_until <= p_now) AND (p_agents OR k.name NOT LIKE 'agent.%')
            ORDER BY k.due_at, k.name LIMIT p_limit + 4
        ) AS c
        ORDER BY c.due_at <= p_stale DESC, CASE WHEN c.due_at <= p_stale THEN c.due_at END,
            c.priority, c.due_at, c.name
        LIMIT p_limit + 4
    );
END
$$;


--
-- Name: FUNCTION claim_candidates(p_limit integer, p_agents boolean, p_stale timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_candidates(p_limit integer, p_agents boolean, p_stale timestamp with time zone, p_now timestamp with time zone) IS 'Internal, for tickq.claim_jobs: the names of at most p_limit + 4 kinds a claim may take now, in claim order (due before p_stale first, oldest first; then lane, due time, name); agent kinds only when p_agents. Reads one short index range per lane and locks nothing.';


--
-- Name: claim_fit(text[], integer, integer, boolean, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_fit(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_stale timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS record
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


--
-- Name: FUNCTION claim_fit(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_stale timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_fit(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_stale timestamp with time zone, p_now timestamp with time zone) IS 'Internal, for tickq.claim_jobs once a candidate has a weight or pools: locks the free slot rows and the candidates'' kind rows (FOR UPDATE SKIP LOCKED) and gives, in claim order, each kind that fits its weight in those rows and a free row of each of its pools (SKIP LOCKED), at most p_limit kinds; a kind that has waited half of stale_after (p_stale: now less stale_after) and does not fit has its weight or pools held from the candidates after it. Returns one record: picked (a kind once per slot row), slots (the rows, in the same order), kinds (how many) and pooled ([{kind, pool, n}]).';


--
-- Name: claim_jobs(integer, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_jobs(p_limit integer, p_dispatcher text DEFAULT 'unnamed'::text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, attempt integer, leased_until timestamp with time zone, run_trigger tickq.run_trigger, slot_at timestamp with time zone, first_slot_at timestamp with time zone, slots_covered integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET plan_cache_mode TO 'force_generic_plan'
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    v_limit integer;
    v_lease interval;
    v_agents boolean;
    v_stale timestamptz;
    v_expired boolean;
    v_over_limit boolean;
    v_catch_up boolean;
    v_slots integer[];
    v_candidates text[];
    v_picked text[];
    v_leased integer;
    v_weighted boolean;
    v_kinds integer;
    v_pooled jsonb;
    v_fit record;
BEGIN
    IF p_limit IS NULL OR p_limit < 0 THEN
        RAISE EXCEPTION 'claim_jobs: p_limit must be a number >= 0, got %', p_limit
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Settings, the claimer's lease, the rare cases and weights (see above the function).
    SELECT s.slots, greatest(s.lease, d.lease), coalesce(d.agents, s.agents, true), p_now - s.stale_after,
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.leased_until < p_now),
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > s.slots AND sl.run_id IS NOT NULL),
        EXISTS (SELECT FROM tickq.job_kind AS w WHERE w.weight > 1 OR w.pools <> '{}'),
        EXISTS (SELECT FROM tickq.kinds_to_catch_up(p_now))  -- a kind later than its catch_up: 03_catch_up.sql
    INTO STRICT v_limit, v_lease, v_agents, v_stale, v_expired, v_over_limit, v_weighted, v_catch_up
    FROM tickq.settings AS s LEFT JOIN tickq.dispatcher AS d ON d.name = p_dispatcher;
    IF v_expired THEN PERFORM tickq.expire_leases(p_now); END IF;
    IF v_catch_up THEN PERFORM tickq.catch_up_kinds(p_dispatcher, p_now); END IF;
    v_candidates := tickq.claim_candidates(p_limit, v_agents, v_stale, p_now);
    IF cardinality(v_candidates) = 0 THEN
        RETURN;
    ELSIF v_weighted AND EXISTS (SELECT FROM tickq.job_kind AS w WHERE w.name = ANY(v_candidates)
        AND (w.weight > 1 OR w.pools <> '{}')) THEN  -- a candidate has a weight or pools
        v_fit := tickq.claim_fit(v_candidates, p_limit, v_limit, v_over_limit, v_stale, p_now);
    ELSE
        v_fit := tickq.claim_plain(v_candidates, p_limit, v_limit, v_over_limit, p_now);
    END IF;
    v_picked := v_fit.picked; v_slots := v_fit.slots; v_kinds := v_fit.kinds; v_pooled := v_fit.pooled;
    IF coalesce(cardinality(v_picked), 0) = 0 THEN  -- no free slot row, or every candidate taken
        RETURN;
    END IF;
    -- The runs, their slot rows and the leases (see above the function).
    RETURN QUERY SELECT * FROM tickq.claim_open_runs(v_picked, v_slots, p_dispatcher, v_lease, p_now);
    GET DIAGNOSTICS v_leased = ROW_COUNT;
    IF v_leased <> coalesce(v_kinds, cardinality(v_picked)) THEN
        -- Never a lease without a slot of its own: undo the whole claim rather than go over.
        RAISE EXCEPTION 'claim_jobs: % kinds picked but % leased', coalesce(v_kinds, cardinality(v_picked)), v_leased
            USING ERRCODE = 'internal_error';
    ELSIF v_pooled <> '[]' THEN  -- each pooled run into the pool rows claim_fit locked for it
        UPDATE tickq.pool_slot AS ps SET run_id = k.run_id, leased_until = k.leased_until
        FROM jsonb_to_recordset(v_pooled) AS p (kind text, pool text, n integer)
        INNER JOIN tickq.job_kind AS k ON p.kind = k.name
        WHERE ps.pool = p.pool AND ps.n = p.n;
    END IF;
END
$$;


--
-- Name: FUNCTION claim_jobs(p_limit integer, p_dispatcher text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_jobs(p_limit integer, p_dispatcher text, p_now timestamp with time zone) IS 'Leases at most p_limit due, enabled, unpaused kinds to p_dispatcher and opens a run for each, each in a free slot row: never more live leases than settings.slots across all dispatchers, and claims never wait for each other; a kind is never leased twice. A dispatcher whose last sync had no [agents] section is leased no agent run (kind agent.NAME). Order: kinds due longer than stale_after first (oldest first), then priority, then oldest due time. Expired leases are turned into lost runs first. Returns no command: commands come only from the registry file.';


--
-- Name: claim_manual(text, text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_manual(p_kind text, p_dispatcher text DEFAULT 'unnamed'::text, p_run_by text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, attempt integer, leased_until timestamp with time zone, run_trigger tickq.run_trigger, slot_at timestamp with time zone, first_slot_at timestamp with time zone, slots_covered integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_kind tickq.job_kind;
    v_slots integer[];
    v_pool text;
    v_n integer;
    v_pool_ns integer[] := '{}'::integer[];
    v_run_id bigint;
    v_lease interval;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    -- As in claim_jobs: the lease covers the claimer's own registry too.
    v_lease := greatest(v_settings.lease,
        (SELECT d.lease FROM tickq.dispatcher AS d WHERE d.name = p_dispatcher));
    PERFORM tickq.expire_leases(p_now);
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind FOR UPDATE;
    IF NOT FOUND OR v_kind.retired_at IS NOT NULL THEN
        RAISE EXCEPTION 'no kind "%" in the registry', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    IF v_kind.run_id IS NOT NULL THEN
        RAISE EXCEPTION 'kind "%" is already running (run %, leased by % until %)',
            p_kind, v_kind.run_id, v_kind.leased_by, v_kind.leased_until
            USING ERRCODE = 'TQ006', HINT = 'A kind never runs twice at once; wait for the run to finish.';
    END IF;
    IF v_kind.irreversible AND v_kind.armed_at IS NULL AND nullif(btrim(p_run_by), '') IS NULL THEN
        RAISE EXCEPTION 'kind "%" is irreversible and not armed: its first run needs a person', p_kind
            USING ERRCODE = 'TQ030',
            DETAIL = 'An irreversible kind is armed by one successful manual run started by a person.',
            HINT = 'Run tickq run KIND from a terminal and type the kind''s name back, '
                'or pass --yes-i-ran-this-by-hand.';
    END IF;
    -- Its weight in free slot rows and a free row of each pool it names, as a claim takes them
    -- (no capacity is held for stale kinds against a person's run).
    v_slots := ARRAY(SELECT sl.n FROM tickq.slot AS sl
        WHERE sl.run_id IS NULL AND sl.n <= v_settings.slots
        ORDER BY sl.n
        LIMIT least(v_kind.weight, tickq.slots_left(v_settings.slots))
        FOR UPDATE SKIP LOCKED);
    IF cardinality(v_slots) < v_kind.weight THEN
        RAISE EXCEPTION '%', CASE WHEN v_kind.weight = 1 THEN format('all %s slots are in use', v_settings.slots)
            ELSE format('kind "%s" needs %s of the %s slots and %s are free', p_kind, v_kind.weight,
                v_settings.slots, cardinality(v_slots)) END
            USING ERRCODE = 'TQ005', HINT = 'Try again when a run finishes.';
    END IF;
    FOREACH v_pool IN ARRAY v_kind.pools LOOP
        v_n := NULL;
        SELECT ps.n INTO v_n FROM tickq.pool_slot AS ps INNER JOIN tickq.pool AS p ON ps.pool = p.name
        WHERE ps.pool = v_pool AND ps.run_id IS NULL AND ps.n <= p.slots
        ORDER BY ps.n LIMIT least(1, tickq.pool_slots_left(v_pool))
        FOR UPDATE OF ps SKIP LOCKED;
        IF v_n IS NULL THEN
            RAISE EXCEPTION 'pool "%" is full: all % of its slots are in use', v_pool,
                (SELECT p.slots FROM tickq.pool AS p WHERE p.name = v_pool)
                USING ERRCODE = 'TQ005', HINT = 'Try again when a run finishes.',
                DETAIL = coalesce('Held by ' || (SELECT string_agg(format('run %s of kind "%s"', r.id, r.kind), ', '
                    ORDER BY r.id) FROM tickq.pool_slot AS ps INNER JOIN tickq.job_run AS r ON ps.run_id = r.id
                    WHERE ps.pool = v_pool) || '.', 'Its slots are held by claims not yet committed.');
        END IF;
        v_pool_ns := v_pool_ns || v_n;
    END LOOP;
    -- A manual run stands for no scheduled slot, and the kind keeps its due time.
    INSERT INTO tickq.job_run AS r (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot,
        run_by, weight, pools)
    VALUES (p_kind, v_kind.attempts + 1, 'manual', 0, p_dispatcher, p_now, p_now, v_slots[1],
        nullif(btrim(p_run_by), ''), v_kind.weight, v_kind.pools)
    RETURNING r.id INTO v_run_id;
    UPDATE tickq.slot AS sl SET run_id = v_run_id, leased_until = p_now + v_lease
    WHERE sl.n = ANY(v_slots);
    UPDATE tickq.pool_slot AS ps SET run_id = v_run_id, leased_until = p_now + v_lease
    FROM unnest(v_kind.pools, v_pool_ns) AS t (pool, n)
    WHERE ps.pool = t.pool AND ps.n = t.n;
    RETURN QUERY
    UPDATE tickq.job_kind AS k SET
        run_id = v_run_id,
        leased_by = p_dispatcher,
        leased_until = p_now + v_lease,
        attempts = v_kind.attempts + 1,
        updated_at = p_now
    WHERE k.name = p_kind
    RETURNING k.run_id, k.name, k.attempts::integer, k.leased_until, 'manual'::tickq.run_trigger,
        NULL::timestamptz, NULL::timestamptz, 0;
END
$$;


--
-- Name: FUNCTION claim_manual(p_kind text, p_dispatcher text, p_run_by text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_manual(p_kind text, p_dispatcher text, p_run_by text, p_now timestamp with time zone) IS 'A manual run: leases the named kind now, due or not, enabled or not, paused or not (a person may run a disabled or paused kind by hand), counted against the slots (its weight) and its pools. p_run_by is the person who started it from a terminal; an unarmed irreversible kind needs one, and its successful run arms the kind. Raises TQ003 unknown kind, TQ006 already running, TQ005 no free slot (or a full pool, named), TQ030 unarmed irreversible kind without a person.';


--
-- Name: claim_open_runs(text[], integer[], text, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_open_runs(p_picked text[], p_slots integer[], p_dispatcher text, p_lease interval, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, attempt integer, leased_until timestamp with time zone, run_trigger tickq.run_trigger, slot_at timestamp with time zone, first_slot_at timestamp with time zone, slots_covered integer)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH runs AS (
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot,
            slot_at, first_slot_at, slots_covered, weight, pools)
        SELECT k.name, k.attempts + 1, k.next_trigger, k.n, p_dispatcher, p_now, k.due_at,
            p_slots[array_position(p_picked, k.name)],
            -- The slots covered: from the kind's due time to the last one by now (the due time
            -- when it is the only one); a retry's are its first try's, kept on the kind row.
            CASE WHEN k.n > 1 THEN tickq.last_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days,
                    k.months, k.cron, k.timezone, k.due_at, p_now) WHEN k.n = 1 THEN k.due_at
                WHEN k.next_trigger = 'retry' THEN k.slot_at END,
            CASE WHEN k.n > 0 THEN k.due_at WHEN k.next_trigger = 'retry' THEN k.first_slot_at END,
            CASE WHEN k.n > 0 THEN k.n WHEN k.next_trigger = 'retry' THEN k.slots_covered ELSE 0 END, k.weight, k.pools
        FROM (
            SELECT k.*, CASE
                WHEN k.next_trigger <> 'schedule' THEN 0
                ELSE 1 + tickq.slots_between(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                    k.timezone, k.due_at, p_now)
            END AS n
            FROM tickq.job_kind AS k WHERE k.name = ANY(p_picked)
            OFFSET 0  -- slots_between once per kind, not once per use of n
        ) AS k
        RETURNING id, kind, attempt, run_trigger, slot_at, first_slot_at, slots_covered
    ),
    slots AS (
        -- p_picked[i] goes into slot p_slots[i] (a kind of weight w is w times in p_picked). Slot
        -- rows are found by primary key (unnested arrays would hash the slot table in a generic plan).
        UPDATE tickq.slot AS sl SET
            run_id = (SELECT r.id FROM runs AS r WHERE r.kind = p_picked[array_position(p_slots, sl.n)]),
            leased_until = p_now + p_lease
        WHERE sl.n = ANY(p_slots) AND sl.run_id IS NULL
        RETURNING sl.run_id
    ),
    leased AS (
        UPDATE tickq.job_kind AS k SET
            run_id = r.id,
            leased_by = p_dispatcher,
            leased_until = p_now + p_lease,
            attempts = r.attempt,
            slot_at = r.slot_at,
            first_slot_at = r.first_slot_at,
            slots_covered = r.slots_covered,
            updated_at = p_now
        FROM runs AS r
        INNER JOIN slots AS sl ON r.id = sl.run_id
        WHERE k.name = r.kind
        RETURNING r.id, k.name, r.attempt, k.leased_until, r.run_trigger, r.slot_at, r.first_slot_at,
            r.slots_covered
    )
    SELECT l.id, l.name, l.attempt::integer, l.leased_until, l.run_trigger, l.slot_at, l.first_slot_at,
        l.slots_covered FROM leased AS l
    ORDER BY array_position(p_picked, l.name);
END
$$;


--
-- Name: FUNCTION claim_open_runs(p_picked text[], p_slots integer[], p_dispatcher text, p_lease interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_open_runs(p_picked text[], p_slots integer[], p_dispatcher text, p_lease interval, p_now timestamp with time zone) IS 'Internal, for tickq.claim_jobs: opens a run of each kind of p_picked in the slot row of p_slots at the same place (a kind of weight w is w times in p_picked), leases the kind to p_dispatcher for p_lease, and returns the leases in p_picked''s order; a kind whose slot row was taken meanwhile gets no lease (claim_jobs counts them).';


--
-- Name: claim_plain(text[], integer, integer, boolean, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.claim_plain(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_now timestamp with time zone DEFAULT now()) RETURNS record
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Called by claim_jobs, whose plan_cache_mode (force_generic_plan) holds here too.
    slots := ARRAY(
        SELECT sl.n FROM tickq.slot AS sl
        WHERE sl.run_id IS NULL AND sl.n <= p_slots
        ORDER BY sl.n
        LIMIT CASE WHEN p_over_limit THEN least(p_limit, tickq.slots_left(p_slots)) ELSE p_limit END
        FOR UPDATE SKIP LOCKED
    );
    pooled := NULL;  -- no pools on this path: the record of tickq.claim_fit, without them
    IF cardinality(slots) = 0 THEN
        RETURN;
    END IF;
    -- Lock in claim order. SKIP LOCKED passes over a row another claim, a report or a sync holds.
    -- Pause and weight are checked again: pause_kind or a sync may have committed since.
    picked := ARRAY(
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.name = ANY(p_candidates) AND tickq.kind_claimable(k)
            AND k.run_id IS NULL AND k.due_at <= p_now AND k.weight = 1 AND k.pools = '{}'
            AND (k.paused_until IS NULL OR k.paused_until <= p_now)
        ORDER BY array_position(p_candidates, k.name)
        LIMIT cardinality(slots)
        FOR UPDATE SKIP LOCKED
    );
    slots := slots[1:cardinality(picked)];
    kinds := cardinality(picked);
END
$$;


--
-- Name: FUNCTION claim_plain(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.claim_plain(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_now timestamp with time zone) IS 'Internal, for tickq.claim_jobs while no candidate has a weight or pools: locks up to p_limit free slot rows (of the first p_slots; while runs hold rows past a lowered limit, only as many as it leaves) and then as many candidates, in claim order (FOR UPDATE SKIP LOCKED both). Returns the record tickq.claim_fit returns: picked kinds, their slot rows in the same order, how many, and pooled (null: no pools).';


--
-- Name: job_kind; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.job_kind (
    name text NOT NULL,
    registry jsonb DEFAULT '{}'::jsonb NOT NULL,
    every interval,
    at_times time without time zone[],
    on_days smallint[],
    timezone text DEFAULT 'UTC'::text NOT NULL,
    timeout interval NOT NULL,
    priority tickq.priority DEFAULT 'normal'::tickq.priority NOT NULL,
    retries integer DEFAULT 0 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    retired_at timestamp with time zone,
    due_at timestamp with time zone NOT NULL,
    next_trigger tickq.run_trigger DEFAULT 'schedule'::tickq.run_trigger NOT NULL,
    attempts tickq.kind_attempts DEFAULT 0 NOT NULL,
    failure_streak tickq.failure_streak DEFAULT 0 NOT NULL,
    run_id bigint,
    leased_by text,
    leased_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_run_id bigint,
    every_offset interval,
    irreversible boolean DEFAULT false NOT NULL,
    command_since timestamp with time zone,
    armed_at timestamp with time zone,
    armed_by text,
    armed_run_id bigint,
    paused_until timestamp with time zone,
    paused_reason text,
    paused_by text,
    registry_digest text,
    days smallint[],
    months smallint[],
    cron text,
    slot_at timestamp with time zone,
    first_slot_at timestamp with time zone,
    slots_covered integer DEFAULT 0 NOT NULL,
    weight integer DEFAULT 1 NOT NULL,
    pools text[] DEFAULT '{}'::text[] NOT NULL,
    catch_up interval,
    CONSTRAINT kind_weight_positive CHECK ((weight >= 1)),
    CONSTRAINT lease_complete CHECK ((((run_id IS NULL) AND (leased_by IS NULL) AND (leased_until IS NULL)) OR ((run_id IS NOT NULL) AND (leased_by IS NOT NULL) AND (leased_until IS NOT NULL))))
)
WITH (fillfactor='70');


--
-- Name: TABLE job_kind; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.job_kind IS 'One row per job kind. The schedule columns and registry (a mirror of the registry entry, for people reading it in psql) are written only by tickq.sync_registry: the registry file wins. Nothing here is ever executed. A kind gone from the registry is retired (disabled), never deleted, so its history stays. run_id/leased_by/leased_until are the live lease.';


--
-- Name: COLUMN job_kind.last_run_id; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.last_run_id IS 'The last finished run of the kind, kept by tickq.finish_run (housekeeping never prunes it: it keeps the latest runs of every kind).';


--
-- Name: COLUMN job_kind.every_offset; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.every_offset IS 'Shift of an every cadence from its clock-aligned slots (0 <= offset < every); NULL for no shift and for calendar kinds. Written only by tickq.sync_registry.';


--
-- Name: COLUMN job_kind.irreversible; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.irreversible IS 'The registry marks the kind irreversible: never claimed by a schedule until armed.';


--
-- Name: COLUMN job_kind.command_since; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.command_since IS 'When the kind''s current command (or steps, cwd, env) was first synced; a change disarms an irreversible kind, and only a run claimed since then can arm it.';


--
-- Name: COLUMN job_kind.armed_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.armed_at IS 'When a successful manual run started by a person armed this irreversible kind; null: unarmed.';


--
-- Name: COLUMN job_kind.armed_by; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.armed_by IS 'Who (the OS user) started the manual run that armed the kind.';


--
-- Name: COLUMN job_kind.armed_run_id; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.armed_run_id IS 'The successful manual run that armed the kind.';


--
-- Name: COLUMN job_kind.paused_until; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.paused_until IS 'Set by tickq.pause_kind: claims skip the kind until then (infinity: until tickq.resume_kind). A pause whose time has passed has ended by itself.';


--
-- Name: COLUMN job_kind.paused_reason; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.paused_reason IS 'Why the kind was paused (the operator''s words).';


--
-- Name: COLUMN job_kind.paused_by; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.paused_by IS 'Who paused the kind (user@host of the tickq pause).';


--
-- Name: COLUMN job_kind.registry_digest; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.registry_digest IS 'md5 of the registry mirror (registry::text) as tickq.write_kind last wrote it; a mirror that no longer matches was changed behind the registry''s back.';


--
-- Name: COLUMN job_kind.days; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.days IS 'Days of the month of a calendar kind (1..31, -1 = the last day .. -31); NULL for every day.';


--
-- Name: COLUMN job_kind.months; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.months IS 'Months of a calendar kind (1 = January .. 12); NULL for every month.';


--
-- Name: COLUMN job_kind.cron; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.cron IS 'A five-field cron string (or an @ form) as the registry gave it; NULL for every and at kinds.';


--
-- Name: COLUMN job_kind.slot_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.slot_at IS 'The slot_at of the kind''s latest run claimed by tickq.claim_jobs (a retry carries it on).';


--
-- Name: COLUMN job_kind.first_slot_at; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.first_slot_at IS 'The first_slot_at of the kind''s latest run claimed by tickq.claim_jobs.';


--
-- Name: COLUMN job_kind.slots_covered; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.slots_covered IS 'The slots_covered of the kind''s latest run claimed by tickq.claim_jobs.';


--
-- Name: COLUMN job_kind.weight; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.weight IS 'How many of the global slots (settings.slots) each run of the kind takes: the registry''s weight (default 1, at most slots); an agent''s kind takes [agents] weight.';


--
-- Name: COLUMN job_kind.pools; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.pools IS 'The pools (tickq.pool) each run of the kind takes one slot of, besides its weight in the global slots; sorted, no repeats.';


--
-- Name: COLUMN job_kind.catch_up; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.job_kind.catch_up IS 'The registry''s catch_up: a slot later than this is skipped (a job_run row of outcome skipped), not run; NULL: every missed slot is merged into one run however late.';


--
-- Name: command_changed(tickq.job_kind, tickq.job_kind); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.command_changed(p_stored tickq.job_kind, p_incoming tickq.job_kind) RETURNS boolean
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


--
-- Name: FUNCTION command_changed(p_stored tickq.job_kind, p_incoming tickq.job_kind); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.command_changed(p_stored tickq.job_kind, p_incoming tickq.job_kind) IS 'Whether a registry entry changes what a kind runs (command, steps, cwd, env) or whether it is irreversible: tickq.sync_registry then disarms the kind and logs it.';


--
-- Name: count_run(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.count_run() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_bounds double precision[] := tickq.metrics_buckets();
    v_old integer;
    v_new integer;
BEGIN
    -- Out with what an ended run counted before this write, in with what it counts now: one
    -- row per kind, the outcomes by their place in the enum.
    IF TG_OP = 'UPDATE' AND OLD.outcome <> 'running' THEN
        v_old := array_position(enum_range(NULL::tickq.outcome), OLD.outcome);
        UPDATE tickq.run_count AS c SET
            runs[v_old] = c.runs[v_old] - 1,
            merged_slots = c.merged_slots - greatest(OLD.slots - 1, 0),
            timed_runs = c.timed_runs - (OLD.duration IS NOT NULL)::integer,
            seconds = c.seconds - coalesce(extract(EPOCH FROM OLD.duration), 0),
            buckets = array(SELECT c.buckets[b.n] - coalesce((extract(EPOCH FROM OLD.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            -- the last success, found again only when the one taken out was it
            last_ok = CASE WHEN OLD.outcome <> 'ok' OR OLD.finished_at IS DISTINCT FROM c.last_ok THEN c.last_ok
                ELSE greatest((SELECT max(r.finished_at) FROM tickq.job_run AS r
                    WHERE r.kind = OLD.kind AND r.outcome = 'ok' AND r.id <> OLD.id),
                    (SELECT t.last_finished_at FROM tickq.run_total AS t WHERE t.kind = OLD.kind AND t.outcome = 'ok'))
            END
        WHERE c.kind = OLD.kind;
    END IF;
    IF NEW.outcome <> 'running' THEN
        v_new := array_position(enum_range(NULL::tickq.outcome), NEW.outcome);
        INSERT INTO tickq.run_count AS c (kind, runs, merged_slots, timed_runs, seconds, buckets, last_ok)
        VALUES (NEW.kind,
            array(SELECT (o.n = v_new)::integer FROM generate_subscripts(enum_range(NULL::tickq.outcome), 1) AS o (n)
                ORDER BY o.n),
            greatest(NEW.slots - 1, 0), (NEW.duration IS NOT NULL)::integer, coalesce(extract(EPOCH FROM NEW.duration), 0),
            array(SELECT coalesce((extract(EPOCH FROM NEW.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            CASE WHEN NEW.outcome = 'ok' THEN NEW.finished_at END)
        ON CONFLICT (kind) DO UPDATE SET
            runs[v_new] = c.runs[v_new] + 1,
            merged_slots = c.merged_slots + excluded.merged_slots,
            timed_runs = c.timed_runs + excluded.timed_runs,
            seconds = c.seconds + excluded.seconds,
            buckets = array(SELECT c.buckets[b.n] + excluded.buckets[b.n] FROM generate_subscripts(v_bounds, 1) AS b (n)
                ORDER BY b.n),
            last_ok = greatest(c.last_ok, excluded.last_ok);
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION count_run(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.count_run() IS 'Triggers run_counted and run_counted_insert: keep tickq.run_count as runs end (a run that ended added, the old values of one that had ended taken out first when it changes).';


--
-- Name: cron_calendar(text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.cron_calendar(p_cron text, p_timezone text) RETURNS tickq.calendar
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    v_key text;
    v_kept text;
    v_calendar tickq.calendar;
BEGIN
    -- A session of the simulator (tickq.simulation_session) reads the same few cron strings
    -- again at every claim and report of their kinds, and parsing one costs more than the rest
    -- of a report: it keeps each string's calendar, by a digest of string and zone, in a
    -- setting of the session (a pure function's answer: nothing else depends on it).
    IF current_setting('tickq.simulator', true) IS DISTINCT FROM 'on' THEN
        RETURN tickq.cron_parse(p_cron, p_timezone);
    END IF;
    v_key := 'tickq.cron_' || md5(p_cron || E'\n' || p_timezone);
    v_kept := current_setting(v_key, true);
    IF v_kept <> '' THEN
        RETURN v_kept::tickq.calendar;
    END IF;
    v_calendar := tickq.cron_parse(p_cron, p_timezone);
    PERFORM set_config(v_key, v_calendar::text, false);
    RETURN v_calendar;
END
$$;


--
-- Name: FUNCTION cron_calendar(p_cron text, p_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.cron_calendar(p_cron text, p_timezone text) IS 'A five-field cron string (or @hourly, @daily, @weekly, @monthly, @yearly, @annually) in zone p_timezone as a tickq.calendar: single-number minute and hour as a wall-clock time, others on real time, Vixie''s day-of-month OR day-of-week rule. Raises 22023 naming what is wrong (@reboot and six-field forms included). In a simulator''s session each answer is kept for the session.';


--
-- Name: cron_field(text, text, integer, integer, text[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.cron_field(p_field text, p_what text, p_low integer, p_high integer, p_names text[]) RETURNS smallint[]
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
DECLARE
    v_part text;
    v_bound text;
    v_ends integer[];
    v_step integer;
    v_values integer[] := ARRAY[]::integer[];
BEGIN
    FOREACH v_part IN ARRAY string_to_array(lower(p_field), ',') LOOP
        IF v_part !~ '^(\*|[0-9a-z]{1,3}(-[0-9a-z]{1,3})?)(/[0-9]{1,3})?$' THEN
            RAISE EXCEPTION '% field "%": "%" is not a number, a name, a range, a step or *',
                p_what, p_field, v_part USING ERRCODE = '22023';
        END IF;
        v_ends := ARRAY[]::integer[];
        FOREACH v_bound IN ARRAY string_to_array(split_part(v_part, '/', 1), '-') LOOP
            v_ends := v_ends || CASE
                WHEN v_bound = '*' THEN NULL
                WHEN v_bound ~ '^[0-9]+$' THEN v_bound::integer
                ELSE array_position(p_names, v_bound) - 1 + p_low END;
            IF v_bound <> '*' AND (v_ends[cardinality(v_ends)] IS NULL
                OR NOT v_ends[cardinality(v_ends)] BETWEEN p_low AND p_high) THEN
                RAISE EXCEPTION '%', format('%s field "%s": %s is not a %s (%s-%s%s)', p_what, p_field, v_bound,
                    p_what, p_low, p_high, CASE WHEN p_names IS NOT NULL
                        THEN ' or ' || p_names[1] || '-' || p_names[cardinality(p_names)] ELSE '' END)
                    USING ERRCODE = '22023';
            END IF;
        END LOOP;
        v_step := coalesce(nullif(split_part(v_part, '/', 2), '')::integer, 1);
        IF v_step < 1 OR v_step > p_high - p_low + 1 THEN
            RAISE EXCEPTION '% field "%": a step must be from 1 to %, got %', p_what, p_field,
                p_high - p_low + 1, v_step USING ERRCODE = '22023';
        END IF;
        IF v_ends[1] IS NULL THEN
            v_ends := ARRAY[p_low, CASE WHEN p_what = 'day-of-week' THEN 6 ELSE p_high END];
        ELSIF cardinality(v_ends) = 1 THEN
            -- "5/15" counts from 5 to the field's end, as Vixie cron does.
            v_ends := ARRAY[v_ends[1], CASE WHEN v_part LIKE '%/%' THEN p_high ELSE v_ends[1] END];
        END IF;
        IF v_ends[1] > v_ends[2] THEN
            RAISE EXCEPTION '% field "%": the range %-% runs backwards', p_what, p_field, v_ends[1], v_ends[2]
                USING ERRCODE = '22023';
        END IF;
        v_values := v_values || ARRAY(SELECT generate_series(v_ends[1], v_ends[2], v_step));
    END LOOP;
    RETURN ARRAY(SELECT DISTINCT v.value::smallint FROM unnest(v_values) AS v (value) ORDER BY 1);
END
$_$;


--
-- Name: FUNCTION cron_field(p_field text, p_what text, p_low integer, p_high integer, p_names text[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.cron_field(p_field text, p_what text, p_low integer, p_high integer, p_names text[]) IS 'The values one cron field takes (lists, ranges, steps, *, names counted from p_low), sorted; raises 22023 naming the field for anything else.';


--
-- Name: cron_parse(text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.cron_parse(p_cron text, p_timezone text) RETURNS tickq.calendar
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
DECLARE
    v_text text := lower(btrim(p_cron));
    v_fields text[];
    v_calendar tickq.calendar;
BEGIN
    v_text := CASE v_text
        WHEN '@hourly' THEN '0 * * * *'
        WHEN '@daily' THEN '0 0 * * *' WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@monthly' THEN '0 0 1 * *'
        WHEN '@yearly' THEN '0 0 1 1 *' WHEN '@annually' THEN '0 0 1 1 *'
        ELSE v_text END;
    IF v_text = '@reboot' THEN
        RAISE EXCEPTION '@reboot runs once when cron starts, and tickq runs on a schedule only: '
            'give a schedule, or start the job with the system''s own boot service'
            USING ERRCODE = '22023';
    ELSIF v_text LIKE '@%' THEN
        RAISE EXCEPTION 'unknown form "%" (tickq takes @hourly, @daily, @weekly, @monthly, @yearly '
            'and @annually)', left(p_cron, 40) USING ERRCODE = '22023';
    END IF;
    v_fields := regexp_split_to_array(v_text, '\s+');
    IF cardinality(v_fields) IN (6, 7) THEN
        RAISE EXCEPTION 'has % fields: tickq takes the five of a crontab (minute hour day-of-month '
            'month day-of-week), with no seconds or year field', cardinality(v_fields)
            USING ERRCODE = '22023';
    ELSIF cardinality(v_fields) <> 5 THEN
        RAISE EXCEPTION 'must have five fields (minute hour day-of-month month day-of-week), got %',
            cardinality(v_fields) USING ERRCODE = '22023';
    END IF;
    v_calendar.minutes := tickq.cron_field(v_fields[1], 'minute', 0, 59, NULL);
    v_calendar.hours := tickq.cron_field(v_fields[2], 'hour', 0, 23, NULL);
    v_calendar.days := tickq.cron_field(v_fields[3], 'day-of-month', 1, 31, NULL);
    v_calendar.months := tickq.cron_field(v_fields[4], 'month', 1, 12,
        ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']);
    -- Weekdays as ISO numbers (cron's 0 and 7 are both Sunday).
    v_calendar.weekdays := ARRAY(SELECT DISTINCT CASE WHEN d.day = 0 THEN 7 ELSE d.day END::smallint
        FROM unnest(tickq.cron_field(v_fields[5], 'day-of-week', 0, 7,
            ARRAY['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'])) AS d (day) ORDER BY 1);
    -- Vixie cron: a field that starts with * leaves the day to the other one; when neither does,
    -- a day matches if either matches.
    v_calendar.either := v_fields[3] NOT LIKE '*%' AND v_fields[5] NOT LIKE '*%';
    v_calendar.days := CASE WHEN cardinality(v_calendar.days) < 31 THEN v_calendar.days END;
    v_calendar.months := CASE WHEN cardinality(v_calendar.months) < 12 THEN v_calendar.months END;
    v_calendar.weekdays := CASE WHEN cardinality(v_calendar.weekdays) < 7 THEN v_calendar.weekdays END;
    IF v_fields[1] ~ '^[0-9]+$' AND v_fields[2] ~ '^[0-9]+$' THEN
        v_calendar.times := ARRAY[make_time(v_calendar.hours[1], v_calendar.minutes[1], 0)];
        v_calendar.minutes := NULL;
        v_calendar.hours := NULL;
    END IF;
    v_calendar.timezone := p_timezone;
    RETURN v_calendar;
END
$_$;


--
-- Name: FUNCTION cron_parse(p_cron text, p_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.cron_parse(p_cron text, p_timezone text) IS 'Internal to tickq.cron_calendar: a five-field cron string (or @hourly, @daily, @weekly, @monthly, @yearly, @annually) in zone p_timezone as a tickq.calendar: single-number minute and hour as a wall-clock time, others on real time, Vixie''s day-of-month OR day-of-week rule. Raises 22023 naming what is wrong (@reboot and six-field forms included).';


--
-- Name: cron_problem(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.cron_problem(p_cron text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    PERFORM tickq.cron_calendar(p_cron, 'UTC');
    RETURN NULL;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN SQLERRM;
END
$$;


--
-- Name: FUNCTION cron_problem(p_cron text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.cron_problem(p_cron text) IS 'What is wrong with a cron string (tickq.cron_calendar''s refusal), or NULL.';


--
-- Name: describe_calendar(tickq.calendar); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.describe_calendar(p_calendar tickq.calendar) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_calendar.times IS NOT NULL THEN 'at ' || (
            SELECT string_agg(to_char(t.at_time, 'HH24:MI'), ',' ORDER BY t.at_time)
            FROM unnest(p_calendar.times) AS t (at_time))
        -- real time: "every 15 minutes", "at minute 0,30", then the hours unless all 24. One
        -- minute an hour is "every 60 minutes" only in every hour: "0 */3 * * *" runs three
        -- hours apart, "at minute 0 in hours 0,3,...".
        ELSE CASE WHEN cardinality(p_calendar.minutes) = 60 THEN 'every minute'
                WHEN p_calendar.minutes[1] = 0 AND 60 % cardinality(p_calendar.minutes) = 0
                    AND (cardinality(p_calendar.minutes) > 1 OR cardinality(p_calendar.hours) = 24)
                    AND p_calendar.minutes = ARRAY(SELECT generate_series(0, 59, 60 / cardinality(p_calendar.minutes)))::smallint[]
                    THEN 'every ' || 60 / cardinality(p_calendar.minutes) || ' minutes'
                ELSE 'at minute ' || tickq.number_ranges(p_calendar.minutes, NULL) END
            || CASE WHEN cardinality(p_calendar.hours) = 24 THEN ''
                ELSE ' in hours ' || tickq.number_ranges(p_calendar.hours, NULL) END
        END || tickq.describe_days(p_calendar)
$$;


--
-- Name: FUNCTION describe_calendar(p_calendar tickq.calendar); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.describe_calendar(p_calendar tickq.calendar) IS 'A calendar as one line: "at 06:00,18:00 on mon Europe/London", "every 15 minutes in hours 9-17 on mon-fri UTC".';


--
-- Name: describe_days(tickq.calendar); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.describe_days(p_calendar tickq.calendar) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT concat(
        CASE WHEN p_calendar.weekdays IS NOT NULL THEN ' on ' || concat_ws(',',
            tickq.number_ranges(ARRAY(SELECT d.day FROM unnest(p_calendar.weekdays) AS d (day) WHERE d.day <= 7),
                ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
            (SELECT string_agg(tickq.weekday_name(d.day), ',' ORDER BY d.day)
                FROM unnest(p_calendar.weekdays) AS d (day) WHERE d.day > 7)) END,
        CASE WHEN p_calendar.days IS NOT NULL THEN
            CASE WHEN p_calendar.either THEN ' or' ELSE '' END || ' on days ' || (
            SELECT string_agg(CASE WHEN d.day = -1 THEN 'last' ELSE d.day::text END, ','
                ORDER BY d.day < 0, abs(d.day))
            FROM unnest(p_calendar.days) AS d (day)) END,
        ' in ' || tickq.number_ranges(p_calendar.months,
            ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']),
        ' ' || p_calendar.timezone)
$$;


--
-- Name: FUNCTION describe_days(p_calendar tickq.calendar); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.describe_days(p_calendar tickq.calendar) IS 'The day filters of a calendar and its zone in words: " on mon,last fri on days 1,15,last in jan,jul Europe/London".';


--
-- Name: describe_schedule(interval, interval, time without time zone[], smallint[], text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_now timestamp with time zone DEFAULT now()) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT tickq.describe_schedule(p_every, p_offset, p_at_times, p_on_days, NULL, NULL, NULL, p_timezone, p_now)
$$;


--
-- Name: FUNCTION describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_now timestamp with time zone) IS 'tickq.describe_schedule for a schedule with no days of the month, months or cron string.';


--
-- Name: describe_schedule(interval, interval, time without time zone[], smallint[], smallint[], smallint[], text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_now timestamp with time zone DEFAULT now()) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    -- One expression, so the planner inlines it into queue_status: an every cadence costs no call.
    SELECT CASE
        WHEN p_every IS NOT NULL THEN 'every ' || tickq.format_duration(p_every)
            || CASE WHEN p_offset IS NOT NULL THEN ' offset ' || tickq.format_duration(p_offset) ELSE '' END
        WHEN p_cron IS NOT NULL THEN 'cron "' || p_cron || '": '
            || tickq.describe_calendar(tickq.cron_calendar(p_cron, p_timezone))
        ELSE tickq.describe_calendar(ROW(p_at_times, NULL, NULL, p_on_days, p_days, p_months, false,
            p_timezone)::tickq.calendar)
    END
$$;


--
-- Name: FUNCTION describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_now timestamp with time zone) IS 'A schedule as one line for people: "every 5m", "every 1h offset 20m", "at 06:00,18:00 on mon Europe/London", "at 00:00 on days last UTC" or "cron ""*/15 9-17 * * 1-5"": every 15 minutes in hours 9-17 on mon-fri UTC".';


--
-- Name: env_digests(text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.env_digests(p_kind text, p_env jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $_$
    -- Env values are often secrets: the mirror keeps a digest of each, enough for drift to see a
    -- change. The kind and name go into the digest, so equal values do not look equal. Values
    -- already in digest form (tickq.registry.env_digest computed them) are kept as they are.
    SELECT jsonb_object_agg(e.name, CASE
        WHEN e.value #>> '{}' ~ '^sha256:[0-9a-f]{64}$' THEN e.value
        ELSE to_jsonb('sha256:' || encode(sha256(convert_to(
            p_kind || ':' || e.name || '=' || (e.value #>> '{}'), 'UTF8')), 'hex'))
    END)
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_env) = 'object' THEN p_env END) AS e (name, value)
$_$;


--
-- Name: FUNCTION env_digests(p_kind text, p_env jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.env_digests(p_kind text, p_env jsonb) IS 'A kind''s env table with each value replaced by "sha256:" and the hex digest of "kind:NAME=value" (null for no env): the database never keeps an env value itself.';


--
-- Name: expected_duration(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.expected_duration(p_kind text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(expected interval, source text)
    LANGUAGE sql STABLE
    AS $$
    -- The 95th percentile of the last 20 successful runs once there are at least 5 of them,
    -- else the timeout (the worst case the watchdog allows). A session may name what another
    -- queue observed instead (tickq.observed_durations, {"kind": ["<interval>", "<source>"]}):
    -- `tickq check` judges a registry in a scratch database of its own with the user's queue's
    -- history, read from that queue's capacity view.
    WITH recent AS (
        SELECT r.duration
        FROM tickq.job_run AS r
        WHERE r.kind = p_kind AND r.outcome = 'ok' AND r.finished_at <= p_now
        ORDER BY r.id DESC
        LIMIT 20
    ),

    given AS (
        SELECT nullif(current_setting('tickq.observed_durations', true), '')::jsonb -> p_kind AS o
    ),

    found AS (
        SELECT (g.o ->> 0)::interval AS p95, g.o ->> 1 AS source
        FROM given AS g WHERE g.o IS NOT NULL
        UNION ALL
        SELECT
            percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(EPOCH FROM recent.duration))
            * '1 second'::interval,
            'p95 of ' || count(*) || ' runs'
        FROM recent
        WHERE NOT EXISTS (SELECT FROM given AS g WHERE g.o IS NOT NULL)
        HAVING count(*) >= 5
    )

    SELECT coalesce(least(f.p95, k.timeout), k.timeout), coalesce(f.source, 'timeout')
    FROM (SELECT) AS one
    LEFT JOIN found AS f ON true
    LEFT JOIN tickq.job_kind AS k ON k.name = p_kind
$$;


--
-- Name: FUNCTION expected_duration(p_kind text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.expected_duration(p_kind text, p_now timestamp with time zone) IS 'How long a run of the kind is expected to hold its slot: the 95th percentile of its last 20 successful runs once there are at least 5 (never above the timeout), else its timeout. The setting tickq.observed_durations (a check''s scratch database) stands in for the history.';


--
-- Name: expire_leases(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.expire_leases(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, leased_by text, leased_until timestamp with time zone)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_kind record;
    v_error text;
BEGIN
    FOR v_kind IN
        -- Expired leases are found among the slot rows (a heavy run's first one: it holds
        -- several); the kind's own lease decides.
        SELECT k.name, k.run_id, k.leased_by, k.leased_until
        FROM tickq.slot AS sl
        INNER JOIN tickq.job_run AS r ON sl.run_id = r.id AND sl.n = r.slot
        INNER JOIN tickq.job_kind AS k ON r.kind = k.name
        WHERE sl.leased_until < p_now AND k.run_id = sl.run_id AND k.leased_until < p_now
        ORDER BY k.leased_until
        FOR UPDATE OF k SKIP LOCKED
    LOOP
        -- Every claim calls this when a lease expired, so an error on one kind's data would stop
        -- the claims of all kinds: such a run is still recorded as lost and its lease released,
        -- the kind waits retry_max, and the error goes to the server log.
        BEGIN
            PERFORM tickq.finish_run(v_kind.run_id, 'lost', NULL,
                format('[tickq: lease expired at %s without a report from dispatcher %s]',
                    v_kind.leased_until, v_kind.leased_by),
                NULL, p_now);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_error = MESSAGE_TEXT;
            RAISE WARNING 'tickq.expire_leases: run % of kind "%": %; released without rescheduling',
                v_kind.run_id, v_kind.name, v_error;
            UPDATE tickq.job_run AS r SET finished_at = p_now, outcome = 'lost',
                output_tail = format('[tickq: lease expired at %s without a report from dispatcher %s; %s]',
                    v_kind.leased_until, v_kind.leased_by, left(v_error, 1000))
            WHERE r.id = v_kind.run_id;
            UPDATE tickq.job_kind AS k SET run_id = NULL, leased_by = NULL, leased_until = NULL,
                last_run_id = v_kind.run_id, attempts = 0, next_trigger = 'schedule',
                due_at = p_now + s.retry_max, updated_at = p_now
            FROM tickq.settings AS s
            WHERE k.name = v_kind.name;
            UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id = v_kind.run_id;
            UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL WHERE ps.run_id = v_kind.run_id;
        END;
        RETURN QUERY SELECT v_kind.run_id, v_kind.name, v_kind.leased_by, v_kind.leased_until;
    END LOOP;
END
$$;


--
-- Name: FUNCTION expire_leases(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.expire_leases(p_now timestamp with time zone) IS 'Turns every run whose lease expired without a report into a lost run (a failure: it counts in the streak and may retry, unless its cancel was asked) and makes its kind claimable again. Returns the runs it turned.';


--
-- Name: explain_kind(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.explain_kind(p_kind text, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_kind tickq.job_kind;
    v_settings tickq.settings;
    v_state text;
    v_due timestamptz;
BEGIN
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no kind "%" in the queue', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_due := greatest(v_kind.due_at, CASE WHEN v_kind.paused_until > p_now THEN v_kind.paused_until END);
    v_state := CASE
        WHEN v_kind.retired_at IS NOT NULL THEN 'retired'
        WHEN v_kind.run_id IS NOT NULL THEN 'running'
        WHEN NOT v_kind.enabled THEN 'disabled'
        WHEN v_kind.irreversible AND v_kind.armed_at IS NULL THEN 'unarmed'
        WHEN v_kind.paused_until > p_now THEN 'paused'
        WHEN v_kind.due_at <= p_now THEN 'waiting'
        ELSE 'idle'
    END;
    RETURN jsonb_build_object(
        'kind', v_kind.name,
        'state', v_state,
        'now', p_now,
        'priority', v_kind.priority,
        'schedule', tickq.describe_schedule(v_kind.every, v_kind.every_offset, v_kind.at_times,
            v_kind.on_days, v_kind.timezone, p_now),
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


--
-- Name: FUNCTION explain_kind(p_kind text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.explain_kind(p_kind text, p_now timestamp with time zone) IS 'Why a kind is or is not running as of p_now, as one JSON document: its state (retired, running, disabled, unarmed, paused, waiting: due and unclaimed, or idle until its next slot), the live run and its lease, the pause (until, by, reason), the due time and whether it is stale, for a waiting kind its place in the claim order, the runs holding the slots and the pools it names, and what it waits for (explain_queue), its weight and pools, the last finished run, the failure streak and the last tick. TQ003 for an unknown kind.';


--
-- Name: explain_queue(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.explain_queue(p_kind text, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- A due kind's place in the claim order (claim_jobs: stale kinds first, oldest first, then
    -- lane, due time, name) and in its lane, the kinds ahead of it, and the runs holding slots.
    WITH due AS (
        SELECT k.name, k.priority, k.due_at, k.due_at <= p_now - s.stale_after AS stale,
            k.due_at <= tickq.hold_from(s.stale_after, p_now) AS held
        FROM tickq.job_kind AS k
        CROSS JOIN tickq.settings AS s
        WHERE tickq.kind_claimable(k) AND k.run_id IS NULL
            AND k.due_at <= p_now AND (k.paused_until IS NULL OR k.paused_until <= p_now)
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


--
-- Name: FUNCTION explain_queue(p_kind text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.explain_queue(p_kind text, p_now timestamp with time zone) IS 'For tickq.explain_kind: a due kind''s place in the claim order and in its lane, the kinds just ahead of it, the slot limit, the free slots and the runs holding slots (kind, dispatcher, since, lease until, weight), the kind''s weight and each pool it names with its slots, busy, free and holders, and what of them it waits for (waits_for: the slots, too few free for its weight; each full pool; capacity held for a kind ahead of it that has waited half of stale_after and does not fit, as tickq.claim_fit holds it: that kind''s weight if short of slots, and its pools).';


--
-- Name: finish_run(bigint, tickq.outcome, integer, text, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.finish_run(OUT run_id bigint, OUT kind text, OUT outcome tickq.outcome, OUT failure_streak integer, OUT next_due_at timestamp with time zone, OUT next_trigger tickq.run_trigger, p_run_id bigint, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone DEFAULT now()) RETURNS record
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_run tickq.job_run;
    v_failed boolean := p_outcome IN ('failed', 'timeout', 'lost');
    v_again boolean;
BEGIN
    -- Callers have checked that the run is live and locked its kind row.
    UPDATE tickq.job_run AS r SET
        finished_at = p_now,
        outcome = p_outcome,
        exit_code = p_exit_code,
        output_tail = right(p_output_tail, 65536),
        duration = coalesce(p_duration, greatest(p_now - coalesce(r.started_at, r.claimed_at), '0'::interval))
    WHERE r.id = p_run_id
    RETURNING r.* INTO STRICT v_run;
    -- A run someone asked to cancel is never run again before its next slot, however it ended
    -- and whoever records it: its holder before it noticed (failed, timeout, interrupted), the
    -- next dispatcher on a dead holder's host or an expired lease (lost). One rule, here.
    v_again := v_run.cancel_requested_at IS NULL;
    -- A successful manual run a person started arms an irreversible kind (sql/api/08_chain.sql).
    IF p_outcome = 'ok' AND v_run.run_by IS NOT NULL THEN
        PERFORM tickq.arm_kind(v_run, p_now);
    END IF;

    UPDATE tickq.job_kind AS k SET
        run_id = NULL,
        leased_by = NULL,
        leased_until = NULL,
        last_run_id = v_run.id,
        failure_streak = CASE
            WHEN p_outcome = 'ok' THEN 0
            WHEN v_failed THEN k.failure_streak + 1
            ELSE k.failure_streak
        END,
        -- attempts counts the tries of the current slot: kept while retries remain.
        attempts = CASE
            WHEN p_outcome = 'interrupted' AND v_again THEN v_run.attempt - 1
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN v_run.attempt
            ELSE 0
        END,
        next_trigger = CASE
            WHEN p_outcome = 'interrupted' AND v_again AND v_run.run_trigger = 'retry' THEN 'retry'
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN 'retry'
            ELSE 'schedule'
        END::tickq.run_trigger,
        due_at = CASE
            -- Not the command's fault: due again at once (a manual run keeps the kind's slot).
            WHEN p_outcome = 'interrupted' AND v_again THEN
                CASE WHEN v_run.run_trigger = 'manual' THEN k.due_at ELSE least(k.due_at, p_now) END
            -- Exponential backoff: retry_base, then twice that, ... capped at retry_max. Worked
            -- in seconds as a double and capped before it becomes an interval: retry_base * 2^n
            -- as an interval overflows near n = 40, and that error stopped every claim.
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN
                p_now + make_interval(secs => least(extract(EPOCH FROM s.retry_max)::double precision,
                    extract(EPOCH FROM s.retry_base)::double precision
                        * power(2::double precision, least(v_run.attempt - 1, 60))))
            -- The next slot strictly after now: slots missed while asleep collapse into one run.
            -- A schedule with no slot ahead (none can be written today) waits a day rather than
            -- raise on due_at's NOT NULL in the middle of every claim's lease expiry.
            ELSE coalesce(tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, p_now),
                p_now + interval '1 day')
        END,
        updated_at = p_now
    FROM tickq.settings AS s
    WHERE k.name = v_run.kind
    RETURNING k.failure_streak, k.due_at, k.next_trigger INTO STRICT failure_streak, next_due_at, next_trigger;
    -- A run of weight 1 frees its one slot row by primary key; a heavier one every row it holds,
    -- and a pooled one its row of each pool.
    IF v_run.weight > 1 THEN
        UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id = p_run_id;
    ELSE
        UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL
        WHERE sl.n = v_run.slot AND sl.run_id = p_run_id;
    END IF;
    IF cardinality(v_run.pools) > 0 THEN
        UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL
        WHERE ps.pool = ANY(v_run.pools) AND ps.run_id = p_run_id;
    END IF;

    run_id := v_run.id;
    kind := v_run.kind;
    outcome := v_run.outcome;
END
$$;


--
-- Name: FUNCTION finish_run(OUT run_id bigint, OUT kind text, OUT outcome tickq.outcome, OUT failure_streak integer, OUT next_due_at timestamp with time zone, OUT next_trigger tickq.run_trigger, p_run_id bigint, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.finish_run(OUT run_id bigint, OUT kind text, OUT outcome tickq.outcome, OUT failure_streak integer, OUT next_due_at timestamp with time zone, OUT next_trigger tickq.run_trigger, p_run_id bigint, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) IS 'Internal: records how a live run ended, releases its lease and reschedules its kind (success: next slot after now; failure while retries remain: exponential backoff; otherwise the next slot). Cancelled is no failure: the streak is kept, no retry, the next slot after now. A run whose cancel was asked is never retried nor run again at once, whatever its outcome.';


--
-- Name: forget_kind(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.forget_kind(p_kind text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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


--
-- Name: FUNCTION forget_kind(p_kind text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.forget_kind(p_kind text) IS 'Deletes a retired kind: its row, its runs (with their steps and turns), its alerts and drift; returns how many runs went. Refuses a kind that is not retired or still has a leased run (TQ091) and an unknown one (TQ003).';


--
-- Name: forget_registry_digest(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.forget_registry_digest() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE tickq.queue_registry AS q SET digest = NULL WHERE q.digest IS NOT NULL;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION forget_registry_digest(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.forget_registry_digest() IS 'Trigger: a statement wrote what tickq.sync_registry writes (a kind''s registry columns, the settings, the [agents] caps, the slot rows), so the next sync cannot be skipped: forgets tickq.queue_registry.digest.';


--
-- Name: format_duration(interval); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.format_duration(p_duration interval) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    -- The registry's own spelling: 300 s is "5m", 5400 s "1h30m", 86400 s "1d". One expression,
    -- so the planner inlines it where it is used: that needs STABLE, as concat() is (declared
    -- IMMUTABLE it was called once per row, a third of queue_status over 10,000 kinds). The
    -- seconds are a double, not extract()'s numeric: integer steps on it cost far less.
    SELECT CASE WHEN date_part('epoch', p_duration) < 1 THEN date_part('epoch', p_duration)::text || 's'
        ELSE concat(
            nullif(floor(date_part('epoch', p_duration))::bigint / 86400, 0) || 'd',
            nullif(floor(date_part('epoch', p_duration))::bigint % 86400 / 3600, 0) || 'h',
            nullif(floor(date_part('epoch', p_duration))::bigint % 3600 / 60, 0) || 'm',
            nullif(floor(date_part('epoch', p_duration))::bigint % 60, 0) || 's'
        )
    END
$$;


--
-- Name: FUNCTION format_duration(p_duration interval); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.format_duration(p_duration interval) IS 'A duration as the registry writes it: "5m", "1h30m", "1d". Whole seconds;';


--
-- Name: grant_access(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.grant_access(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(role_name text, access text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_role record;
    v_grant record;
    v_function regprocedure;
    v_found integer;
BEGIN
    -- A role's access in this database is its setting tickq.access (ALTER ROLE ... IN DATABASE
    -- ... SET tickq.access = 'dispatcher'): kept by PostgreSQL per database, outside the schema,
    -- so it is there before the first migration and after every re-applied API file.
    FOR v_role IN
        SELECT r.rolname::text AS rolname, substr(c.setting, length('tickq.access=') + 1) AS access
        FROM pg_catalog.pg_db_role_setting AS s
        INNER JOIN pg_catalog.pg_database AS d ON s.setdatabase = d.oid
        INNER JOIN pg_catalog.pg_roles AS r ON s.setrole = r.oid
        CROSS JOIN LATERAL unnest(s.setconfig) AS c (setting)
        WHERE d.datname = current_database() AND c.setting LIKE 'tickq.access=%'
        ORDER BY r.rolname
    LOOP
        IF v_role.access NOT IN ('dispatcher', 'reader') THEN
            RAISE EXCEPTION 'role "%" has tickq.access = "%" in this database', v_role.rolname, v_role.access
                USING ERRCODE = 'TQ070',
                DETAIL = 'tickq.access is dispatcher or reader.',
                HINT = format('ALTER ROLE %I IN DATABASE %I SET tickq.access = ''dispatcher'' (or '
                    '''reader''), or RESET tickq.access; see sql/roles.sql.', v_role.rolname, current_database());
        END IF;
        -- Exactly the access's privileges: whatever the role held in the schema before goes.
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE CREATE ON SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('GRANT USAGE ON SCHEMA tickq TO %I', v_role.rolname);
        FOR v_grant IN
            SELECT a.privilege, a.object_name FROM tickq.access_privileges() AS a
            WHERE a.access = v_role.access
        LOOP
            IF v_grant.privilege = 'SELECT' THEN
                EXECUTE format('GRANT SELECT ON tickq.%I TO %I', v_grant.object_name, v_role.rolname);
                CONTINUE;
            END IF;
            v_found := 0;
            FOR v_function IN
                SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
                WHERE p.pronamespace = 'tickq'::regnamespace AND p.proname = v_grant.object_name
            LOOP
                EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_function, v_role.rolname);
                v_found := v_found + 1;
            END LOOP;
            IF v_found = 0 THEN
                RAISE EXCEPTION 'tickq.access_privileges names function tickq.%, which does not exist',
                    v_grant.object_name
                    USING ERRCODE = 'TQ071', HINT = 'Keep the list in sql/api/99_privileges.sql current.';
            END IF;
        END LOOP;
        role_name := v_role.rolname;
        access := v_role.access;
        RETURN NEXT;
    END LOOP;
END
$$;


--
-- Name: FUNCTION grant_access(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.grant_access(p_now timestamp with time zone) IS 'Gives every role whose setting tickq.access is dispatcher or reader in this database exactly the privileges tickq.access_privileges lists for it (and takes away any other right in the schema). Run by the migrator each time the API is applied, and by sql/roles.sql. Returns the roles.';


--
-- Name: health_problems(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.health_problems(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, problem text, detail text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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


--
-- Name: FUNCTION health_problems(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.health_problems(p_now timestamp with time zone) IS 'What a monitor should hear about as of p_now, one row per problem (`tickq status --check`): stale kinds, unpaused kinds failing at or past settings.alert_after, runs stuck past their lease, and no tick ended for two tick lengths (kind NULL).';


--
-- Name: held_ticks(timestamp with time zone, interval, integer, interval, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.held_ticks(p_first timestamp with time zone, p_step interval, p_ticks integer, p_period interval, p_tick interval, p_now timestamp with time zone DEFAULT now()) RETURNS integer[]
    LANGUAGE sql IMMUTABLE
    AS $$
    -- The ticks of the period from p_now are numbered 0, 1, ...; a run due at a slot is claimed at
    -- the first tick at or after it and holds p_ticks ticks, wrapping around the period's end as
    -- the same schedule would in the next period. A tick held twice is listed twice.
    SELECT coalesce(array_agg(
        (ceil(extract(EPOCH FROM s.at - p_now) / extract(EPOCH FROM p_tick))::integer + i) % b.ticks
        ORDER BY s.at, i), '{}')
    FROM (SELECT greatest(1, ceil(extract(EPOCH FROM p_period) / extract(EPOCH FROM p_tick)))::integer AS ticks)
        AS b
    CROSS JOIN generate_series(p_first, p_now + p_period - interval '1 microsecond', p_step) AS s (at)
    CROSS JOIN generate_series(0, p_ticks - 1) AS i
$$;


--
-- Name: FUNCTION held_ticks(p_first timestamp with time zone, p_step interval, p_ticks integer, p_period interval, p_tick interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.held_ticks(p_first timestamp with time zone, p_step interval, p_ticks integer, p_period interval, p_tick interval, p_now timestamp with time zone) IS 'Internal to spread_offsets: the ticks of a period (numbered from p_now, 0 first) held by runs due at p_first, p_first + p_step, ... before the period ends, each p_ticks ticks long.';


--
-- Name: hold_from(interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.hold_from(p_stale_after interval, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT p_now - p_stale_after / 2
$$;


--
-- Name: FUNCTION hold_from(p_stale_after interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.hold_from(p_stale_after interval, p_now timestamp with time zone) IS 'The due time from which the claim holds capacity for a kind that does not fit (half of stale_after ago; see tickq.claim_fit). tickq.claim_fit and tickq.explain_queue both ask it.';


--
-- Name: housekeeping(integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.housekeeping(p_batch integer DEFAULT 50000, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(lost integer, runs_pruned integer, drift_pruned integer, alerts_pruned integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_settings tickq.settings;
    v_cutoff timestamptz;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_cutoff := p_now - v_settings.retention;
    lost := (SELECT count(*) FROM tickq.expire_leases(p_now));

    -- Old runs go, but never the latest keep_runs of a kind, nor a live run. At most p_batch a
    -- time so one housekeeping run stays short; the next one carries on.
    WITH doomed AS (
        SELECT r.id
        FROM tickq.job_run AS r
        WHERE r.finished_at < v_cutoff
            AND r.id < coalesce((
                SELECT keep.id FROM tickq.job_run AS keep
                WHERE keep.kind = r.kind
                ORDER BY keep.id DESC
                OFFSET v_settings.keep_runs - 1 LIMIT 1
            ), 0)
        ORDER BY r.finished_at
        LIMIT p_batch
    ), gone AS (
        DELETE FROM tickq.job_run AS r USING doomed AS d WHERE r.id = d.id
        RETURNING r.kind, r.outcome, r.slots, extract(EPOCH FROM r.duration) AS seconds, r.finished_at
    ), counted AS (
        -- What the metrics' counters count, kept in run_total so they never fall.
        SELECT g.kind, g.outcome, count(*) AS runs, sum(greatest(g.slots - 1, 0)) AS merged,
            count(g.seconds) AS timed, coalesce(sum(g.seconds), 0) AS seconds,
            array(
                SELECT (SELECT count(*) FROM gone AS h
                    WHERE h.kind = g.kind AND h.outcome = g.outcome AND h.seconds <= b.bound)
                FROM unnest(tickq.metrics_buckets()) WITH ORDINALITY AS b (bound, n) ORDER BY b.n
            ) AS buckets,
            max(g.finished_at) AS last_finished_at
        FROM gone AS g
        GROUP BY g.kind, g.outcome
    ), kept AS (
        INSERT INTO tickq.run_total AS t (kind, outcome, runs, merged_slots, timed_runs, seconds, buckets,
            last_finished_at)
        SELECT c.kind, c.outcome, c.runs, c.merged, c.timed, c.seconds, c.buckets, c.last_finished_at
        FROM counted AS c
        ON CONFLICT (kind, outcome) DO UPDATE SET
            runs = t.runs + excluded.runs,
            merged_slots = t.merged_slots + excluded.merged_slots,
            timed_runs = t.timed_runs + excluded.timed_runs,
            seconds = t.seconds + excluded.seconds,
            buckets = array(
                SELECT coalesce(t.buckets[i], 0) + excluded.buckets[i]
                FROM generate_subscripts(excluded.buckets, 1) AS i ORDER BY i
            ),
            last_finished_at = greatest(t.last_finished_at, excluded.last_finished_at)
        RETURNING t.runs
    )
    SELECT coalesce(sum(c.runs), 0) INTO runs_pruned FROM counted AS c;

    WITH doomed AS (
        SELECT d.id
        FROM tickq.drift AS d
        WHERE d.detected_at < v_cutoff
            AND d.id < coalesce((
                SELECT keep.id FROM tickq.drift AS keep
                WHERE keep.kind IS NOT DISTINCT FROM d.kind
                ORDER BY keep.id DESC
                OFFSET v_settings.keep_runs - 1 LIMIT 1
            ), 0)
        ORDER BY d.detected_at
        LIMIT p_batch
    ), gone AS (
        DELETE FROM tickq.drift AS t USING doomed AS d WHERE t.id = d.id RETURNING t.id
    )
    SELECT count(*) INTO drift_pruned FROM gone;

    WITH gone AS (
        DELETE FROM tickq.alert AS a WHERE a.cleared_at < v_cutoff RETURNING a.id
    )
    SELECT count(*) INTO alerts_pruned FROM gone;
    RETURN NEXT;
END
$$;


--
-- Name: FUNCTION housekeeping(p_batch integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.housekeeping(p_batch integer, p_now timestamp with time zone) IS 'The built-in kind tickq.housekeeping: turns expired leases into lost runs, prunes job_run and the drift log older than settings.retention (keeping at least the latest keep_runs of each kind, and never a live run; what they counted joins run_total) and cleared alerts, at most p_batch rows each per call.';


--
-- Name: is_timezone(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.is_timezone(p_zone text, p_now timestamp with time zone DEFAULT now()) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET "TimeZone" TO 'UTC'
    AS $_$
BEGIN
    IF p_zone IS NULL OR p_zone !~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
        OR (p_zone ~ '[+-][0-9]' AND p_zone !~ '^Etc/')
        OR p_zone IN ('Factory', 'localtime', 'posixrules') OR p_zone ~ '^(posix|right)/' THEN
        RETURN false;
    END IF;
    -- The TimeZone setting takes zone names only (no abbreviations) and shows a name as the
    -- zone database spells it.
    PERFORM set_config('timezone', p_zone, true);
    RETURN current_setting('timezone') = p_zone;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN false;
END
$_$;


--
-- Name: FUNCTION is_timezone(p_zone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.is_timezone(p_zone text, p_now timestamp with time zone) IS 'True when p_zone is a zone of the IANA database spelled exactly as it is there (Europe/London, UTC, Etc/GMT+3); false for abbreviations (PST), other spellings (europe/london), POSIX strings (UTC+3) and Factory, localtime, posixrules. p_now is unused.';


--
-- Name: keep_registry_digest(text, jsonb, integer); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.keep_registry_digest(p_digest text, p_drift jsonb, p_slots integer) RETURNS void
    LANGUAGE plpgsql
    AS $_$
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
$_$;


--
-- Name: FUNCTION keep_registry_digest(p_digest text, p_drift jsonb, p_slots integer); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.keep_registry_digest(p_digest text, p_drift jsonb, p_slots integer) IS 'Records the digest of the registry a sync just applied (NULL when it left work for a later sync: a locked kind, a busy slot past p_slots or past a pool''s limit), after every write of that sync.';


--
-- Name: kind_claimable(tickq.job_kind); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.kind_claimable(p_kind tickq.job_kind) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT p_kind.enabled AND (NOT p_kind.irreversible OR p_kind.armed_at IS NOT NULL)
$$;


--
-- Name: FUNCTION kind_claimable(p_kind tickq.job_kind); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.kind_claimable(p_kind tickq.job_kind) IS 'True when a schedule may run the kind: enabled, and not irreversible or armed by a person''s successful run (whether it is due, running or paused is asked separately).';


--
-- Name: kind_history(text, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.kind_history(p_kind text, p_limit integer DEFAULT 20, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, run_trigger tickq.run_trigger, attempt integer, due_at timestamp with time zone, claimed_at timestamp with time zone, started_at timestamp with time zone, finished_at timestamp with time zone, waited interval, duration interval, outcome tickq.outcome, exit_code integer, slots_merged integer, dispatcher text, slot_at timestamp with time zone, first_slot_at timestamp with time zone, slots_covered integer, weight integer, pools text[])
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
BEGIN
    IF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.name = p_kind) THEN
        RAISE EXCEPTION 'no kind "%" in the queue', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    RETURN QUERY
    SELECT r.id, r.run_trigger, r.attempt::integer, r.due_at, r.claimed_at, r.started_at,
        r.finished_at, r.claimed_at - r.due_at, coalesce(r.duration, p_now - r.claimed_at),
        r.outcome, r.exit_code, r.slots::integer, r.dispatcher, r.slot_at, r.first_slot_at, r.slots_covered,
        r.weight::integer, r.pools
    FROM tickq.job_run AS r
    WHERE r.kind = p_kind AND r.claimed_at <= p_now
    ORDER BY r.id DESC
    LIMIT p_limit;
END
$$;


--
-- Name: FUNCTION kind_history(p_kind text, p_limit integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.kind_history(p_kind text, p_limit integer, p_now timestamp with time zone) IS 'The last p_limit runs of a kind, newest first: trigger, attempt, due/claimed/started/finished, wait, duration (so far, for a running one), outcome, exit code, slots merged, and the slots it covers (latest, earliest, how many; a retry its first try''s), the global slots it took (weight) and the pools it held a slot of. TQ003 for an unknown kind.';


--
-- Name: kind_name_ok(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.kind_name_ok(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$
    SELECT p_name ~ '^[a-z0-9][a-z0-9_.-]{0,99}$'
$_$;


--
-- Name: FUNCTION kind_name_ok(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.kind_name_ok(p_name text, p_now timestamp with time zone) IS 'The kind-name rule, written once: 1-100 characters of a-z 0-9 _ . - starting with a letter or digit. p_now is unused.';


--
-- Name: kind_problems(text, jsonb, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.kind_problems(p_name text, p_entry jsonb, p_default_timezone text) RETURNS TABLE(key text, problem text)
    LANGUAGE plpgsql
    AS $_$
#variable_conflict use_column
DECLARE
    v_entry jsonb := p_entry;
    v_seen text[] := ARRAY[]::text[];
    v_key text;
    v_step text[];
    v_message text;
    v_low jsonb := to_jsonb((SELECT l.low FROM tickq.registry_limit('timeout') AS l));
    v_long jsonb := to_jsonb((SELECT l.high FROM tickq.registry_limit('every') AS l));
BEGIN
    -- tickq.parse_kind stops at the first value it refuses. Each refused value is recorded and
    -- replaced by one the parser accepts (its default, or a harmless stand-in), and the entry is
    -- parsed again, so one answer names every problem of the kind in the parser's words. A
    -- problem no stand-in can clear (the name, the entry's shape) ends the list.
    LOOP
        BEGIN
            PERFORM tickq.parse_kind(p_name, v_entry, p_default_timezone);
            RETURN;
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
        END;
        RETURN QUERY SELECT v_key, tickq.registry_problem(v_message, p_name, v_key);
        IF v_key = ANY(v_seen) OR v_key IN ('name', '*') OR cardinality(v_seen) > 40 THEN
            RETURN;
        END IF;
        v_seen := array_append(v_seen, v_key);
        IF v_key ~ '^steps\[[0-9]+\]\.[a-z_]+$' THEN
            -- one key of one step: its stand-in, so the other steps are judged too
            v_step := ARRAY['steps', (substring(v_key FROM '[0-9]+')::integer - 1)::text,
                substring(v_key FROM '[a-z_]+$')];
            v_entry := CASE v_step[3]
                WHEN 'timeout' THEN jsonb_set(v_entry, v_step, v_low)
                WHEN 'command' THEN jsonb_set(v_entry, v_step, '["true"]')
                WHEN 'name' THEN jsonb_set(v_entry, v_step, to_jsonb('step-' || v_step[2]))
                ELSE v_entry #- v_step END;
        ELSIF tickq.registry_problem(v_message, p_name, v_key) = 'unknown key'
            OR v_key IN ('cwd', 'env', 'ping_url', 'offset', 'on', 'days', 'months', 'timezone', 'irreversible', 'resume',
                'priority', 'retries', 'enabled', 'first_run', 'weight', 'pools', 'catch_up') THEN
            v_entry := v_entry - v_key;
        ELSIF v_key = 'timeout' THEN
            -- a chain's own timeout may be left out (the sum of its steps')
            v_entry := CASE WHEN v_entry ? 'steps' THEN v_entry - 'timeout'
                ELSE jsonb_set(v_entry, '{timeout}', v_low) END;
        ELSIF v_key = 'command' THEN
            v_entry := jsonb_set(v_entry, '{command}', '["true"]');
        ELSIF v_key = 'at' THEN
            v_entry := jsonb_set(v_entry, '{at}', '"00:00"');
        ELSIF v_key = 'cron' THEN
            -- a refused cron string, or one beside every or at: the schedule is judged no further
            v_entry := jsonb_set(v_entry - ARRAY['cron', 'at', 'on', 'days', 'months', 'timezone', 'offset'],
                '{every}', v_long);
        ELSIF v_key = 'every' AND v_entry ? 'every' AND NOT v_entry ? 'at' THEN
            v_entry := jsonb_set(v_entry, '{every}', v_long);
        ELSIF v_key = 'every' THEN
            -- neither or both of every and at: the schedule is judged no further
            v_entry := jsonb_set(v_entry - ARRAY['at', 'on', 'days', 'months', 'timezone', 'offset'], '{every}', v_long);
        ELSIF v_key = 'steps' AND v_message ~ ' used twice$' THEN
            -- repeated step names (tickq.parse_chain): each step named by its place, so the chain,
            -- its timeout among the rest, is judged further
            v_entry := jsonb_set(v_entry, '{steps}', (SELECT jsonb_agg(jsonb_set(e.step, '{name}',
                to_jsonb('step-' || e.n)) ORDER BY e.n)
                FROM jsonb_array_elements(v_entry -> 'steps') WITH ORDINALITY AS e (step, n)));
        ELSIF v_key ~ '^steps' THEN
            -- a chain whose steps are refused otherwise is judged further as a plain kind
            v_entry := jsonb_set(v_entry - ARRAY['steps', 'resume'], '{command}', '["true"]');
            v_entry := CASE WHEN v_entry ? 'timeout' THEN v_entry
                ELSE jsonb_set(v_entry, '{timeout}', v_low) END;
        ELSE
            RETURN;
        END IF;
    END LOOP;
END
$_$;


--
-- Name: FUNCTION kind_problems(p_name text, p_entry jsonb, p_default_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.kind_problems(p_name text, p_entry jsonb, p_default_timezone text) IS 'Every value tickq.parse_kind refuses in one registry entry, one row per key (the message without its "where" start), found by parsing again with each refused value replaced; changes nothing.';


--
-- Name: kinds_to_catch_up(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.kinds_to_catch_up(p_now timestamp with time zone DEFAULT now()) RETURNS SETOF text
    LANGUAGE sql STABLE
    AS $$
    -- One SELECT, so that the claim's EXISTS inlines it (job_kind_catch_up's predicate). A kind
    -- a claim could take (enabled, armed, not running, not paused) whose scheduled due time is
    -- later than its catch_up; a retry's due time is no slot and never skipped.
    SELECT k.name FROM tickq.job_kind AS k
    WHERE k.catch_up IS NOT NULL AND tickq.kind_claimable(k) AND k.run_id IS NULL
        AND k.due_at < p_now AND k.due_at < p_now - k.catch_up AND k.next_trigger = 'schedule'
        AND (k.paused_until IS NULL OR k.paused_until <= p_now)
$$;


--
-- Name: FUNCTION kinds_to_catch_up(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.kinds_to_catch_up(p_now timestamp with time zone) IS 'The kinds a claim could take at p_now whose scheduled due time is later than their catch_up: tickq.catch_up_kinds skips their old slots before a claim.';


--
-- Name: last_slot(interval, interval, time without time zone[], smallint[], smallint[], smallint[], text, text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.last_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    -- One expression, so that a claim inlines it: an every cadence costs no function call.
    SELECT CASE
        WHEN p_since >= p_now THEN p_since
        -- next_slot's clock alignment (Unix epoch, shifted by the offset), in whole microseconds
        WHEN p_every IS NOT NULL THEN greatest(p_since,
            date_bin(p_every, p_now, '1970-01-01 00:00:00+00'::timestamptz + coalesce(p_offset, '0 seconds'::interval)))
        ELSE coalesce(tickq.calendar_last(
            tickq.calendar_of(p_at_times, p_on_days, p_days, p_months, p_cron, p_timezone), p_since, p_now), p_since)
    END
$$;


--
-- Name: FUNCTION last_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.last_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) IS 'The latest slot of a schedule in (p_since, p_now], or p_since when none falls there: the slot a run merging the slots since p_since stands for (job_run.slot_at, TICKQ_SLOT).';


--
-- Name: legacy_zone_problem(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.legacy_zone_problem(p_zone text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT format('%s is a legacy name: %s; use %s', l.zone, l.what, l.use)
    FROM (VALUES
        ('EST', 'a fixed UTC-5 with no daylight saving',
            'America/New_York for Eastern time (or Etc/GMT+5 for UTC-5 all year)'),
        ('MST', 'a fixed UTC-7 with no daylight saving',
            'America/Denver for Mountain time, America/Phoenix for Arizona (or Etc/GMT+7)'),
        ('HST', 'a fixed UTC-10', 'Pacific/Honolulu (or Etc/GMT+10)'),
        ('EST5EDT', 'US Eastern rules without the history of any place', 'America/New_York'),
        ('CST6CDT', 'US Central rules without the history of any place', 'America/Chicago'),
        ('MST7MDT', 'US Mountain rules without the history of any place', 'America/Denver'),
        ('PST8PDT', 'US Pacific rules without the history of any place', 'America/Los_Angeles')
    ) AS l (zone, what, use)
    WHERE l.zone = p_zone
$$;


--
-- Name: FUNCTION legacy_zone_problem(p_zone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.legacy_zone_problem(p_zone text) IS 'The registry''s message for a legacy zone name that is a zone but not what a user means (EST, MST, HST, EST5EDT, CST6CDT, MST7MDT, PST8PDT): what it is and the IANA name to use; NULL for any other name.';


--
-- Name: live_leases(bigint[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.live_leases(p_run_ids bigint[]) RETURNS TABLE(run_id bigint, kind text, leased_by text, leased_until timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- A live run is the one its kind's lease points at; by the kind's primary key, no lock.
    SELECT k.run_id, k.name, k.leased_by, k.leased_until
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name AND k.run_id = r.id
    WHERE r.id = ANY(p_run_ids)
$$;


--
-- Name: FUNCTION live_leases(p_run_ids bigint[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.live_leases(p_run_ids bigint[]) IS 'The runs among p_run_ids that are still live (running, their kind''s lease on them), with the dispatcher holding each and its lease''s end. A tick asks it of the reports it kept: one whose run is still live, leased as it was when reported, was lost by an asynchronous failover and is reported again (tickq.report_late_run). Reads only: no lock, no write.';


--
-- Name: live_run(bigint, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.live_run(p_run_id bigint, p_dispatcher text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_run tickq.job_run;
    v_kind tickq.job_kind;
BEGIN
    -- A live run is the one a kind's lease points at. Lock that kind (kind before run, the
    -- order claims and lease expiry use too); the caller's UPDATE of the run locks the run.
    SELECT k.* INTO v_kind
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.id = p_run_id AND k.run_id = p_run_id
    FOR UPDATE OF k;
    IF FOUND AND v_kind.leased_by = p_dispatcher THEN
        RETURN;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION 'run % of kind "%" is leased by dispatcher %, not %',
            p_run_id, v_kind.name, v_kind.leased_by, p_dispatcher
            USING ERRCODE = 'TQ001', HINT = 'Nothing was changed.';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        -- Never claimed here: a claim lost in a failover to a standby that had not received
        -- it, or a report sent to another database. Its own code: the result is kept aside.
        RAISE EXCEPTION 'run % does not exist', p_run_id USING ERRCODE = 'TQ007',
            HINT = 'Nothing was changed.';
    END IF;
    RAISE EXCEPTION 'run % of kind "%" is not live: it ended as % at %',
        p_run_id, v_run.kind, v_run.outcome, v_run.finished_at
        USING ERRCODE = 'TQ001',
        DETAIL = 'A run is reported once, and a run whose lease expired was already recorded as lost.',
        HINT = 'Nothing was changed.';
END
$$;


--
-- Name: FUNCTION live_run(p_run_id bigint, p_dispatcher text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.live_run(p_run_id bigint, p_dispatcher text) IS 'Internal: locks the kind leased by a run that is still live and leased to p_dispatcher, or raises TQ001 saying why not (TQ007 when the database has no such run) and changes nothing.';


--
-- Name: load_agent(bigint); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.load_agent(p_id bigint) RETURNS TABLE(id bigint, name text, kind text, prompt text, max_turns integer, timeout interval, owner text, tools text[], timezone text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT a.id, a.name, 'agent.' || a.name, a.prompt, least(a.max_turns, s.max_turns),
        least(a.timeout, s.max_timeout), a.owner, a.tools, a.timezone
    FROM tickq.agent AS a
    CROSS JOIN tickq.agent_settings AS s
    WHERE a.id = p_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent with id %', p_id USING ERRCODE = 'TQ041',
            HINT = 'The agent was removed after its run was claimed.';
    END IF;
END
$$;


--
-- Name: FUNCTION load_agent(p_id bigint); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.load_agent(p_id bigint) IS 'What the agent runner needs of an agent: its prompt, turn and time limits within the registry''s current caps, owner and tools. TQ041 when there is no such agent.';


--
-- Name: metrics_buckets(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_buckets() RETURNS double precision[]
    LANGUAGE sql IMMUTABLE
    AS $$
    -- Seconds: a second, five, fifteen, a minute, five, fifteen, an hour, four, a day.
    SELECT '{1,5,15,60,300,900,3600,14400,86400}'::double precision[]
$$;


--
-- Name: FUNCTION metrics_buckets(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_buckets() IS 'The upper bounds (le, in seconds) of the run duration histogram of tickq.metrics_text, in order; tickq.run_count.buckets (and run_total.buckets) count runs against the same bounds. p_now is unused.';


--
-- Name: metrics_families(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_families() RETURNS TABLE(family text, ord integer, kind text, help text)
    LANGUAGE sql IMMUTABLE
    AS $$
    VALUES
        ('tickq_runs_total', 1, 'counter', 'Runs that ended, by kind and outcome (lost: its lease ran out before a report).'),
        ('tickq_merged_slots_total', 2, 'counter',
            'Scheduled slots of a kind merged into another of its runs (missed while no tick ran).'),
        ('tickq_run_duration_seconds', 3, 'histogram', 'How long the runs of a kind took.'),
        ('tickq_last_success_timestamp_seconds', 4, 'gauge',
            'When the last run of a kind that ended ok finished (Unix time).'),
        ('tickq_kind_lateness_seconds', 5, 'gauge',
            'How long a due kind has waited unclaimed; 0 when not due, running, paused, disabled or unarmed.'),
        ('tickq_kind_stale', 6, 'gauge', '1 while a kind is due and unclaimed past stale_after.'),
        ('tickq_kind_failure_streak', 7, 'gauge', 'Runs of a kind in a row that did not end ok.'),
        ('tickq_kind_running', 8, 'gauge', '1 while a run of the kind holds a lease.'),
        ('tickq_kind_paused', 9, 'gauge', '1 while an operator''s pause of the kind lasts.'),
        ('tickq_slots', 10, 'gauge', 'The slot limit: how many runs may go on at once.'),
        ('tickq_slots_used', 11, 'gauge', 'Slots held by live runs (a run holds its kind''s weight).'),
        ('tickq_slots_free', 12, 'gauge', 'Slots a claim could take now.'),
        ('tickq_kind_weight', 13, 'gauge', 'The slots each run of a kind takes (its weight).'),
        ('tickq_pool_slots', 14, 'gauge', 'A pool''s limit: how many runs of the kinds naming it may go on at once.'),
        ('tickq_pool_slots_used', 15, 'gauge', 'Slots of a pool held by live runs.'),
        ('tickq_pool_slots_free', 16, 'gauge', 'Slots of a pool a claim could take now.'),
        ('tickq_pool_kinds_waiting', 17, 'gauge', 'Kinds naming a pool that are due and unclaimed.'),
        ('tickq_last_tick_timestamp_seconds', 18, 'gauge',
            'When the last tick on each dispatcher host ended (Unix time).'),
        ('tickq_tick_seconds', 19, 'gauge', 'The registry''s tick: how often the timer should fire.'),
        ('tickq_stale_after_seconds', 20, 'gauge', 'How long a due kind may wait before it is stale.'),
        ('tickq_alert_after', 21, 'gauge', 'The failure streak at which a kind is alerted as failing.')
$$;


--
-- Name: FUNCTION metrics_families(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_families() IS 'The metric families of tickq.metrics_text, in the order it writes them: name, type and help.';


--
-- Name: metrics_kind_gauge(tickq.metrics_kind[], text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_kind_gauge(p_kinds tickq.metrics_kind[], p_family text) RETURNS TABLE(who text, lines text)
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT k.name, concat(p_family, '{kind=', k.label, '} ', CASE p_family
        WHEN 'tickq_kind_lateness_seconds' THEN trim_scale(k.lateness)::text
        WHEN 'tickq_kind_stale' THEN k.stale::integer::text
        WHEN 'tickq_kind_failure_streak' THEN k.failure_streak::text
        WHEN 'tickq_kind_running' THEN k.running::integer::text
        WHEN 'tickq_kind_paused' THEN k.paused::integer::text
        WHEN 'tickq_kind_weight' THEN k.weight::text
    END, E'\n')
    FROM unnest(p_kinds) AS k
$$;


--
-- Name: FUNCTION metrics_kind_gauge(p_kinds tickq.metrics_kind[], p_family text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_kind_gauge(p_kinds tickq.metrics_kind[], p_family text) IS 'A gauge of a kind with one value, p_family (tickq_kind_lateness_seconds, _stale, _failure_streak, _running, _paused, _weight): per kind of p_kinds (who) its line.';


--
-- Name: metrics_kinds_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_kinds_at(p_now timestamp with time zone DEFAULT now()) RETURNS SETOF tickq.metrics_kind
    LANGUAGE sql STABLE
    AS $$
    -- Every live kind once, by name (C): its counters (tickq.run_count: outcomes, ok to skipped,
    -- as tickq_runs_total lists them; buckets: the bounds of tickq.metrics_buckets) and its gauges
    -- as of p_now (stale: tickq.stale_due_at).
    SELECT k.name, tickq.metrics_label(k.name), coalesce(c.runs[2:], '{0,0,0,0,0,0,0}'), coalesce(c.merged_slots, 0),
        coalesce(c.timed_runs, 0), coalesce(c.seconds, 0), coalesce(c.buckets, '{0,0,0,0,0,0,0,0,0}'), c.last_ok,
        CASE
            WHEN tickq.kind_claimable(k) AND k.run_id IS NULL
                AND NOT coalesce(k.paused_until > p_now, false)
                AND greatest(k.due_at, k.paused_until) <= p_now
                THEN extract(EPOCH FROM p_now - greatest(k.due_at, k.paused_until))
            ELSE 0
        END,
        st.kind IS NOT NULL, k.failure_streak, k.run_id IS NOT NULL, coalesce(k.paused_until > p_now, false), k.weight
    FROM tickq.job_kind AS k
    LEFT JOIN tickq.run_count AS c ON k.name = c.kind
    LEFT JOIN (SELECT s.kind FROM tickq.stale_due_at(p_now) AS s) AS st ON k.name = st.kind
    WHERE k.retired_at IS NULL
    ORDER BY k.name COLLATE "C"
$$;


--
-- Name: FUNCTION metrics_kinds_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_kinds_at(p_now timestamp with time zone) IS 'Every live kind once (tickq.metrics_kind), by name (C), for tickq.metrics_text: its label, its runs that ended by outcome (ok to skipped), the merged slots, runs with a duration, their seconds, the cumulative counts per bound of metrics_buckets and the last success (tickq.run_count: kept or pruned); and as of p_now its lateness, stale, failure streak, running, paused and weight.';


--
-- Name: metrics_label(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_label(p_value text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    -- A label value as the exposition format quotes it: backslash, double quote, newline.
    SELECT '"' || replace(replace(replace(p_value, '\', '\\'), '"', '\"'), E'\n', '\n') || '"'
$$;


--
-- Name: FUNCTION metrics_label(p_value text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_label(p_value text) IS 'p_value as a quoted Prometheus label value (backslash, double quote and newline escaped).';


--
-- Name: metrics_last_success(tickq.metrics_kind[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_last_success(p_kinds tickq.metrics_kind[]) RETURNS TABLE(who text, lines text)
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT k.name,
        concat('tickq_last_success_timestamp_seconds{kind=', k.label, '} ', trim_scale(extract(EPOCH FROM k.last_ok)),
            E'\n')
    FROM unnest(p_kinds) AS k
    WHERE k.last_ok IS NOT NULL
$$;


--
-- Name: FUNCTION metrics_last_success(p_kinds tickq.metrics_kind[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_last_success(p_kinds tickq.metrics_kind[]) IS 'tickq_last_success_timestamp_seconds (gauge): per kind of p_kinds that ever ended ok (who) its line, when the last such run finished (Unix time).';


--
-- Name: metrics_merged_slots(tickq.metrics_kind[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_merged_slots(p_kinds tickq.metrics_kind[]) RETURNS TABLE(who text, lines text)
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT k.name, concat('tickq_merged_slots_total{kind=', k.label, '} ', k.merged, E'\n') FROM unnest(p_kinds) AS k
$$;


--
-- Name: FUNCTION metrics_merged_slots(p_kinds tickq.metrics_kind[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_merged_slots(p_kinds tickq.metrics_kind[]) IS 'tickq_merged_slots_total (counter): per kind of p_kinds (who) its line, the slots merged into its runs.';


--
-- Name: metrics_queue(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_queue(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(family text, who text, lines text)
    LANGUAGE sql STABLE
    AS $$
    -- The slots, each pool (who: its name), each host's last tick (who: the host) and the
    -- settings the alert rules compare with.
    SELECT x.family, '', concat(x.family, ' ', x.value, E'\n')
    FROM tickq.slot_occupancy_at(p_now) AS o
    CROSS JOIN LATERAL (VALUES
        ('tickq_slots', o.slots::text), ('tickq_slots_used', o.busy::text), ('tickq_slots_free', o.free::text)
    ) AS x (family, value)
    UNION ALL
    SELECT x.family, o.pool, concat(x.family, '{pool=', tickq.metrics_label(o.pool), '} ', x.value, E'\n')
    FROM tickq.pool_occupancy_at(p_now) AS o
    CROSS JOIN LATERAL (VALUES
        ('tickq_pool_slots', o.slots::text), ('tickq_pool_slots_used', o.busy::text),
        ('tickq_pool_slots_free', o.free::text), ('tickq_pool_kinds_waiting', o.waiting::text)
    ) AS x (family, value)
    UNION ALL
    SELECT 'tickq_last_tick_timestamp_seconds', d.host, concat('tickq_last_tick_timestamp_seconds{host=',
        tickq.metrics_label(d.host), '} ', trim_scale(extract(EPOCH FROM d.last_tick_at)), E'\n')
    FROM tickq.dispatcher_tick AS d
    UNION ALL
    SELECT x.family, '', concat(x.family, ' ', x.value, E'\n')
    FROM tickq.settings AS s
    CROSS JOIN LATERAL (VALUES
        ('tickq_tick_seconds', extract(EPOCH FROM s.tick)::text),
        ('tickq_stale_after_seconds', extract(EPOCH FROM s.stale_after)::text),
        ('tickq_alert_after', s.alert_after::text)
    ) AS x (family, value)
$$;


--
-- Name: FUNCTION metrics_queue(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_queue(p_now timestamp with time zone) IS 'The queue''s own families as of p_now, per family and name (who) a line: the slots (used, free), each pool''s, each host''s last tick, and the tick, stale_after and alert_after the alert rules compare with.';


--
-- Name: metrics_run_duration(tickq.metrics_kind[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_run_duration(p_kinds tickq.metrics_kind[]) RETURNS TABLE(who text, lines text)
    LANGUAGE sql IMMUTABLE
    AS $$
    -- A bucket per bound of tickq.metrics_buckets (cumulative), +Inf, the sum and the count.
    SELECT k.name, concat(
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[1], '"} ', k.buckets[1], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[2], '"} ', k.buckets[2], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[3], '"} ', k.buckets[3], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[4], '"} ', k.buckets[4], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[5], '"} ', k.buckets[5], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[6], '"} ', k.buckets[6], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[7], '"} ', k.buckets[7], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[8], '"} ', k.buckets[8], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[9], '"} ', k.buckets[9], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="+Inf"} ', k.timed, E'\n',
        'tickq_run_duration_seconds_sum{kind=', k.label, '} ', trim_scale(k.seconds), E'\n',
        'tickq_run_duration_seconds_count{kind=', k.label, '} ', k.timed, E'\n')
    FROM unnest(p_kinds) AS k
    CROSS JOIN (SELECT tickq.metrics_buckets() AS b) AS x
$$;


--
-- Name: FUNCTION metrics_run_duration(p_kinds tickq.metrics_kind[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_run_duration(p_kinds tickq.metrics_kind[]) IS 'tickq_run_duration_seconds (histogram): per kind of p_kinds (who) its lines: the runs at most each bound of tickq.metrics_buckets long (cumulative), +Inf and the count (the runs with a duration), the sum of their seconds.';


--
-- Name: metrics_runs_total(tickq.metrics_kind[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_runs_total(p_kinds tickq.metrics_kind[]) RETURNS TABLE(who text, lines text)
    LANGUAGE sql IMMUTABLE
    AS $$
    -- A line per outcome but running, in the enum's order (tickq.metrics_kinds_at's outcomes).
    SELECT k.name, concat(
        'tickq_runs_total{kind=', k.label, ',outcome="ok"} ', k.outcomes[1], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="failed"} ', k.outcomes[2], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="timeout"} ', k.outcomes[3], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="interrupted"} ', k.outcomes[4], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="lost"} ', k.outcomes[5], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="cancelled"} ', k.outcomes[6], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="skipped"} ', k.outcomes[7], E'\n')
    FROM unnest(p_kinds) AS k
$$;


--
-- Name: FUNCTION metrics_runs_total(p_kinds tickq.metrics_kind[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_runs_total(p_kinds tickq.metrics_kind[]) IS 'tickq_runs_total (counter): per kind of p_kinds (who) its lines, its runs that ended by outcome.';


--
-- Name: metrics_text(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.metrics_text(p_now timestamp with time zone DEFAULT now()) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET work_mem TO '64MB'
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Each family's HELP and TYPE, then its lines by name (C), families in their order: the
    -- lines of every family sorted at once and joined once.
    WITH k AS (SELECT array_agg(m) AS kinds FROM tickq.metrics_kinds_at(p_now) AS m),
    lines (family, who, lines) AS (
        SELECT 'tickq_runs_total', f.* FROM k CROSS JOIN tickq.metrics_runs_total(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_merged_slots_total', f.* FROM k CROSS JOIN tickq.metrics_merged_slots(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_run_duration_seconds', f.* FROM k CROSS JOIN tickq.metrics_run_duration(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_last_success_timestamp_seconds', f.* FROM k CROSS JOIN tickq.metrics_last_success(k.kinds) AS f
        UNION ALL
        SELECT g.family, f.* FROM k
        CROSS JOIN unnest(ARRAY['tickq_kind_lateness_seconds', 'tickq_kind_stale', 'tickq_kind_failure_streak',
            'tickq_kind_running', 'tickq_kind_paused', 'tickq_kind_weight']) AS g (family)
        CROSS JOIN LATERAL tickq.metrics_kind_gauge(k.kinds, g.family) AS f
        UNION ALL
        SELECT * FROM tickq.metrics_queue(p_now)
    )
    SELECT string_agg(x.line, '' ORDER BY x.ord, x.sample, x.who COLLATE "C")
    FROM (
        SELECT f.ord, false AS sample, '' AS who,
            concat('# HELP ', f.family, ' ', f.help, E'\n# TYPE ', f.family, ' ', f.kind, E'\n') AS line
        FROM tickq.metrics_families() AS f
        UNION ALL
        SELECT f.ord, true, l.who, l.lines FROM lines AS l INNER JOIN tickq.metrics_families() AS f ON l.family = f.family
    ) AS x
$$;


--
-- Name: FUNCTION metrics_text(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.metrics_text(p_now timestamp with time zone) IS 'The queue as Prometheus metrics in the text exposition format, as of p_now: per kind its runs by outcome, merged slots and a duration histogram (counters: every run that ended, pruned or not, tickq.run_count), last success, lateness, stale, failure streak, running, paused and weight; the slots used and free, and each pool''s with the kinds waiting on it; each host''s last tick; the tick, stale_after and alert_after the rules compare with. Each family''s HELP and TYPE, then its lines by name (one function per family over the kinds read once: tickq.metrics_kinds_at), in tickq.metrics_families'' order.';


--
-- Name: month_end_at(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.month_end_at(p_zone text, p_at timestamp with time zone DEFAULT now()) RETURNS date
    LANGUAGE sql STABLE
    AS $$
    -- On the month's last day or the next month's first, in the zone: that month's last day.
    SELECT CASE
        WHEN extract(DAY FROM t.local_at + interval '1 day') = 1 THEN t.local_at::date
        WHEN extract(DAY FROM t.local_at) = 1 THEN (t.local_at - interval '1 day')::date
    END
    FROM (SELECT p_at AT TIME ZONE p_zone AS local_at) AS t
$$;


--
-- Name: FUNCTION month_end_at(p_zone text, p_at timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.month_end_at(p_zone text, p_at timestamp with time zone) IS 'The last day of the month whose end p_at (default now) is at: p_at on a month''s last day or on the next month''s first day in zone p_zone; NULL on any other day. tickq check names the month end a starved kind''s worst wait began at with it (in the kind''s zone).';


--
-- Name: month_end_windows(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.month_end_windows(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(starts_at timestamp with time zone, period interval, month_end date)
    LANGUAGE sql STABLE
    AS $$
    -- Only when some calendar kind names days of the month, months, nth weekdays or a cron
    -- string: a plain daily or weekly time does not know the month. Each window holds the
    -- day before the month's last day, the last day and the next month's first day, in every
    -- zone of the calendar kinds (local midnight to local midnight, the zones' spread added).
    WITH zones AS (
        SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k
        WHERE k.enabled AND (k.at_times IS NOT NULL OR k.cron IS NOT NULL)
            AND EXISTS (SELECT FROM tickq.job_kind AS m WHERE m.enabled AND (m.cron IS NOT NULL
                OR m.days IS NOT NULL OR m.months IS NOT NULL OR NOT m.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]))
    ),
    -- The month ends of the next four years (a 29th of February among them).
    ends AS (
        SELECT (date_trunc('month', p_now AT TIME ZONE 'UTC') + make_interval(months => g.n + 1)
            - interval '1 day')::date AS last_day
        FROM generate_series(0, 48) AS g (n)
    ),
    spans AS (
        SELECT e.last_day, extract(DAY FROM e.last_day)::integer AS days,
            min((e.last_day - 1)::timestamp AT TIME ZONE z.zone) AS from_at,
            max((e.last_day + 2)::timestamp AT TIME ZONE z.zone) AS until_at
        FROM ends AS e CROSS JOIN zones AS z
        GROUP BY e.last_day
    ),
    -- Of each length, the month ends of the next year and the first one however far (a 29th
    -- of February), scored by the slots of the kinds whose slots differ between months of one
    -- length (months, weekdays, cron); the earliest of the most.
    ahead AS (
        SELECT s.*, row_number() OVER (PARTITION BY s.days ORDER BY s.last_day) AS n
        FROM spans AS s WHERE s.from_at > p_now
    ),
    candidates AS (
        SELECT a.* FROM ahead AS a WHERE a.n = 1 OR a.last_day < (p_now AT TIME ZONE 'UTC')::date + 366
    ),
    scored AS (
        -- counted day by day (tickq.slots_between), not slot by slot: a cron string every minute
        SELECT c.*, (SELECT coalesce(sum(tickq.slots_between(NULL, NULL, k.at_times, k.on_days, k.days, k.months,
                k.cron, k.timezone, c.from_at, c.until_at)), 0) FROM tickq.job_kind AS k
            WHERE k.enabled AND (k.cron IS NOT NULL OR k.months IS NOT NULL OR k.on_days IS NOT NULL)) AS slots
        FROM candidates AS c
    )
    SELECT DISTINCT ON (s.days) s.from_at, s.until_at - s.from_at, s.last_day
    FROM scored AS s
    ORDER BY s.days, s.slots DESC, s.last_day
$$;


--
-- Name: FUNCTION month_end_windows(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.month_end_windows(p_now timestamp with time zone) IS 'The month ends tickq.simulation_windows adds when a calendar kind names days of the month, months, nth weekdays or a cron string: for each month length (28, 29, 30, 31 days) the month end ahead (within a year, or the first of that length however far: a 29th of February) whose days hold the most slots of the kinds that differ between months of one length, the earliest of them; each window from local midnight of the day before the last day to the end of the next month''s first day, over the calendar kinds'' zones.';


--
-- Name: next_due_at(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.next_due_at(p_before timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- One short range of job_kind_claimable per lane, as claim_jobs reads it. Only retries:
    -- a cadence at or below the tick runs once per tick (what `tickq check` counts), while a
    -- retry's backoff is its own time, and a 30-second retry should not wait for a tick.
    SELECT least(
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'urgent' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
                AND (k.paused_until IS NULL OR k.paused_until <= p_now)
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'high' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
                AND (k.paused_until IS NULL OR k.paused_until <= p_now)
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'normal' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
                AND (k.paused_until IS NULL OR k.paused_until <= p_now)
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'low' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
                AND (k.paused_until IS NULL OR k.paused_until <= p_now)
            ORDER BY k.due_at LIMIT 1)
    )
$$;


--
-- Name: FUNCTION next_due_at(p_before timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.next_due_at(p_before timestamp with time zone, p_now timestamp with time zone) IS 'The earliest time after p_now and before p_before at which a retry falls due that a claim could take, or NULL: a tick stays for it rather than leave it to the next tick.';


--
-- Name: next_slot(interval, interval, time without time zone[], smallint[], text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_after timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT tickq.next_slot(p_every, p_offset, p_at_times, p_on_days, NULL, NULL, NULL, p_timezone, p_after)
$$;


--
-- Name: FUNCTION next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_after timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_after timestamp with time zone) IS 'tickq.next_slot for a schedule with no days of the month, months or cron string (an agent''s).';


--
-- Name: next_slot(interval, interval, time without time zone[], smallint[], smallint[], smallint[], text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_after timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_seconds numeric;
    v_offset numeric;
BEGIN
    IF p_every IS NOT NULL THEN
        -- Aligned to the clock (Unix epoch, UTC): every 15 minutes lands on :00, :15, :30, :45;
        -- with an offset of 5 minutes on :05, :20, :35, :50.
        v_seconds := extract(EPOCH FROM p_every);
        v_offset := coalesce(extract(EPOCH FROM p_offset), 0);
        RETURN to_timestamp((floor((extract(EPOCH FROM p_after) - v_offset) / v_seconds) + 1) * v_seconds
            + v_offset);
    END IF;
    -- Calendar: local dates in the kind's zone (01_calendar.sql). A local time that does not
    -- exist on a spring-forward day maps to the instant one offset later (02:30 becomes 03:30);
    -- an ambiguous one on a fall-back day to its second occurrence. Either way each (date, time)
    -- pair is exactly one slot, so a daily 02:30 runs once on both change days.
    RETURN tickq.calendar_next(
        tickq.calendar_of(p_at_times, p_on_days, p_days, p_months, p_cron, p_timezone), p_after);
END
$$;


--
-- Name: FUNCTION next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_after timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_after timestamp with time zone) IS 'The first slot strictly after p_after: for an every cadence aligned to the clock and shifted by p_offset (NULL for none); for a calendar schedule (times of day, optional weekdays: ISO 1=Mon..7=Sun, nth 10*n+day, last 90+day; days of the month, negative from its end; months) or a cron string, in the IANA zone p_timezone, correct across daylight-saving changes.';


--
-- Name: number_ranges(smallint[], text[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.number_ranges(p_values smallint[], p_names text[]) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    -- Runs of three or more as a range ("9-17"), values named when p_names is given (from 1).
    SELECT string_agg(CASE WHEN r.high - r.low >= 2
            THEN coalesce(p_names[r.low], r.low::text) || '-' || coalesce(p_names[r.high], r.high::text)
            ELSE (SELECT string_agg(coalesce(p_names[v], v::text), ',') FROM generate_series(r.low::integer, r.high::integer) AS v)
        END, ',' ORDER BY r.low)
    FROM (
        SELECT min(g.value) AS low, max(g.value) AS high
        FROM (SELECT u.value, u.value - row_number() OVER (ORDER BY u.value) AS run
            FROM unnest(p_values) AS u (value)) AS g
        GROUP BY g.run
    ) AS r
$$;


--
-- Name: FUNCTION number_ranges(p_values smallint[], p_names text[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.number_ranges(p_values smallint[], p_names text[]) IS 'Sorted numbers as a short list: "1,15" or "9-17", named by p_names when given.';


--
-- Name: on_time_tick(integer, integer[]); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.on_time_tick(p_tick integer, p_grains integer[]) RETURNS interval
    LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_grain integer := 3600;
BEGIN
    IF p_tick IS NULL OR p_tick NOT BETWEEN 1 AND 3600 OR 3600 % p_tick <> 0 THEN
        RETURN NULL;
    END IF;
    FOR v_n IN 1..coalesce(cardinality(p_grains), 0) LOOP
        v_grain := gcd(v_grain, p_grains[v_n]);
    END LOOP;
    -- The largest divisor of every grain (so of an hour) no longer than p_tick.
    FOR v_d IN REVERSE least(p_tick, v_grain)..1 LOOP
        IF v_grain % v_d = 0 THEN
            RETURN make_interval(secs => v_d);
        END IF;
    END LOOP;
    RETURN NULL;  -- not reached: 1 divides every grain
END
$$;


--
-- Name: FUNCTION on_time_tick(p_tick integer, p_grains integer[]); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.on_time_tick(p_tick integer, p_grains integer[]) IS 'The largest tick (an interval) dividing an hour and no longer than p_tick seconds that divides every one of p_grains (tickq.tick_lateness''s grain per kind): the tick that keeps every slot on time. NULL when p_tick does not divide an hour.';


--
-- Name: within_limit(text, numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.within_limit(p_key text, p_value numeric, p_now timestamp with time zone DEFAULT now()) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT EXISTS (SELECT FROM tickq.registry_limits() AS l
        WHERE l.key = p_key AND p_value BETWEEN l.low AND l.high)
$$;


--
-- Name: FUNCTION within_limit(p_key text, p_value numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.within_limit(p_key text, p_value numeric, p_now timestamp with time zone) IS 'True when p_value lies within the bounds tickq.registry_limits gives p_key. p_now is unused.';


--
-- Name: agent_settings; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.agent_settings (
    id boolean DEFAULT true NOT NULL,
    priority tickq.priority DEFAULT 'normal'::tickq.priority NOT NULL,
    max_turns integer DEFAULT 6 NOT NULL,
    max_timeout interval DEFAULT '00:10:00'::interval NOT NULL,
    retries integer DEFAULT 0 NOT NULL,
    tools text[] DEFAULT '{}'::text[] NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    weight integer DEFAULT 1 NOT NULL,
    CONSTRAINT agent_max_timeout_cap CHECK (tickq.within_limit('agents.timeout'::text, EXTRACT(epoch FROM max_timeout))),
    CONSTRAINT agent_max_turns_cap CHECK (tickq.within_limit('agents.max_turns'::text, (max_turns)::numeric)),
    CONSTRAINT agent_retries_bounded CHECK (tickq.within_limit('agents.retries'::text, (retries)::numeric)),
    CONSTRAINT agent_settings_single_row CHECK (id),
    CONSTRAINT agent_weight_positive CHECK ((weight >= 1))
);


--
-- Name: TABLE agent_settings; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.agent_settings IS 'The one row of the registry''s [agents] section as tickq.sync_registry last saw it: the lane agents run in, the caps (turns at most 6, watchdog at most 10 minutes; also the defaults), the retries of a failed agent run, and the names of the tools agents may be given.';


--
-- Name: COLUMN agent_settings.weight; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.agent_settings.weight IS 'The weight of every agent''s kind ([agents] weight, default 1).';


--
-- Name: parse_agents(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_agents(p_agents jsonb) RETURNS tickq.agent_settings
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_new tickq.agent_settings;
    v_key text;
    v_item jsonb;
    v_tool text;
BEGIN
    IF jsonb_typeof(p_agents) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, 'agents', 'must be a table');
    END IF;
    -- Absent keys take their defaults: the registry alone decides the agents' bounds, and the
    -- caps of tickq.registry_limits are the defaults.
    v_new.id := true;
    v_new.priority := 'normal';
    v_new.max_turns := (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l);
    v_new.max_timeout := make_interval(secs => (SELECT l.high FROM tickq.registry_limit('agents.timeout') AS l)::double precision);
    v_new.retries := 0;
    v_new.weight := 1;
    v_new.tools := '{}';
    FOR v_key IN SELECT jsonb_object_keys(p_agents) ORDER BY 1 LOOP
        v_item := p_agents -> v_key;
        CASE v_key
            WHEN 'priority' THEN
                IF jsonb_typeof(v_item) <> 'string'
                    OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
                    PERFORM tickq.registry_error(NULL, 'agents.priority',
                        format('must be one of urgent, high, normal, low, got %s', left(v_item::text, 200)));
                END IF;
                v_new.priority := (v_item #>> '{}')::tickq.priority;
            WHEN 'max_turns' THEN
                v_new.max_turns := tickq.registry_count(v_item, NULL, 'agents.max_turns');
            WHEN 'timeout' THEN
                v_new.max_timeout := tickq.registry_seconds(v_item, NULL, 'agents.timeout');
            WHEN 'retries' THEN
                v_new.retries := tickq.registry_count(v_item, NULL, 'agents.retries');
            WHEN 'weight' THEN
                -- at most settings.slots: a rule between keys (tickq.weight_problems)
                v_new.weight := tickq.registry_count(v_item, NULL, 'agents.weight');
            WHEN 'http_attempts' THEN
                -- Read by the runner alone; judged here with every other bound.
                PERFORM tickq.registry_count(v_item, NULL, 'agents.http_attempts');
            WHEN 'deliver_timeout', 'request_timeout' THEN
                PERFORM tickq.registry_seconds(v_item, NULL, 'agents.' || v_key);
            WHEN 'tool_timeouts' THEN
                IF jsonb_typeof(v_item) <> 'object' THEN
                    PERFORM tickq.registry_error(NULL, 'agents.tools', 'must be a table of tools');
                END IF;
                FOR v_tool IN SELECT jsonb_object_keys(v_item) ORDER BY 1 LOOP
                    PERFORM tickq.registry_seconds(v_item -> v_tool, NULL, 'agents.tools.' || v_tool || '.timeout');
                END LOOP;
            WHEN 'tools' THEN
                IF jsonb_typeof(v_item) <> 'array' OR EXISTS (
                    SELECT FROM jsonb_array_elements(v_item) AS e (t)
                    WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^[a-z0-9][a-z0-9_-]{0,62}$') THEN
                    PERFORM tickq.registry_error(NULL, 'agents.tools',
                        format('must be a list of tool names, got %s', left(v_item::text, 200)));
                END IF;
                v_new.tools := ARRAY(SELECT DISTINCT e.t FROM jsonb_array_elements_text(v_item) AS e (t) ORDER BY 1);
            ELSE
                -- The endpoint, model, key name, runner and tool commands stay in the registry
                -- file: the database never holds them.
                NULL;
        END CASE;
    END LOOP;
    RETURN v_new;
END
$_$;


--
-- Name: FUNCTION parse_agents(p_agents jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_agents(p_agents jsonb) IS 'The registry''s "agents" object as a tickq.agent_settings row (priority, max_turns, timeout, retries and weight within tickq.registry_limits, tool names; absent keys take the defaults), the runner''s own bounds (deliver_timeout, request_timeout, http_attempts, tool_timeouts) judged too. TQ002 naming the key as the file spells it (agents.max_turns, agents.tools.NAME.timeout).';


--
-- Name: parse_chain(text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_chain(p_name text, p_entry jsonb) RETURNS interval
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_step jsonb;
    v_n bigint;
    v_where text;
    v_key text;
    v_total interval := '0'::interval;
BEGIN
    IF p_entry ? 'resume' AND jsonb_typeof(p_entry -> 'resume') <> 'boolean' THEN
        PERFORM tickq.registry_error(p_name, 'resume', format('must be true or false, got %s', p_entry -> 'resume'));
    END IF;
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
        IF jsonb_typeof(v_step -> 'command') IS DISTINCT FROM 'array' OR jsonb_array_length(v_step -> 'command') = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_step -> 'command') AS e (arg)
                WHERE jsonb_typeof(e.arg) <> 'string' OR e.arg #>> '{}' = '') THEN
            PERFORM tickq.registry_error(p_name, v_where || '.command',
                'must be a non-empty list of non-empty strings');
        END IF;
        IF v_step ? 'cwd' AND jsonb_typeof(v_step -> 'cwd') <> 'string' THEN
            PERFORM tickq.registry_error(p_name, v_where || '.cwd', 'must be a string');
        END IF;
        IF v_step ? 'env' AND (jsonb_typeof(v_step -> 'env') <> 'object' OR EXISTS (
            SELECT FROM jsonb_each(v_step -> 'env') AS e (name, value) WHERE jsonb_typeof(e.value) <> 'string'
        )) THEN
            PERFORM tickq.registry_error(p_name, v_where || '.env', 'must be a table of strings');
        END IF;
        IF v_step ? 'continue_on_failure' AND jsonb_typeof(v_step -> 'continue_on_failure') <> 'boolean' THEN
            PERFORM tickq.registry_error(p_name, v_where || '.continue_on_failure',
                format('must be true or false, got %s', v_step -> 'continue_on_failure'));
        END IF;
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


--
-- Name: FUNCTION parse_chain(p_name text, p_entry jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_chain(p_name text, p_entry jsonb) IS 'Validates the steps (name, command, timeout, cwd, env, continue_on_failure; no name twice) and resume keys of a registry entry and returns the sum of the step timeouts, or null when the kind is no chain; raises TQ002 naming the kind and key.';


--
-- Name: parse_days(text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_days(p_name text, p_entry jsonb) RETURNS tickq.job_kind
    LANGUAGE plpgsql
    AS $_$
DECLARE
    -- Only the day filters are set: on_days (weekdays, nth and last weekdays), days, months.
    v_kind tickq.job_kind;
    v_item jsonb;
    v_days smallint[];  -- of on, each entry's days in turn (a repeat is a day twice)
    v_nth integer := (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'on.nth');
    v_day_names constant text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    v_months constant text[] := ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep',
        'oct', 'nov', 'dec'];
BEGIN
    IF p_entry ? 'on' THEN
        v_item := p_entry -> 'on';
        -- Each entry's days: "mon" (1..7), a range "mon-fri" (each day of it; past sunday it
        -- wraps: "fri-mon"), "1st mon" .. "5th mon" (10 * n + day), "last fri" (90 + day); a
        -- NULL day for an entry that is none of these.
        SELECT array_agg(d.day) INTO v_days
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v_item) = 'array' THEN v_item END) AS e (d)
        CROSS JOIN LATERAL (SELECT e.d #>> '{}' AS t, array_position(v_day_names, left(e.d #>> '{}', 3)) AS a,
            array_position(v_day_names, right(e.d #>> '{}', 3)) AS b) AS w
        CROSS JOIN LATERAL unnest(CASE
                WHEN jsonb_typeof(e.d) <> 'string' THEN ARRAY[NULL::integer]
                WHEN w.t ~ '^[a-z]{3}$' THEN ARRAY[w.a]
                WHEN w.t ~ '^[a-z]{3}-[a-z]{3}$' AND w.a IS NOT NULL AND w.b IS NOT NULL
                    THEN ARRAY(SELECT (i - 1) % 7 + 1 FROM generate_series(w.a, w.b + CASE WHEN w.b < w.a THEN 7 ELSE 0 END) AS i)
                WHEN w.t ~ '^last [a-z]{3}$' THEN ARRAY[90 + w.b]
                WHEN w.t ~ '^[0-9](st|nd|rd|th) [a-z]{3}$'
                    AND left(w.t, 1)::integer BETWEEN 1 AND v_nth
                    AND substr(w.t, 2, 2) = (ARRAY['st', 'nd', 'rd', 'th', 'th', 'th', 'th', 'th', 'th'])[
                        greatest(left(w.t, 1)::integer, 1)]
                    THEN ARRAY[10 * left(w.t, 1)::integer + w.b]
                ELSE ARRAY[NULL::integer]
            END::smallint[]) AS d (day);
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR v_days IS NULL OR array_position(v_days, NULL) IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, 'on',
                format('must be a list of weekdays (mon tue wed thu fri sat sun), ranges of them (mon-fri), '
                    'nth weekdays (1st mon .. %sth sun) or last weekdays (last fri), got %s', v_nth,
                    left(v_item::text, 200)));
        END IF;
        v_kind.on_days := ARRAY(SELECT DISTINCT d.day FROM unnest(v_days) AS d (day) ORDER BY d.day);
        IF cardinality(v_kind.on_days) <> cardinality(v_days) THEN
            PERFORM tickq.registry_error(p_name, 'on', format('days must not repeat, got %s', v_item));
        END IF;
    END IF;
    IF p_entry ? 'days' THEN
        v_item := p_entry -> 'days';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (d)
                WHERE CASE WHEN jsonb_typeof(e.d) <> 'number' THEN true
                    ELSE (e.d #>> '{}')::numeric = 0 OR (e.d #>> '{}')::numeric <> trunc((e.d #>> '{}')::numeric)
                        OR NOT tickq.within_limit('days', (e.d #>> '{}')::numeric) END) THEN
            PERFORM tickq.registry_error(p_name, 'days',
                format('must be a list of days of the month, 1 to 31 or -1 (the last day) to -31, got %s',
                    left(v_item::text, 200)));
        END IF;
        SELECT array_agg(DISTINCT (e.d #>> '{}')::smallint) INTO v_kind.days FROM jsonb_array_elements(v_item) AS e (d);
        IF cardinality(v_kind.days) <> jsonb_array_length(v_item) THEN
            PERFORM tickq.registry_error(p_name, 'days', format('days must not repeat, got %s', v_item));
        END IF;
    END IF;
    IF p_entry ? 'months' THEN
        v_item := p_entry -> 'months';
        SELECT array_agg(DISTINCT CASE WHEN jsonb_typeof(e.m) = 'string' THEN array_position(v_months, e.m #>> '{}')
                WHEN jsonb_typeof(e.m) = 'number' AND tickq.within_limit('months', (e.m #>> '{}')::numeric)
                    AND (e.m #>> '{}')::numeric = trunc((e.m #>> '{}')::numeric) THEN (e.m #>> '{}')::integer
            END::smallint) INTO v_kind.months
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v_item) = 'array' THEN v_item END) AS e (m);
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM unnest(v_kind.months) AS m (month) WHERE m.month IS NULL) THEN
            PERFORM tickq.registry_error(p_name, 'months',
                format('must be a list of months, jan .. dec or 1 to 12, got %s', left(v_item::text, 200)));
        END IF;
        IF cardinality(v_kind.months) <> jsonb_array_length(v_item) THEN
            PERFORM tickq.registry_error(p_name, 'months', format('months must not repeat, got %s', v_item));
        END IF;
    END IF;
    RETURN v_kind;
END
$_$;


--
-- Name: FUNCTION parse_days(p_name text, p_entry jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_days(p_name text, p_entry jsonb) IS 'The day filters of a calendar entry: on (weekdays, ranges "mon-fri" and "fri-mon", "1st mon" .. "5th sun", "last fri"), days (1..31, -1..-31 from the month''s end), months (names or 1..12); no repeats. Returns a job_kind row holding only on_days, days and months; raises TQ002 naming p_name and the key.';


--
-- Name: parse_kind(text, jsonb, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_kind(p_name text, p_entry jsonb, p_default_timezone text) RETURNS tickq.job_kind
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_kind tickq.job_kind;
    v_key text;
    v_item jsonb;
    v_steps_timeout interval;
BEGIN
    IF NOT tickq.kind_name_ok(p_name) THEN
        PERFORM tickq.registry_error(p_name, 'name',
            'a kind name is 1-100 characters of a-z, 0-9, _ . - starting with a letter or digit');
    END IF;
    IF p_name LIKE 'agent.%' THEN
        PERFORM tickq.registry_error(p_name, 'name',
            'names starting with "agent." belong to user-built agents (tickq agent add)');
    END IF;
    IF jsonb_typeof(p_entry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(p_name, '*', 'a kind must be an object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_entry) LOOP
        IF NOT v_key = ANY(ARRAY['command', 'cwd', 'env', 'every', 'offset', 'at', 'on', 'days', 'months', 'cron',
            'timezone',
            'timeout', 'priority', 'retries', 'enabled', 'steps', 'resume', 'irreversible', 'ping_url',
            'first_run', 'weight', 'pools', 'catch_up']) THEN
            PERFORM tickq.registry_error(p_name, v_key, 'unknown key');
        END IF;
    END LOOP;

    v_item := p_entry -> 'command';
    -- A chain (steps, sql/api/08_chain.sql) has no command of its own.
    v_steps_timeout := tickq.parse_chain(p_name, p_entry);
    IF v_steps_timeout IS NULL AND (jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (arg)
            WHERE jsonb_typeof(e.arg) <> 'string' OR e.arg #>> '{}' = '')) THEN
        PERFORM tickq.registry_error(p_name, 'command', 'must be a non-empty list of non-empty strings');
    END IF;
    IF p_entry ? 'cwd' AND jsonb_typeof(p_entry -> 'cwd') <> 'string' THEN
        PERFORM tickq.registry_error(p_name, 'cwd', 'must be a string');
    END IF;
    IF p_entry ? 'env' AND (jsonb_typeof(p_entry -> 'env') <> 'object' OR EXISTS (
        SELECT FROM jsonb_each(p_entry -> 'env') AS e (name, value) WHERE jsonb_typeof(e.value) <> 'string'
    )) THEN
        PERFORM tickq.registry_error(p_name, 'env', 'must be a table of strings');
    END IF;
    IF p_entry ? 'ping_url' AND jsonb_typeof(p_entry -> 'ping_url') <> 'string' THEN
        PERFORM tickq.registry_error(p_name, 'ping_url', 'must be a string');
    END IF;
    v_kind.name := p_name;
    v_kind.registry := jsonb_strip_nulls(jsonb_build_object(
        'command', v_item, 'cwd', p_entry -> 'cwd', 'env', tickq.env_digests(p_name, p_entry -> 'env'),
        -- a check-in URL is a secret too: its digest, as an env value's
        'ping_url', tickq.env_digests(p_name, jsonb_build_object('ping_url', p_entry -> 'ping_url')) -> 'ping_url',
        -- a step's env is kept as digests too (its values are as secret as a kind's)
        'steps', (SELECT jsonb_agg(CASE WHEN e.step ? 'env' THEN jsonb_set(e.step, '{env}',
                coalesce(tickq.env_digests(p_name || '.' || (e.step ->> 'name'), e.step -> 'env'),
                    e.step -> 'env'))
                ELSE e.step END ORDER BY e.n)
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_entry -> 'steps') = 'array'
                THEN p_entry -> 'steps' END) WITH ORDINALITY AS e (step, n)),
        'resume', CASE WHEN p_entry -> 'resume' = 'true' THEN true END,
        -- read once, by the insert of a kind new to the queue (tickq.write_kind)
        'first_run', p_entry -> 'first_run'));
    v_kind.irreversible := coalesce(p_entry -> 'irreversible', 'false') = 'true';
    IF p_entry ? 'irreversible' AND jsonb_typeof(p_entry -> 'irreversible') <> 'boolean' THEN
        PERFORM tickq.registry_error(p_name, 'irreversible',
            format('must be true or false, got %s', p_entry -> 'irreversible'));
    END IF;

    SELECT s.every, s.every_offset, s.at_times, s.on_days, s.days, s.months, s.cron, s.timezone, s.catch_up
    INTO v_kind.every, v_kind.every_offset, v_kind.at_times, v_kind.on_days, v_kind.days, v_kind.months,
        v_kind.cron, v_kind.timezone, v_kind.catch_up
    FROM tickq.parse_schedule(p_name, p_entry, p_default_timezone) AS s;

    IF v_steps_timeout IS NOT NULL AND NOT p_entry ? 'timeout' THEN
        v_kind.timeout := v_steps_timeout;
    ELSE
        v_kind.timeout := tickq.registry_seconds(p_entry -> 'timeout', p_name, 'timeout');
    END IF;
    IF v_kind.timeout < v_steps_timeout THEN
        PERFORM tickq.registry_error(p_name, 'timeout',
            format('a chain''s timeout must not be shorter than the sum of its steps'' (%s), got %s',
                tickq.format_duration(v_steps_timeout), tickq.format_duration(v_kind.timeout)));
    END IF;

    v_item := coalesce(p_entry -> 'priority', '"normal"');
    IF jsonb_typeof(v_item) <> 'string'
        OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
        PERFORM tickq.registry_error(p_name, 'priority',
            format('must be one of urgent, high, normal, low, got %s', v_item));
    END IF;
    v_kind.priority := (v_item #>> '{}')::tickq.priority;

    v_kind.retries := tickq.registry_count(coalesce(p_entry -> 'retries', '0'::jsonb), p_name, 'retries');

    v_item := coalesce(p_entry -> 'enabled', 'true');
    IF jsonb_typeof(v_item) <> 'boolean' THEN
        PERFORM tickq.registry_error(p_name, 'enabled', format('must be true or false, got %s', v_item));
    END IF;
    v_kind.enabled := (v_item #>> '{}')::boolean;
    SELECT w.weight, w.pools INTO v_kind.weight, v_kind.pools FROM tickq.parse_weight(p_name, p_entry) AS w;
    RETURN v_kind;
END
$$;


--
-- Name: FUNCTION parse_kind(p_name text, p_entry jsonb, p_default_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_kind(p_name text, p_entry jsonb, p_default_timezone text) IS 'Validates one registry entry and returns it as a job_kind row (schedule, timeout, priority, retries, catch_up, enabled, weight, pools, and the command/cwd/env mirror); raises TQ002 naming the kind and key.';


--
-- Name: parse_pools(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_pools(p_pools jsonb) RETURNS TABLE(name text, slots integer)
    LANGUAGE plpgsql
    AS $_$
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
$_$;


--
-- Name: FUNCTION parse_pools(p_pools jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_pools(p_pools jsonb) IS 'The registry''s "pools" object ({NAME: {"slots": N}}; absent: none) as rows (name, slots), slots within tickq.registry_limits (pools.slots); TQ002 naming the key as the file spells it (pools.NAME.slots).';


--
-- Name: parse_schedule(text, jsonb, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_schedule(p_name text, p_entry jsonb, p_default_timezone text) RETURNS tickq.job_kind
    LANGUAGE plpgsql
    AS $_$
DECLARE
    -- Only the schedule columns are set: every, every_offset, at_times, on_days, days, months,
    -- cron, timezone, catch_up.
    v_kind tickq.job_kind;
    v_item jsonb;
    v_key text;
BEGIN
    -- When a kind new to the queue first runs (tickq.write_kind reads it).
    IF p_entry ? 'first_run' AND (jsonb_typeof(p_entry -> 'first_run') <> 'string'
        OR NOT p_entry ->> 'first_run' IN ('now', 'next_slot')) THEN
        PERFORM tickq.registry_error(p_name, 'first_run',
            format('must be "now" or "next_slot", got %s', p_entry -> 'first_run'));
    END IF;
    -- How late a missed slot may still run (tickq.catch_up_kinds skips older ones).
    IF p_entry ? 'catch_up' THEN
        v_kind.catch_up := tickq.registry_seconds(p_entry -> 'catch_up', p_name, 'catch_up');
    END IF;
    IF p_entry ? 'cron' THEN
        IF p_entry ?| ARRAY['every', 'at'] THEN
            PERFORM tickq.registry_error(p_name, 'cron', 'give exactly one of "every", "at" or "cron"');
        END IF;
        SELECT k.key INTO v_key FROM unnest(ARRAY['on', 'days', 'months', 'offset']) AS k (key)
        WHERE p_entry ? k.key LIMIT 1;
        IF v_key IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, v_key, 'a cron string holds its own days and times: '
                'write them in it, or use "at" with this key');
        END IF;
        IF jsonb_typeof(p_entry -> 'cron') <> 'string' OR tickq.cron_problem(p_entry ->> 'cron') IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, 'cron', coalesce(tickq.cron_problem(p_entry ->> 'cron'),
                format('must be a string of five fields, got %s', left((p_entry -> 'cron')::text, 200))));
        END IF;
        v_kind.cron := p_entry ->> 'cron';
        v_kind.timezone := tickq.parse_zone(p_name, p_entry, p_default_timezone);
        IF tickq.next_slot(NULL, NULL, NULL, NULL, NULL, NULL, v_kind.cron, v_kind.timezone, '2000-01-01Z') IS NULL THEN
            PERFORM tickq.registry_error(p_name, 'cron',
                format('%s names no date that exists (such as the 30th of February)', p_entry -> 'cron'));
        END IF;
        RETURN v_kind;
    END IF;
    IF (p_entry ? 'every') = (p_entry ? 'at') THEN
        PERFORM tickq.registry_error(p_name, 'every', 'give exactly one of "every" or "at"');
    END IF;
    IF p_entry ? 'every' THEN
        SELECT k.key INTO v_key FROM unnest(ARRAY['on', 'days', 'months', 'timezone']) AS k (key)
        WHERE p_entry ? k.key LIMIT 1;
        IF v_key IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, v_key, 'only a calendar schedule ("at") takes this key');
        END IF;
        v_kind.every := tickq.registry_seconds(p_entry -> 'every', p_name, 'every');
        v_kind.timezone := 'UTC';
        -- The slots of the cadence shifted by the offset; 0 is no shift, stored as NULL.
        IF p_entry ? 'offset' THEN
            IF jsonb_typeof(p_entry -> 'offset') <> 'number' OR (p_entry ->> 'offset')::numeric < 0
                OR make_interval(secs => (p_entry ->> 'offset')::double precision) >= v_kind.every THEN
                PERFORM tickq.registry_error(p_name, 'offset',
                    format('must be shorter than every (%s), got %s',
                        tickq.format_duration(v_kind.every),
                        CASE WHEN jsonb_typeof(p_entry -> 'offset') = 'number'
                            AND (p_entry ->> 'offset')::numeric >= 0
                            THEN tickq.format_duration(make_interval(
                                secs => (p_entry ->> 'offset')::double precision))
                            ELSE p_entry ->> 'offset' END));
            END IF;
            v_kind.every_offset := nullif(make_interval(secs => (p_entry ->> 'offset')::double precision),
                '0'::interval);
        END IF;
        RETURN v_kind;
    END IF;
    IF p_entry ? 'offset' THEN
        PERFORM tickq.registry_error(p_name, 'offset', 'only an every cadence takes this key');
    END IF;
    v_item := p_entry -> 'at';
    IF jsonb_typeof(v_item) = 'string' THEN
        v_item := jsonb_build_array(v_item);
    END IF;
    IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t)
            WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$') THEN
        PERFORM tickq.registry_error(p_name, 'at',
            format('must be a time of day "HH:MM" (00:00-23:59) or a list of them, got %s', left(v_item::text, 200)));
    END IF;
    -- A repeated time or day is refused, never merged: the file says something it cannot mean.
    SELECT array_agg(DISTINCT (e.t #>> '{}')::time ORDER BY (e.t #>> '{}')::time) INTO v_kind.at_times
    FROM jsonb_array_elements(v_item) AS e (t);
    IF cardinality(v_kind.at_times) <> jsonb_array_length(v_item) THEN
        PERFORM tickq.registry_error(p_name, 'at', format('times must not repeat, got %s', v_item));
    END IF;
    SELECT d.on_days, d.days, d.months INTO v_kind.on_days, v_kind.days, v_kind.months
    FROM tickq.parse_days(p_name, p_entry) AS d;
    v_kind.timezone := tickq.parse_zone(p_name, p_entry, p_default_timezone);
    IF (v_kind.days IS NOT NULL OR v_kind.months IS NOT NULL) AND tickq.next_slot(NULL, NULL, v_kind.at_times,
        v_kind.on_days, v_kind.days, v_kind.months, NULL, v_kind.timezone, '2000-01-01Z') IS NULL THEN
        PERFORM tickq.registry_error(p_name, CASE WHEN p_entry ? 'days' THEN 'days' ELSE 'on' END,
            'these days, weekdays and months name no date that exists (such as the 30th of February)');
    END IF;
    RETURN v_kind;
END
$_$;


--
-- Name: FUNCTION parse_schedule(p_name text, p_entry jsonb, p_default_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_schedule(p_name text, p_entry jsonb, p_default_timezone text) IS 'The one schedule parser, for registry kinds and user-built agents: every (seconds) with an optional offset; or at ("HH:MM" or a list, no repeats) with on, days and months (tickq.parse_days) and timezone (p_default_timezone when absent); or cron (five fields or an @ form, tickq.cron_calendar) with timezone; catch_up (seconds); first_run ("now" or "next_slot") checked. Returns a job_kind row holding only the schedule columns; raises TQ002 naming p_name and the key.';


--
-- Name: settings; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.settings (
    id boolean DEFAULT true NOT NULL,
    slots integer DEFAULT 3 NOT NULL,
    tick interval DEFAULT '00:05:00'::interval NOT NULL,
    stale_after interval DEFAULT '00:15:00'::interval NOT NULL,
    lease_margin interval DEFAULT '00:05:00'::interval NOT NULL,
    lease interval DEFAULT '00:05:00'::interval NOT NULL,
    retry_base interval DEFAULT '00:00:30'::interval NOT NULL,
    retry_max interval DEFAULT '01:00:00'::interval NOT NULL,
    timezone text DEFAULT 'UTC'::text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    capacity_margin numeric DEFAULT 0.25 NOT NULL,
    alert_after integer DEFAULT 3 NOT NULL,
    housekeeping_every interval DEFAULT '00:15:00'::interval NOT NULL,
    retention interval DEFAULT '30 days'::interval NOT NULL,
    keep_runs integer DEFAULT 100 NOT NULL,
    agents boolean,
    CONSTRAINT alert_after_positive CHECK ((alert_after >= 1)),
    CONSTRAINT capacity_margin_fraction CHECK (((capacity_margin >= (0)::numeric) AND (capacity_margin < (1)::numeric))),
    CONSTRAINT housekeeping_every_positive CHECK ((housekeeping_every > '00:00:00'::interval)),
    CONSTRAINT keep_runs_positive CHECK ((keep_runs >= 1)),
    CONSTRAINT lease_margin_not_negative CHECK ((lease_margin >= '00:00:00'::interval)),
    CONSTRAINT lease_positive CHECK ((lease > '00:00:00'::interval)),
    CONSTRAINT retention_positive CHECK ((retention > '00:00:00'::interval)),
    CONSTRAINT retry_base_positive CHECK ((retry_base > '00:00:00'::interval)),
    CONSTRAINT retry_max_not_below_base CHECK ((retry_max >= retry_base)),
    CONSTRAINT settings_single_row CHECK (id),
    CONSTRAINT slots_positive CHECK ((slots >= 1)),
    CONSTRAINT stale_after_positive CHECK ((stale_after > '00:00:00'::interval)),
    CONSTRAINT tick_positive CHECK ((tick > '00:00:00'::interval)),
    CONSTRAINT timezone_known CHECK (tickq.is_timezone(timezone))
);


--
-- Name: TABLE settings; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.settings IS 'The one settings row. slots caps live leases across every dispatcher (a memory decision). lease is the longest kind timeout plus lease_margin, kept by tickq.sync_registry; a deferred constraint trigger guarantees it is never shorter than any kind''s timeout.';


--
-- Name: COLUMN settings.capacity_margin; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.settings.capacity_margin IS 'Share of the slots kept free when checking capacity: the total slot share must stay at or below slots * (1 - capacity_margin).';


--
-- Name: COLUMN settings.keep_runs; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.settings.keep_runs IS 'Housekeeping keeps at least this many of the latest runs (and drift rows) of each kind, however old.';


--
-- Name: COLUMN settings.agents; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.settings.agents IS 'Whether the registry this queue was last synced with (in full) has an [agents] section: what tickq.claim_jobs takes for a claimer without a tickq.dispatcher row of its own (its sync had nothing to do, so its registry is that one). Written by tickq.sync_agents.';


--
-- Name: parse_settings(jsonb, tickq.settings); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_settings(p_settings jsonb, p_old tickq.settings) RETURNS tickq.settings
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_settings jsonb := p_settings;
    v_new tickq.settings := p_old;
    v_key text;
BEGIN
    IF jsonb_typeof(p_settings) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', '"settings" must be an object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(v_settings) LOOP
        CASE v_key
            WHEN 'slots' THEN
                v_new.slots := tickq.registry_count(v_settings -> 'slots', NULL, 'slots');
            WHEN 'tick' THEN
                v_new.tick := tickq.registry_seconds(v_settings -> 'tick', NULL, 'tick');
            WHEN 'stale_after' THEN
                v_new.stale_after := tickq.registry_seconds(v_settings -> 'stale_after', NULL, 'stale_after');
            WHEN 'lease_margin' THEN
                v_new.lease_margin := tickq.registry_seconds(v_settings -> 'lease_margin', NULL, 'lease_margin');
            WHEN 'retry_base' THEN
                v_new.retry_base := tickq.registry_seconds(v_settings -> 'retry_base', NULL, 'retry_base');
            WHEN 'retry_max' THEN
                v_new.retry_max := tickq.registry_seconds(v_settings -> 'retry_max', NULL, 'retry_max');
            WHEN 'capacity_margin' THEN
                v_new.capacity_margin := tickq.registry_fraction(v_settings -> 'capacity_margin', NULL,
                    'capacity_margin');
            WHEN 'alert_timeout', 'housekeeping_timeout', 'db_connect_timeout', 'db_statement_timeout',
                'db_lock_timeout', 'ping_timeout' THEN
                -- Read by the runner alone (the alert command's watchdog, its database timeouts,
                -- how long a check-in waits)
                -- or by the built-in kind (tickq.sync_kinds); their bounds are judged here.
                PERFORM tickq.registry_seconds(v_settings -> v_key, NULL, v_key);
            WHEN 'project' THEN  -- who this project is (tickq.sync_queue_registry)
                IF tickq.project_problem(v_settings -> 'project') IS NOT NULL THEN
                    PERFORM tickq.registry_error(NULL, 'project', tickq.project_problem(v_settings -> 'project'));
                END IF;
            WHEN 'alert_after' THEN
                v_new.alert_after := tickq.registry_count(v_settings -> 'alert_after', NULL, 'alert_after');
            WHEN 'housekeeping_every' THEN
                v_new.housekeeping_every := tickq.registry_seconds(
                    v_settings -> 'housekeeping_every', NULL, 'housekeeping_every');
            WHEN 'retention' THEN
                v_new.retention := tickq.registry_seconds(v_settings -> 'retention', NULL, 'retention');
            WHEN 'keep_runs' THEN
                v_new.keep_runs := tickq.registry_count(v_settings -> 'keep_runs', NULL, 'keep_runs');
            WHEN 'timezone' THEN
                IF jsonb_typeof(v_settings -> 'timezone') <> 'string'
                    OR NOT tickq.is_timezone(v_settings ->> 'timezone') THEN
                    PERFORM tickq.registry_error(NULL, 'timezone', tickq.unknown_zone(v_settings -> 'timezone'));
                END IF;
                IF tickq.legacy_zone_problem(v_settings ->> 'timezone') IS NOT NULL THEN
                    PERFORM tickq.registry_error(NULL, 'timezone',
                        tickq.legacy_zone_problem(v_settings ->> 'timezone'));
                END IF;
                v_new.timezone := v_settings ->> 'timezone';
            ELSE
                -- Keys a later feature reads are accepted here and checked where they are used.
                NULL;
        END CASE;
    END LOOP;
    IF v_new.retry_max < v_new.retry_base THEN
        PERFORM tickq.registry_error(NULL, 'retry_max',
            format('must not be shorter than retry_base (%s), got %s', v_new.retry_base, v_new.retry_max));
    END IF;
    RETURN v_new;
END
$$;


--
-- Name: FUNCTION parse_settings(p_settings jsonb, p_old tickq.settings); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_settings(p_settings jsonb, p_old tickq.settings) IS 'Validates the registry''s settings (durations in seconds) and returns p_old with them applied; raises TQ002 naming the key and the bound. Keys it does not know are left to the runner.';


--
-- Name: parse_weight(text, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_weight(p_name text, p_entry jsonb) RETURNS tickq.job_kind
    LANGUAGE plpgsql
    AS $_$
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
    v_kind.pools := ARRAY(SELECT DISTINCT e.p FROM jsonb_array_elements_text(v_item) AS e (p) ORDER BY 1);
    IF cardinality(v_kind.pools) <> jsonb_array_length(v_item) THEN
        PERFORM tickq.registry_error(p_name, 'pools', format('pools must not repeat, got %s', v_item));
    END IF;
    RETURN v_kind;
END
$_$;


--
-- Name: FUNCTION parse_weight(p_name text, p_entry jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_weight(p_name text, p_entry jsonb) IS 'A registry entry''s weight (default 1, within tickq.registry_limits) and pools (a list of pool names, no repeats; kept sorted), as a job_kind row holding only those two; TQ002 naming the key.';


--
-- Name: parse_zone(text, jsonb, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.parse_zone(p_name text, p_entry jsonb, p_default_timezone text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_zone text := coalesce(p_entry ->> 'timezone', p_default_timezone);
BEGIN
    IF (p_entry ? 'timezone' AND jsonb_typeof(p_entry -> 'timezone') <> 'string')
        OR NOT tickq.is_timezone(v_zone) THEN
        PERFORM tickq.registry_error(p_name, 'timezone',
            tickq.unknown_zone(coalesce(p_entry -> 'timezone', to_jsonb(v_zone))));
    END IF;
    -- Only a zone the entry names: a kind that names none takes the settings' zone, judged there.
    IF p_entry ? 'timezone' AND tickq.legacy_zone_problem(v_zone) IS NOT NULL THEN
        PERFORM tickq.registry_error(p_name, 'timezone', tickq.legacy_zone_problem(v_zone));
    END IF;
    RETURN v_zone;
END
$$;


--
-- Name: FUNCTION parse_zone(p_name text, p_entry jsonb, p_default_timezone text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.parse_zone(p_name text, p_entry jsonb, p_default_timezone text) IS 'The zone of a calendar or cron entry (p_default_timezone when it names none), or TQ002 naming the key timezone.';


--
-- Name: pause_agent(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.pause_agent(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS tickq.agent
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT tickq.save_agent(p_name, '{"paused": true}', false, p_now);
$$;


--
-- Name: FUNCTION pause_agent(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.pause_agent(p_name text, p_now timestamp with time zone) IS 'Pauses an agent: its kind is disabled (a run in progress finishes). TQ041 for an unknown agent.';


--
-- Name: pause_kind(text, timestamp with time zone, text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.pause_kind(p_kind text, p_until timestamp with time zone DEFAULT 'infinity'::timestamp with time zone, p_reason text DEFAULT NULL::text, p_by text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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
        RAISE EXCEPTION 'no kind "%" in the registry', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    RETURN v_until;
END
$$;


--
-- Name: FUNCTION pause_kind(p_kind text, p_until timestamp with time zone, p_reason text, p_by text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.pause_kind(p_kind text, p_until timestamp with time zone, p_reason text, p_by text, p_now timestamp with time zone) IS 'An operator''s pause: claims skip the kind until p_until (infinity, the default: until resume_kind), a run already going finishes, a manual run is still allowed. Kept beside the registry''s enabled, which sync_registry never changes it for. Raises TQ003 unknown kind, TQ060 a pause that would end by now or a reason over 500 characters.';


--
-- Name: pool_occupancy_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.pool_occupancy_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(pool text, slots integer, busy integer, free integer, holders jsonb, kinds integer, waiting integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- A pool's busy rows may outnumber its slots for a while after its slots were lowered
    -- (the runs holding them go on): free is then 0, never negative.
    SELECT
        p.name,
        p.slots,
        coalesce(h.busy, 0),
        greatest(p.slots - coalesce(h.busy, 0), 0),
        coalesce(h.holders, '[]'),
        coalesce(c.kinds, 0),
        coalesce(c.waiting, 0)
    FROM tickq.pool AS p
    LEFT JOIN LATERAL (
        SELECT count(*)::integer AS busy,
            jsonb_agg(jsonb_build_object(
                'run_id', r.id, 'kind', r.kind, 'dispatcher', r.dispatcher,
                'since', coalesce(r.started_at, r.claimed_at), 'leased_until', ps.leased_until,
                'weight', r.weight
            ) ORDER BY ps.leased_until, r.id) AS holders
        FROM tickq.pool_slot AS ps
        INNER JOIN tickq.job_run AS r ON ps.run_id = r.id
        WHERE ps.pool = p.name
    ) AS h ON true
    -- The kinds naming each pool, in one pass over the kinds that name any (pools <> '{}' is
    -- what the partial index job_kind_weighted covers), and those of them due and unclaimed.
    LEFT JOIN (
        SELECT u.pool, count(*)::integer AS kinds,
            count(*) FILTER (WHERE tickq.kind_claimable(k) AND k.run_id IS NULL AND k.due_at <= p_now
                AND NOT coalesce(k.paused_until > p_now, false))::integer AS waiting
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL unnest(k.pools) AS u (pool)
        WHERE k.pools <> '{}' AND k.retired_at IS NULL
        GROUP BY u.pool
    ) AS c ON p.name = c.pool
    ORDER BY p.name
$$;


--
-- Name: FUNCTION pool_occupancy_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.pool_occupancy_at(p_now timestamp with time zone) IS 'Each pool of the registry as of p_now: its slots, how many are held (busy) and free, the runs holding them (run, kind, dispatcher, since, lease until, weight), how many kinds name it and how many of those are due and unclaimed (waiting).';


--
-- Name: pool_slots_left(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.pool_slots_left(p_pool text) RETURNS integer
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


--
-- Name: FUNCTION pool_slots_left(p_pool text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.pool_slots_left(p_pool text) IS 'Internal: how many runs a claim may still put in pool p_pool: its slots, or while runs hold rows past a lowered limit, the limit less every busy row (counted under the pool row''s lock).';


--
-- Name: pools_problems(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.pools_problems(p_pools jsonb) RETURNS TABLE(key text, problem text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_name text;
    v_message text;
    v_column text;
BEGIN
    IF p_pools IS NOT NULL AND jsonb_typeof(p_pools) NOT IN ('object', 'null') THEN
        RETURN QUERY SELECT 'pools'::text, 'must be a table of pools ([pools.NAME])'::text;
        RETURN;
    END IF;
    FOR v_name IN SELECT jsonb_object_keys(coalesce(p_pools, '{}')) ORDER BY 1 LOOP
        BEGIN
            PERFORM FROM tickq.parse_pools(jsonb_build_object(v_name, p_pools -> v_name));
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_column = COLUMN_NAME;
            RETURN QUERY SELECT v_column, tickq.registry_problem(v_message, NULL, v_column);
        END;
    END LOOP;
END
$$;


--
-- Name: FUNCTION pools_problems(p_pools jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.pools_problems(p_pools jsonb) IS 'Every pool of the registry''s "pools" object that tickq.parse_pools refuses, with the key and what is wrong (for tickq.registry_problems); changes nothing.';


--
-- Name: project_problem(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.project_problem(p_value jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
    -- A name of a-z, 0-9, _ . - (as kind names): it is written in logs and in the embedded
    -- server's database names, and two checkouts must spell it alike.
    SELECT format('a project name is %s-%s characters of a-z, 0-9, _ . - starting with a letter '
            'or digit, got %s', l.low, l.high, left(p_value::text, 80))
    FROM tickq.registry_limit('project') AS l
    WHERE jsonb_typeof(p_value) IS DISTINCT FROM 'string'
        OR NOT (p_value #>> '{}') ~ '^[a-z0-9][a-z0-9_.-]*$'
        OR NOT char_length(p_value #>> '{}') BETWEEN l.low AND l.high
$_$;


--
-- Name: FUNCTION project_problem(p_value jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.project_problem(p_value jsonb) IS 'What is wrong with a registry''s settings.project (for tickq.parse_settings), or NULL: a name of a-z, 0-9, _ . - starting with a letter or digit, its length within registry_limits'' project row.';


--
-- Name: queue_registry_at(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.queue_registry_at(p_source jsonb) RETURNS TABLE(path text, host text, project text, synced_at timestamp with time zone, synced boolean, this_project boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Whose queue this is, for `tickq status`: the registry of record, and whether p_source
    -- is that project (never synced: no registry of record, and nothing to mistake).
    SELECT q.path, nullif(q.host, ''), q.project, q.synced_at, q.path IS NOT NULL,
        q.path IS NULL OR tickq.same_project(q, p_source)
    FROM (SELECT 1) AS one
    LEFT JOIN tickq.queue_registry AS q ON true
$$;


--
-- Name: FUNCTION queue_registry_at(p_source jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.queue_registry_at(p_source jsonb) IS 'The registry this queue was last synced by (path as given, host, project, when; synced false when no sync named one) and whether the registry p_source names ({path, resolved, project}) is that project (tickq.same_project).';


--
-- Name: queue_registry_problem(jsonb, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.queue_registry_problem(p_registry jsonb, p_kinds jsonb) RETURNS text
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


--
-- Name: FUNCTION queue_registry_problem(p_registry jsonb, p_kinds jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.queue_registry_problem(p_registry jsonb, p_kinds jsonb) IS 'Why a sync of p_registry may not retire kinds of this queue (it comes from another project than the registry of record: tickq.same_project; in a queue synced before any path was recorded, one sharing no kind with it), naming both and the ways on; NULL when it may (its own project, nothing to retire, no source, or "replace_queue": true). p_kinds: the kinds it keeps.';


--
-- Name: queue_status_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.queue_status_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, schedule text, state text, due boolean, running boolean, due_at timestamp with time zone, next_due_at timestamp with time zone, run_id bigint, leased_by text, leased_until timestamp with time zone, attempts integer, failure_streak integer, last_outcome tickq.outcome, last_finished_at timestamp with time zone, last_duration interval, irreversible boolean, armed_at timestamp with time zone, armed_by text, steps text, paused_until timestamp with time zone, paused_reason text, paused_by text, streak_outcome tickq.outcome, weight integer, pools text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT
        k.name,
        k.priority,
        tickq.describe_schedule(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, p_now),
        CASE
            WHEN k.retired_at IS NOT NULL THEN 'retired'
            WHEN k.run_id IS NOT NULL THEN 'running'
            WHEN NOT k.enabled THEN 'disabled'
            WHEN k.irreversible AND k.armed_at IS NULL THEN 'unarmed'
            WHEN k.paused_until > p_now THEN 'paused'
            -- as tickq.stale_due_at: a slot the next claim skips (catch_up) is not waited for
            WHEN greatest(k.due_at, k.paused_until) <= p_now - s.stale_after AND NOT (k.catch_up IS NOT NULL
                AND k.name IN (SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name))) THEN 'stale'
            WHEN k.due_at <= p_now THEN 'due'
            ELSE 'waiting'
        END,
        tickq.kind_claimable(k) AND k.run_id IS NULL AND k.due_at <= p_now
            AND NOT coalesce(k.paused_until > p_now, false),
        k.run_id IS NOT NULL,
        k.due_at,
        CASE
            WHEN NOT k.enabled OR k.run_id IS NOT NULL OR (k.irreversible AND k.armed_at IS NULL) THEN NULL
            WHEN k.paused_until > p_now THEN nullif(greatest(k.due_at, k.paused_until), 'infinity')
            ELSE k.due_at
        END,
        k.run_id,
        k.leased_by,
        k.leased_until,
        k.attempts,
        k.failure_streak,
        last_run.outcome,
        last_run.finished_at,
        last_run.duration,
        k.irreversible,
        k.armed_at,
        k.armed_by,
        -- Only chains pay for the summary of their last run's steps.
        CASE WHEN k.registry ? 'steps' THEN tickq.chain_summary(k.last_run_id) END,
        CASE WHEN k.paused_until > p_now THEN k.paused_until END,
        CASE WHEN k.paused_until > p_now THEN k.paused_reason END,
        CASE WHEN k.paused_until > p_now THEN k.paused_by END,
        -- The streak's own outcome when the last run was no failure (interrupted) and left it
        -- standing: the latest failure, found by job_run_kind_id back past that run.
        CASE WHEN k.failure_streak > 0 AND last_run.outcome NOT IN ('failed', 'timeout', 'lost') THEN (
            SELECT r.outcome FROM tickq.job_run AS r
            WHERE r.kind = k.name AND r.outcome IN ('failed', 'timeout', 'lost')
            ORDER BY r.id DESC LIMIT 1)
        ELSE last_run.outcome END,
        k.weight::integer,
        k.pools
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    -- The last finished run by primary key (job_kind.last_run_id): never a scan of the history.
    -- LIMIT 1 keeps this a per-kind index probe; as a plain join the planner prefers hashing
    -- all of job_run.
    LEFT JOIN LATERAL (
        SELECT r.outcome, r.finished_at, r.duration
        FROM tickq.job_run AS r
        WHERE r.id = k.last_run_id
        LIMIT 1
    ) AS last_run ON true
    ORDER BY k.retired_at IS NOT NULL, k.priority, k.name
$$;


--
-- Name: FUNCTION queue_status_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.queue_status_at(p_now timestamp with time zone) IS 'One row per kind as of p_now: state (running, due, stale, waiting, paused, disabled, retired, unarmed: an irreversible kind no person has run by hand yet), due and running flags, next due time (a paused kind: not before its pause ends), lease, failure streak, the last finished run, who armed an irreversible kind and when, for a chain a summary of its last run''s steps, and the pause (until, reason, by) while it lasts, and the outcome of the failure streak (the last run''s, or the latest failure''s when an interrupted run left the streak standing); the global slots each of its runs takes (weight) and the pools it names.';


--
-- Name: record_agent_turn(bigint, bigint, integer, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.record_agent_turn(p_run_id bigint, p_agent_id bigint, p_turn integer, p_entry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
BEGIN
    -- Only the live run of the agent's own kind takes a transcript.
    IF NOT EXISTS (
        SELECT FROM tickq.agent AS a
        INNER JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name
        WHERE a.id = p_agent_id AND k.run_id = p_run_id
    ) THEN
        RAISE EXCEPTION 'run % is not the live run of agent %', p_run_id, p_agent_id
            USING ERRCODE = 'TQ044', HINT = 'Nothing was recorded.';
    END IF;
    INSERT INTO tickq.agent_turn AS t (run_id, turn, recorded_at, entry)
    VALUES (p_run_id, p_turn, p_now, p_entry)
    ON CONFLICT (run_id, turn) DO UPDATE SET recorded_at = excluded.recorded_at, entry = excluded.entry;
END
$$;


--
-- Name: FUNCTION record_agent_turn(p_run_id bigint, p_agent_id bigint, p_turn integer, p_entry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.record_agent_turn(p_run_id bigint, p_agent_id bigint, p_turn integer, p_entry jsonb, p_now timestamp with time zone) IS 'Records (or replaces) one turn of the transcript of a live agent run; TQ044 unless p_run_id is the run the agent''s kind is leased to. The entry is bounded by the domain tickq.agent_turn_entry.';


--
-- Name: record_tick(text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.record_tick(p_dispatcher text, p_host text, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    INSERT INTO tickq.dispatcher_tick AS t (host, dispatcher, last_tick_at)
    VALUES (p_host, p_dispatcher, p_now)
    ON CONFLICT (host) DO UPDATE
    SET dispatcher = excluded.dispatcher, last_tick_at = greatest(t.last_tick_at, excluded.last_tick_at)
$$;


--
-- Name: FUNCTION record_tick(p_dispatcher text, p_host text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.record_tick(p_dispatcher text, p_host text, p_now timestamp with time zone) IS 'Notes that a tick of p_dispatcher ended on p_host at p_now (one row per host): the health check''s evidence that the OS timer still fires.';


--
-- Name: refuse_deleting_running_runs(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.refuse_deleting_running_runs() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    SELECT * INTO v_run FROM gone AS g WHERE g.outcome = 'running' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'run % of kind "%" is still running and cannot be deleted', v_run.id, v_run.kind
            USING ERRCODE = 'foreign_key_violation',
            DETAIL = 'Its kind''s lease names it until the run is reported or its lease expires.',
            HINT = 'Delete finished runs only (outcome <> ''running'').';
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: FUNCTION refuse_deleting_running_runs(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.refuse_deleting_running_runs() IS 'Trigger: refuses a DELETE of job_run that would remove a running run, the one a kind''s lease (job_kind.run_id) names.';


--
-- Name: registry_count(jsonb, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_count(p_value jsonb, p_kind text, p_key text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limit(p_key) AS l;
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high
        OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric) THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a whole number from %s to %s, got %s', v_low, v_high,
                coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN (p_value #>> '{}')::integer;
END
$$;


--
-- Name: FUNCTION registry_count(p_value jsonb, p_kind text, p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_count(p_value jsonb, p_kind text, p_key text) IS 'A registry whole number within the bounds tickq.registry_limits gives p_key, or TQ002 naming kind, key and bounds.';


--
-- Name: registry_digest(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_digest(p_registry jsonb) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    -- The API checksum is in it: a new tickq's sync does its whole work once. Who sends the
    -- registry (dispatcher, source, replace_queue) is not: registry_problems is sent none of them.
    SELECT encode(sha256(convert_to((p_registry - 'dispatcher' - 'source' - 'replace_queue')::text || E'\n'
        || coalesce((SELECT c.checksum FROM tickq.api_checksum AS c), ''), 'UTF8')), 'hex');
$$;


--
-- Name: FUNCTION registry_digest(p_registry jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_digest(p_registry jsonb) IS 'What tickq.queue_registry.digest holds after a sync of p_registry: sha256 of the registry JSON without the keys naming its sender ("dispatcher", "source", "replace_queue") and of the API checksum. Where the registry was synced from is kept beside it (path, host).';


--
-- Name: registry_entry(tickq.job_kind); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_entry(p_kind tickq.job_kind) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- The canonical form of a kind, built from the typed columns (plus the command, cwd and env
    -- mirror), so a stored row and an incoming entry compare field by field.
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'command', p_kind.registry -> 'command',
        'steps', p_kind.registry -> 'steps',
        'resume', p_kind.registry -> 'resume',
        'irreversible', CASE WHEN p_kind.irreversible THEN true END,
        'cwd', p_kind.registry -> 'cwd',
        'env', p_kind.registry -> 'env',
        'ping_url', p_kind.registry -> 'ping_url',
        'first_run', p_kind.registry -> 'first_run',
        'catch_up', extract(EPOCH FROM p_kind.catch_up)::bigint,
        'every', extract(EPOCH FROM p_kind.every)::bigint,
        'offset', extract(EPOCH FROM p_kind.every_offset)::bigint,
        'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI') ORDER BY t.at_time)
            FROM unnest(p_kind.at_times) AS t (at_time)),
        'on', (SELECT jsonb_agg(tickq.weekday_name(d.day) ORDER BY d.day) FROM unnest(p_kind.on_days) AS d (day)),
        'days', (SELECT jsonb_agg(d.day ORDER BY d.day) FROM unnest(p_kind.days) AS d (day)),
        'months', (SELECT jsonb_agg((ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct',
            'nov', 'dec'])[m.month] ORDER BY m.month) FROM unnest(p_kind.months) AS m (month)),
        'cron', p_kind.cron,
        'timezone', CASE WHEN p_kind.every IS NULL THEN p_kind.timezone END,
        'timeout', extract(EPOCH FROM p_kind.timeout)::bigint,
        'priority', p_kind.priority,
        'retries', p_kind.retries,
        'enabled', p_kind.enabled OR p_kind.retired_at IS NOT NULL,
        -- only when not the default, so a kind that names neither reads as before they existed
        'weight', CASE WHEN p_kind.weight <> 1 THEN p_kind.weight END,
        'pools', CASE WHEN cardinality(p_kind.pools) > 0 THEN to_jsonb(p_kind.pools) END
    ))
$$;


--
-- Name: FUNCTION registry_entry(p_kind tickq.job_kind); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_entry(p_kind tickq.job_kind) IS 'A kind row in the canonical registry-entry form that tickq.sync_registry compares for drift.';


--
-- Name: registry_error(text, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_error(p_kind text, p_key text, p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $_$
BEGIN
    RAISE EXCEPTION '%', tickq.registry_where(p_kind, p_key) || p_message
        USING ERRCODE = 'TQ002', COLUMN = p_key,
        DETAIL = format('at %s', CASE WHEN p_kind IS NOT NULL THEN 'kinds.' || p_kind || '.' || p_key
            WHEN p_key ~ '^(agents|pools)(\.|$)' THEN p_key ELSE 'settings.' || p_key END),
        HINT = 'Fix the registry file; nothing was changed.';
END
$_$;


--
-- Name: FUNCTION registry_error(p_kind text, p_key text, p_message text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_error(p_kind text, p_key text, p_message text) IS 'Raises TQ002 naming the kind (or settings, or the agents or pools key) and the key of a refused registry value.';


--
-- Name: registry_fraction(jsonb, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_fraction(p_value jsonb, p_kind text, p_key text) RETURNS numeric
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limit(p_key) AS l;
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a number from %s to %s, got %s', v_low, v_high,
                coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN (p_value #>> '{}')::numeric;
END
$$;


--
-- Name: FUNCTION registry_fraction(p_value jsonb, p_kind text, p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_fraction(p_value jsonb, p_kind text, p_key text) IS 'A registry number within the bounds tickq.registry_limits gives p_key, or TQ002 naming kind, key and bounds.';


--
-- Name: registry_limit(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_limit(p_key text) RETURNS TABLE(low numeric, high numeric)
    LANGUAGE sql IMMUTABLE
    AS $_$
    -- A nested key of a kind (a chain's steps[2].timeout) has the bounds of its last part; a
    -- tool's key (agents.tools.NAME.timeout) those of agents.tools.timeout, a pool's
    -- (pools.NAME.slots) those of pools.slots.
    SELECT l.low, l.high FROM tickq.registry_limits() AS l
    WHERE l.key = CASE
        WHEN p_key ~ '^agents\.tools\.[^.]+\.' THEN 'agents.tools.' || substring(p_key FROM '[^.]*$')
        WHEN p_key ~ '^pools\.' THEN 'pools.' || substring(p_key FROM '[^.]*$')
        WHEN p_key LIKE 'agents.%' THEN p_key
        ELSE substring(p_key FROM '[^.]*$')
    END
$_$;


--
-- Name: FUNCTION registry_limit(p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_limit(p_key text) IS 'The bounds tickq.registry_limits gives the registry key p_key as the file spells it (steps[2].timeout, agents.tools.search.timeout).';


--
-- Name: registry_limits(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_limits() RETURNS TABLE(key text, low numeric, high numeric, unit text)
    LANGUAGE sql IMMUTABLE
    AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are; the length of a
    -- name in characters (unit 'chars'). A key of the [agents]
    -- section is spelled as in the file ("agents.max_turns"); a tool's key stands for every
    -- tool ("agents.tools.timeout" bounds agents.tools.NAME.timeout). days and months bound the
    -- calendar fields (a day 0 is refused apart: -31..-1 count from the month's end), on.nth the
    -- n of an nth weekday ("5th mon"). A pool's key stands for every pool ("pools.slots" bounds
    -- pools.NAME.slots); a kind's weight and [agents] weight are also at most settings.slots
    -- (tickq.weight_problems). The keys agent.* bound an agent row's own fields (tickq.check_agent:
    -- `tickq agent add`, or an edit in psql), not a key of the registry file; an agent differs
    -- from a kind on purpose: every run of it is a model's turns, paid for, so it runs at most
    -- once a minute (a kind every second), with up to 48 at times, 32 tools and a 32 KiB prompt.
    VALUES
        ('slots', 1, 1000, ''),
        ('weight', 1, 1000, ''),
        ('agents.weight', 1, 1000, ''),
        ('pools.slots', 1, 1000, ''),
        ('retries', 0, 100, ''),
        ('keep_runs', 1, 100000, ''),
        ('alert_after', 1, 1000, ''),
        ('capacity_margin', 0, 0.9, ''),
        ('tick', 1, 86400, 's'),
        ('stale_after', 1, 30 * 86400, 's'),
        ('lease_margin', 1, 86400, 's'),
        ('retry_base', 1, 86400, 's'),
        ('retry_max', 1, 7 * 86400, 's'),
        ('housekeeping_every', 1, 86400, 's'),
        ('housekeeping_timeout', 1, 7 * 86400, 's'),
        ('retention', 1, 3650 * 86400, 's'),
        ('alert_timeout', 1, 3600, 's'),
        ('ping_timeout', 1, 30, 's'),
        ('db_connect_timeout', 1, 600, 's'),
        ('db_statement_timeout', 1, 86400, 's'),
        ('db_lock_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's'),
        ('catch_up', 1, 366 * 86400, 's'),
        ('days', -31, 31, ''),
        ('months', 1, 12, ''),
        ('on.nth', 1, 5, ''),
        ('agents.max_turns', 1, 6, ''),
        ('agents.timeout', 1, 600, 's'),
        ('agents.retries', 0, 10, ''),
        ('agents.deliver_timeout', 1, 300, 's'),
        ('agents.request_timeout', 1, 600, 's'),
        ('agents.http_attempts', 1, 10, ''),
        ('agents.tools.timeout', 1, 300, 's'),
        ('agent.every', 60, 366 * 86400, 's'),
        ('agent.at', 1, 48, ''),
        ('agent.tools', 0, 32, ''),
        ('agent.prompt', 1, 32768, 'chars'),
        ('project', 1, 63, 'chars')
$$;


--
-- Name: FUNCTION registry_limits(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_limits() IS 'The bounds of every number in the registry (durations in seconds): the one place they are written (here, not in a migration: a new bound is one more row).';


--
-- Name: registry_mirror(text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_mirror(p_kind text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- STABLE: called in the statement that syncs, it sees the mirror as it was before the sync,
    -- which tells an edit of the registry file from a row changed behind its back.
    SELECT k.registry FROM tickq.job_kind AS k WHERE k.name = p_kind
$$;


--
-- Name: FUNCTION registry_mirror(p_kind text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_mirror(p_kind text) IS 'A kind''s registry mirror (job_kind.registry) as the calling statement''s snapshot sees it.';


--
-- Name: registry_problem(text, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_problem(p_message text, p_kind text, p_key text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN starts_with(p_message, tickq.registry_where(p_kind, p_key))
        THEN substr(p_message, length(tickq.registry_where(p_kind, p_key)) + 1) ELSE p_message END
$$;


--
-- Name: FUNCTION registry_problem(p_message text, p_kind text, p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_problem(p_message text, p_kind text, p_key text) IS 'A registry refusal''s message (tickq.registry_error) without its "where" start: what is wrong with the value.';


--
-- Name: registry_problems(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_problems(p_registry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, key text, problem text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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
    IF jsonb_typeof(p_registry) IS DISTINCT FROM 'object' OR jsonb_typeof(v_settings) <> 'object'
        OR jsonb_typeof(v_kinds) <> 'object' THEN
        RETURN QUERY SELECT NULL::text, '*'::text,
            'the registry must be a JSON object whose "settings" and "kinds" are objects'::text;
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
        RETURN QUERY SELECT NULL::text, p.key, p.problem FROM tickq.agents_problems(v_agents) AS p;
    END IF;
    RETURN QUERY SELECT NULL::text, p.key, p.problem FROM tickq.pools_problems(p_registry -> 'pools') AS p;
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


--
-- Name: FUNCTION registry_problems(p_registry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_problems(p_registry jsonb, p_now timestamp with time zone) IS 'Every value tickq.sync_registry would refuse in p_registry, one row per setting, key of a kind (tickq.kind_problems) or key of [agents] at fault (kind NULL for a setting or an agents key), by the same rules, and (key NULL) the queue''s refusal of another project''s sync when p_registry names its source (tickq.queue_registry_problem); changes nothing. None, without judging again, for the registry the queue last synced (tickq.queue_registry.digest).';


--
-- Name: registry_seconds(jsonb, text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_seconds(p_value jsonb, p_kind text, p_key text) RETURNS interval
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limit(p_key) AS l;
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high
        OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric) THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a duration from %s to %s, got %s',
                tickq.format_duration(make_interval(secs => v_low::double precision)),
                tickq.format_duration(make_interval(secs => v_high::double precision)),
                CASE WHEN jsonb_typeof(p_value) = 'number' AND (p_value #>> '{}')::numeric >= 1
                    AND (p_value #>> '{}')::numeric < 1e11
                    THEN tickq.format_duration(make_interval(secs => (p_value #>> '{}')::double precision))
                    ELSE coalesce(p_value::text || 's', 'nothing') END));
    END IF;
    RETURN make_interval(secs => (p_value #>> '{}')::double precision);
END
$$;


--
-- Name: FUNCTION registry_seconds(p_value jsonb, p_kind text, p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_seconds(p_value jsonb, p_kind text, p_key text) IS 'A registry duration (whole seconds within the bounds tickq.registry_limits gives p_key) as an interval, or TQ002 naming kind, key and bounds.';


--
-- Name: registry_settings(tickq.settings); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_settings(p_settings tickq.settings) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- The settings in registry units (durations in seconds), so '30 days' and 720 hours compare
    -- equal and drift reads like the registry file.
    SELECT jsonb_build_object(
        'slots', p_settings.slots,
        'tick', extract(EPOCH FROM p_settings.tick),
        'stale_after', extract(EPOCH FROM p_settings.stale_after),
        'lease_margin', extract(EPOCH FROM p_settings.lease_margin),
        'timezone', p_settings.timezone,
        'retry_base', extract(EPOCH FROM p_settings.retry_base),
        'retry_max', extract(EPOCH FROM p_settings.retry_max),
        'capacity_margin', p_settings.capacity_margin,
        'alert_after', p_settings.alert_after,
        'housekeeping_every', extract(EPOCH FROM p_settings.housekeeping_every),
        'retention', extract(EPOCH FROM p_settings.retention),
        'keep_runs', p_settings.keep_runs
    )
$$;


--
-- Name: FUNCTION registry_settings(p_settings tickq.settings); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_settings(p_settings tickq.settings) IS 'The settings row in the registry''s terms (durations in seconds), as tickq.sync_registry compares them for drift.';


--
-- Name: registry_source(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_source(p_registry jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT p_registry -> 'source' || jsonb_build_object('project', p_registry #>> '{settings,project}',
        'resolved', coalesce(p_registry #>> '{source,resolved}', p_registry #>> '{source,path}'),
        'host', coalesce(p_registry #>> '{source,host}', ''))
    WHERE jsonb_typeof(p_registry -> 'source') = 'object' AND jsonb_typeof(p_registry #> '{source,path}') = 'string'
$$;


--
-- Name: FUNCTION registry_source(p_registry jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_source(p_registry jsonb) IS 'Where p_registry comes from, as tickq.same_project reads it: its "source" ({path, resolved, host}) with its settings.project; NULL for a JSON that names no source (a script''s).';


--
-- Name: registry_where(text, text); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.registry_where(p_kind text, p_key text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
    -- A key of the [agents] section or of a pool is named as the file spells it (agents.max_turns,
    -- pools.NAME.slots); any other key without a kind is one of [settings].
    SELECT 'registry: ' || CASE WHEN p_kind IS NOT NULL THEN 'kind "' || p_kind || '", '
            WHEN p_key ~ '^(agents|pools)(\.|$)' THEN '' ELSE 'settings, ' END
        || 'key "' || p_key || '": '
$_$;


--
-- Name: FUNCTION registry_where(p_kind text, p_key text); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.registry_where(p_kind text, p_key text) IS 'The start of a registry refusal''s message, naming the kind (or settings) and the key; tickq.registry_problem takes it off again.';


--
-- Name: release_dead_lease(bigint, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.release_dead_lease(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone DEFAULT now()) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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


--
-- Name: FUNCTION release_dead_lease(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.release_dead_lease(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone) IS 'Turns a live run leased by p_dispatcher into a lost run at once, as expire_leases does when the lease runs out. For a dispatcher known to be dead (on its own host, its pid gone or reused: the ledger of running commands tells); true if the run was released, false if it was no longer live, no longer leased by p_dispatcher, or its kind row is held by another session.';


--
-- Name: remove_agent(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.remove_agent(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM FROM tickq.settings FOR UPDATE;
    PERFORM set_config('tickq.agent_now', p_now::text, true);
    DELETE FROM tickq.agent AS a WHERE a.name = p_name RETURNING a.id INTO v_id;
    PERFORM set_config('tickq.agent_now', '', true);
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'no agent %', coalesce(quote_literal(p_name), 'null')
            USING ERRCODE = 'TQ041', HINT = 'tickq agent list shows the agents.';
    END IF;
    RETURN v_id;
END
$$;


--
-- Name: FUNCTION remove_agent(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.remove_agent(p_name text, p_now timestamp with time zone) IS 'Deletes an agent and retires its kind (runs and transcripts stay until housekeeping prunes them); returns its id. TQ041 for an unknown agent.';


--
-- Name: report_dispatchers_at(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_dispatchers_at(p_hours numeric DEFAULT 24, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(host text, last_tick_at timestamp with time zone, last_claim_at timestamp with time zone, runs integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Per host (a dispatcher is host:pid, a new one each tick): its last tick that ended
    -- (tickq.dispatcher_tick), its last claim and its runs in the window.
    WITH claims AS (
        SELECT split_part(r.dispatcher, ':', 1) AS host, max(r.claimed_at) AS last_claim_at,
            count(*)::integer AS runs
        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r
        WHERE r.dispatcher NOT LIKE 'simulator%'
        GROUP BY 1
    )
    SELECT coalesce(t.host, c.host), t.last_tick_at, c.last_claim_at, coalesce(c.runs, 0)
    FROM (SELECT d.host, d.last_tick_at FROM tickq.dispatcher_tick AS d WHERE d.last_tick_at <= p_now) AS t
    FULL JOIN claims AS c ON t.host = c.host
    ORDER BY greatest(t.last_tick_at, c.last_claim_at) DESC NULLS LAST
$$;


--
-- Name: FUNCTION report_dispatchers_at(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_dispatchers_at(p_hours numeric, p_now timestamp with time zone) IS 'Each dispatcher host: its last tick that ended, its last claim and its runs in the last p_hours.';


--
-- Name: report_header_at(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_header_at(p_hours numeric DEFAULT 24, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(slots integer, slots_in_use integer, kinds integer, stale integer, failing integer, disabled integer, paused integer, unarmed integer, drift_recent integer, window_start timestamp with time zone, window_end timestamp with time zone, timezone text, tick interval, stale_after interval, failing_kinds text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT
        s.slots,
        (SELECT count(*)::integer FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL),
        (SELECT count(*)::integer FROM tickq.job_kind AS k WHERE k.retired_at IS NULL),
        (SELECT count(*)::integer FROM tickq.stale_due_at(p_now)),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after),
        (SELECT count(*)::integer FROM tickq.job_kind AS k WHERE k.retired_at IS NULL AND NOT k.enabled),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.enabled AND k.paused_until > p_now),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.enabled AND k.irreversible AND k.armed_at IS NULL),
        (SELECT count(*)::integer FROM tickq.drift AS d
            WHERE d.detected_at > p_now - interval '1 day' AND d.detected_at <= p_now),
        tickq.report_window_start_at(p_hours, p_now),
        p_now,
        s.timezone,
        s.tick,
        s.stale_after,
        -- the kinds the failing count counts, the longest streak first
        (SELECT coalesce(array_agg(k.name ORDER BY k.failure_streak DESC, k.name), '{}')
            FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after)
    FROM tickq.settings AS s
$$;


--
-- Name: FUNCTION report_header_at(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_header_at(p_hours numeric, p_now timestamp with time zone) IS 'The status page''s header as of p_now: slots in use and the limit, kinds, stale and failing (streak at alert_after or more), disabled, paused and unarmed irreversible kinds, drift found in the last day, the window (the last p_hours, or since the queue began: report_window_start_at), the registry''s zone, tick and stale threshold, and the names of the failing kinds.';


--
-- Name: report_kinds_at(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_kinds_at(p_hours numeric DEFAULT 24, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, schedule text, state text, last_outcome tickq.outcome, last_finished_at timestamp with time zone, failure_streak integer, next_due_at timestamp with time zone, p50 interval, p95 interval, recent_failures jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT
        q.kind, q.priority, q.schedule, q.state, q.last_outcome, q.last_finished_at,
        q.failure_streak, q.next_due_at, d.p50, d.p95,
        coalesce(f.failures, '[]'::jsonb)
    FROM tickq.queue_status_at(p_now) AS q
    -- Durations of the last 20 successful runs (job_run_kind_ok: an index range per kind).
    LEFT JOIN LATERAL (
        SELECT
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(EPOCH FROM ok.duration))
            * interval '1 second' AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(EPOCH FROM ok.duration))
            * interval '1 second' AS p95
        FROM (
            SELECT r.duration FROM tickq.job_run AS r
            WHERE r.kind = q.kind AND r.outcome = 'ok'
            ORDER BY r.id DESC LIMIT 20
        ) AS ok
    ) AS d ON true
    -- The last three failures in the window of each kind, each with the end of its output (the
    -- page escapes it: output is untrusted text). One range of job_run_finished_at for all
    -- kinds: a probe per kind would read every run the kind ever had.
    LEFT JOIN (
        SELECT x.kind, jsonb_agg(jsonb_build_object(
            'run_id', x.id, 'outcome', x.outcome, 'exit_code', x.exit_code,
            'finished_at', x.finished_at, 'output_tail', right(x.output_tail, 2000))
            ORDER BY x.finished_at DESC) AS failures
        FROM (
            SELECT r.kind, r.id, r.outcome, r.exit_code, r.finished_at, r.output_tail,
                row_number() OVER (PARTITION BY r.kind ORDER BY r.finished_at DESC, r.id DESC) AS n
            FROM tickq.job_run AS r
            WHERE r.finished_at >= p_now - p_hours * interval '1 hour' AND r.finished_at <= p_now
                AND r.outcome IN ('failed', 'timeout', 'lost')
        ) AS x
        WHERE x.n <= 3
        GROUP BY x.kind
    ) AS f ON q.kind = f.kind
    WHERE q.state <> 'retired'
$$;


--
-- Name: FUNCTION report_kinds_at(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_kinds_at(p_hours numeric, p_now timestamp with time zone) IS 'Per kind for the status page: schedule in words, state, last outcome, failure streak, next due, p50/p95 of the last 20 successful durations, and the last three failures of the last p_hours with the end of their output.';


--
-- Name: report_late_run(bigint, text, tickq.outcome, integer, text, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_late_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer DEFAULT NULL::integer, p_output_tail text DEFAULT NULL::text, p_duration interval DEFAULT NULL::interval, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, outcome tickq.outcome, verdict text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    v_run tickq.job_run;
    v_kind tickq.job_kind;
    v_finished timestamptz;
BEGIN
    IF p_outcome IS NULL OR p_outcome IN ('running', 'lost', 'skipped') THEN
        RAISE EXCEPTION 'a run is reported as ok, failed, timeout, interrupted or cancelled, not %',
            coalesce(p_outcome::text, 'null')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing was changed.';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = p_run_id;
    -- A run the database never had (a claim lost in a failover): "unknown", kept aside by the
    -- dispatcher, never silently dropped.
    IF NOT FOUND THEN
        RETURN QUERY SELECT p_run_id, NULL::text, NULL::tickq.outcome, 'unknown'::text;
        RETURN;
    END IF;
    -- Only the dispatcher that claimed the run may report it, late or not.
    IF v_run.dispatcher IS DISTINCT FROM p_dispatcher THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'ignored'::text;
        RETURN;
    END IF;
    -- Kind before run, as everywhere. A kind row another session holds is not waited on: the
    -- result stays in the spool for the next tick (verdict "locked").
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = v_run.kind FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'locked'::text;
        RETURN;
    END IF;
    SELECT * INTO STRICT v_run FROM tickq.job_run AS r WHERE r.id = p_run_id FOR UPDATE;

    IF v_run.outcome = 'running' AND v_kind.run_id = p_run_id THEN
        -- Still leased (the outage ended before anything expired the lease): an ordinary report.
        PERFORM tickq.finish_run(p_run_id, p_outcome, p_exit_code, p_output_tail, p_duration, p_now);
        RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'reported'::text;
        RETURN;
    END IF;
    IF v_run.outcome <> 'lost' OR v_run.late_report_at IS NOT NULL THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'ignored'::text;
        RETURN;
    END IF;

    -- The lease expired into `lost`: the run gets its real outcome, marked late.
    UPDATE tickq.job_run AS r SET
        outcome = p_outcome,
        exit_code = p_exit_code,
        output_tail = right(p_output_tail, 65536),
        duration = coalesce(p_duration, r.duration),
        late_report_at = p_now
    WHERE r.id = p_run_id;

    -- `lost` counted as a failure (streak, maybe a retry). A success undoes that, as long as
    -- nothing has run the kind since: the kind is rescheduled as if the report had come in time,
    -- from when the command really finished.
    IF p_outcome = 'ok' AND v_kind.run_id IS NULL AND v_kind.last_run_id = p_run_id
        AND NOT EXISTS (SELECT FROM tickq.job_run AS r WHERE r.kind = v_run.kind AND r.id > p_run_id) THEN
        v_finished := least(v_run.finished_at,
            coalesce(v_run.started_at, v_run.claimed_at) + coalesce(p_duration, '0'::interval));
        UPDATE tickq.job_kind AS k SET
            failure_streak = 0,
            attempts = 0,
            next_trigger = 'schedule',
            due_at = tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, v_finished),
            updated_at = p_now
        WHERE k.name = v_run.kind;
        RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'late, failure undone'::text;
        RETURN;
    END IF;
    RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'late'::text;
END
$$;


--
-- Name: FUNCTION report_late_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_late_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) IS 'A result kept in a dispatcher''s spool while the database was away. A run still leased to p_dispatcher is finished as report_run would (verdict "reported"); a run the lease turned into lost gets its real outcome and late_report_at (verdict "late"), and a late success also undoes the failure lost caused (streak, retry) when nothing has run the kind since ("late, failure undone"). A run the database does not have (pruned, or a claim lost in a failover) is "unknown"; anything else (not this dispatcher''s run, already reported) is "ignored". Both change nothing; "locked" (nothing changed) when another session holds the kind''s row: the spool keeps the result for the next try.';


--
-- Name: report_occupancy_at(numeric, integer, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_occupancy_at(p_hours numeric DEFAULT 24, p_steps integer DEFAULT 600, p_pool text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(step_start timestamp with time zone, in_use integer)
    LANGUAGE sql STABLE
    AS $$
    -- Occupancy as a step plot: runs overlapping the window counted at their claim (+) and
    -- finish (-); each of p_steps equal steps shows the most held at any moment in it, so a
    -- short peak is never averaged away. p_pool NULL: the global slots, a run counting its
    -- weight; a pool's name: that pool's slots, a run naming it counting one.
    -- The steps divide the page's own axis: p_hours back, or less on a queue younger than
    -- that (tickq.report_window_start_at, the one owner of where the window begins).
    WITH bounds AS (
        SELECT w.since, (p_now - w.since) / p_steps AS width
        FROM (SELECT tickq.report_window_start_at(p_hours, p_now) AS since) AS w
    ),
    runs AS (
        SELECT r.claimed_at, r.finished_at,
            CASE WHEN p_pool IS NULL THEN r.weight ELSE 1 END AS held
        FROM tickq.window_runs((SELECT b.since FROM bounds AS b), p_now) AS r
        WHERE r.dispatcher NOT LIKE 'simulator%' AND (p_pool IS NULL OR p_pool = ANY(r.pools))
    ),
    events AS (
        SELECT runs.claimed_at AS at, runs.held AS delta FROM runs
        UNION ALL
        SELECT runs.finished_at, -runs.held FROM runs WHERE runs.finished_at IS NOT NULL
    ),
    level AS (
        -- Finishes before claims at the same instant: a slot freed and taken again at once
        -- is one slot, not two.
        SELECT e.at, row_number() OVER w AS seq, sum(e.delta) OVER w AS in_use
        FROM events AS e
        WINDOW w AS (ORDER BY e.at, e.delta ROWS UNBOUNDED PRECEDING)
    ),
    per_step AS (
        -- Each event falls in one step (those before the window in step -1): the most held in
        -- the step, and the level its last event left behind (the greatest [seq, level] pair:
        -- an aggregate without an order, so the steps are hashed, not the events sorted again).
        SELECT
            greatest(-1, floor(extract(EPOCH FROM l.at - b.since) / extract(EPOCH FROM b.width)))::integer
                AS n,
            max(l.in_use) AS peak,
            (max(ARRAY[l.seq, l.in_use]))[2] AS level_after
        FROM level AS l
        CROSS JOIN bounds AS b
        GROUP BY 1
    ),
    steps AS (
        SELECT g.n, b.since + g.n * b.width AS step_start, ps.peak,
            -- the last earlier step that had events: its level is carried into this one
            max(ps.n) OVER (ORDER BY g.n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS carried_from
        FROM bounds AS b
        CROSS JOIN generate_series(-1, p_steps - 1) AS g (n)
        LEFT JOIN per_step AS ps ON g.n = ps.n
    )
    SELECT st.step_start, greatest(st.peak, carried.level_after, 0)::integer
    FROM steps AS st
    LEFT JOIN per_step AS carried ON st.carried_from = carried.n
    WHERE st.n >= 0
    ORDER BY st.n
$$;


--
-- Name: FUNCTION report_occupancy_at(p_hours numeric, p_steps integer, p_pool text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_occupancy_at(p_hours numeric, p_steps integer, p_pool text, p_now timestamp with time zone) IS 'Occupancy over the status page''s window (the last p_hours, or since the queue began when that is later: tickq.report_window_start_at) in p_steps equal steps, the most held at any moment of each step, from the runs'' claim and finish times: of the global slots (p_pool NULL; a run holds its weight) or of one pool (a run naming it holds one of its slots).';


--
-- Name: report_pools_at(numeric, integer, integer, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_pools_at(p_hours numeric DEFAULT 24, p_steps integer DEFAULT 600, p_limit integer DEFAULT 8, p_holders integer DEFAULT 3, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(pool text, slots integer, busy integer, free integer, peak integer, kinds integer, waiting integer, holders jsonb, drawn boolean, steps jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Every pool with what it holds now and its peak over the window; the first p_limit of
    -- them (those full now or waited on first, then the busiest, then by name) carry their
    -- occupancy steps for the page's plot, so the page stays bounded however many pools there
    -- are. Steps are [step_start, in_use] pairs; holders the first p_holders runs (busy counts
    -- them all).
    WITH now_held AS (
        SELECT o.*, row_number() OVER (
            ORDER BY o.free = 0 AND o.busy > 0 DESC, o.waiting > 0 DESC, o.busy DESC, o.pool
        ) AS place
        FROM tickq.pool_occupancy_at(p_now) AS o
    )
    SELECT n.pool, n.slots, n.busy, n.free, CASE WHEN n.place <= p_limit THEN greatest(coalesce(s.peak, 0), n.busy) END,
        n.kinds, n.waiting,
        (SELECT coalesce(jsonb_agg(h.holder ORDER BY h.i), '[]')
            FROM jsonb_array_elements(n.holders) WITH ORDINALITY AS h (holder, i) WHERE h.i <= p_holders),
        n.place <= p_limit, s.steps
    FROM now_held AS n
    LEFT JOIN LATERAL (
        SELECT max(o.in_use) AS peak,
            jsonb_agg(jsonb_build_array(o.step_start, o.in_use) ORDER BY o.step_start) AS steps
        FROM tickq.report_occupancy_at(p_hours, p_steps, n.pool, p_now) AS o
        WHERE n.place <= p_limit
    ) AS s ON true
    ORDER BY n.place
$$;


--
-- Name: FUNCTION report_pools_at(p_hours numeric, p_steps integer, p_limit integer, p_holders integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_pools_at(p_hours numeric, p_steps integer, p_limit integer, p_holders integer, p_now timestamp with time zone) IS 'The status page''s pools: each pool''s slots, held and free now, peak over the last p_hours, the kinds naming it, those waiting and the first p_holders runs holding it; the first p_limit (full or waited on first, then busiest) also carry p_steps occupancy steps for the plot (drawn), the others none.';


--
-- Name: report_run(bigint, text, tickq.outcome, integer, text, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer DEFAULT NULL::integer, p_output_tail text DEFAULT NULL::text, p_duration interval DEFAULT NULL::interval, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, outcome tickq.outcome, failure_streak integer, next_due_at timestamp with time zone, next_trigger tickq.run_trigger)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    v_done record;
BEGIN
    IF p_outcome IS NULL OR p_outcome IN ('running', 'lost', 'skipped') THEN
        RAISE EXCEPTION 'a run is reported as ok, failed, timeout, interrupted or cancelled, not %',
            coalesce(p_outcome::text, 'null')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing was changed.';
    END IF;
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    v_done := tickq.finish_run(p_run_id, p_outcome, p_exit_code, p_output_tail, p_duration, p_now);
    run_id := v_done.run_id;
    kind := v_done.kind;
    outcome := v_done.outcome;
    failure_streak := v_done.failure_streak;
    next_due_at := v_done.next_due_at;
    next_trigger := v_done.next_trigger;
    RETURN NEXT;
END
$$;


--
-- Name: FUNCTION report_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) IS 'Finishes a live run leased by p_dispatcher: records outcome, exit code, the last 64 KiB of output and the duration, releases the lease and reschedules the kind. A report for a run that is not live (already reported, lost, or leased by another dispatcher) raises TQ001, one the database never had TQ007, and changes nothing.';


--
-- Name: report_slots_at(numeric, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_slots_at(p_hours numeric DEFAULT 24, p_steps integer DEFAULT 600, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(step_start timestamp with time zone, in_use integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT o.step_start, o.in_use FROM tickq.report_occupancy_at(p_hours, p_steps, NULL, p_now) AS o
$$;


--
-- Name: FUNCTION report_slots_at(p_hours numeric, p_steps integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_slots_at(p_hours numeric, p_steps integer, p_now timestamp with time zone) IS 'Global slot occupancy over the status page''s window (tickq.report_occupancy_at) in p_steps equal steps: the most slots held at any moment of each step, a run holding its weight.';


--
-- Name: report_step(bigint, text, integer, text, tickq.outcome, integer, text, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_step(p_run_id bigint, p_dispatcher text, p_n integer, p_name text, p_outcome tickq.outcome, p_exit_code integer DEFAULT NULL::integer, p_output_tail text DEFAULT NULL::text, p_duration interval DEFAULT NULL::interval, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_steps jsonb;
BEGIN
    IF p_outcome IS NULL OR p_outcome IN ('running', 'lost', 'skipped') THEN
        RAISE EXCEPTION 'a step is reported as ok, failed, timeout, interrupted or cancelled, not %',
            coalesce(p_outcome::text, 'null')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing was changed.';
    END IF;
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


--
-- Name: FUNCTION report_step(p_run_id bigint, p_dispatcher text, p_n integer, p_name text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_step(p_run_id bigint, p_dispatcher text, p_n integer, p_name text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) IS 'Records how step p_n (named p_name, as in the registry) of a chain''s live run ended: outcome, exit code, duration (ending now) and the last 64 KiB of output. Only the dispatcher holding the lease may report (TQ001); an unknown step raises TQ031, a step reported twice TQ032.';


--
-- Name: report_timeline_at(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_timeline_at(p_hours numeric DEFAULT 24, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, bar_start timestamp with time zone, bar_end timestamp with time zone, outcome tickq.outcome, runs integer, first_run_id bigint, wait_start timestamp with time zone, longest_wait interval, stale_at timestamp with time zone, longest_run interval)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- One bar per run, from its claim to its end, as long as it really was: the page draws a
    -- bar at least 2 px wide, and a pixel is a 900th of the window (the page's plot is 900 px,
    -- tickq/page/layout.py). Only runs the page could not draw apart are one bar: the next run
    -- of the kind, of the same outcome, starting less than a pixel after the last one's drawn
    -- end. Such a bar carries its count (the page marks it "N runs") and its longest run, so a
    -- kind that ran every minute all day is one bar of 1440 runs, while seven runs a minute
    -- apart over the last hour are seven bars. The wait before a bar (due to claimed) is the
    -- longest wait of the runs it holds; stale_at is where that wait passed stale_after.
    -- MATERIALIZED: once, not once per run (the planner would inline the call into each row).
    WITH frame AS MATERIALIZED (
        SELECT w.since, (p_now - w.since) / 900 AS px
        FROM (SELECT tickq.report_window_start_at(p_hours, p_now) AS since) AS w
    ),
    runs AS (
        -- Only what the bars need, as narrow as it goes (the sort below holds every run of
        -- the window): a run's wait and length are its claim's distance to due_at and bar_end.
        SELECT
            -- A run due during the kind's last pause waited on purpose until the pause ended:
            -- its wait for a slot starts there (as stale_due_at counts it).
            r.id, r.kind, k.priority, r.outcome, r.claimed_at,
            greatest(r.due_at, w.pause_end) AS due_at,
            greatest(r.claimed_at, f.since) AS bar_start,
            coalesce(r.finished_at, p_now) AS bar_end
        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r
        CROSS JOIN frame AS f
        INNER JOIN tickq.job_kind AS k ON r.kind = k.name
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.paused_until <= r.claimed_at AND r.due_at IS NOT NULL
                THEN k.paused_until END AS pause_end
        ) AS w
        WHERE r.dispatcher NOT LIKE 'simulator%'
    ),
    marked AS (
        -- One sort of the window's runs, in the order the page lists them (lane, kind, time):
        -- the bars are numbered in it, grouped in it and come out in it. A run starts a bar
        -- unless it follows one of its kind and outcome by less than a pixel after its drawn
        -- end (at least 2 px after its start).
        SELECT
            runs.*,
            CASE WHEN lag(runs.kind) OVER w = runs.kind AND lag(runs.outcome) OVER w = runs.outcome
                AND runs.bar_start
                    - lag(greatest(runs.bar_end, runs.bar_start + 2 * f.px)) OVER w < f.px
                THEN 0 ELSE 1 END AS starts_bar
        FROM runs
        CROSS JOIN frame AS f
        WINDOW w AS (ORDER BY runs.priority, runs.kind, runs.bar_start, runs.id)
    ),
    grouped AS (
        SELECT marked.*, sum(marked.starts_bar) OVER (
            ORDER BY marked.priority, marked.kind, marked.bar_start, marked.id) AS bar_no
        FROM marked
    )
    SELECT
        g.kind,
        g.priority,
        min(g.bar_start),
        max(g.bar_end),
        min(g.outcome::text)::tickq.outcome,
        count(*)::integer,
        min(g.id),
        (array_agg(g.due_at ORDER BY w.waited DESC, g.id))[1],
        max(w.waited),
        CASE WHEN max(w.waited) > s.stale_after
            THEN (array_agg(g.due_at ORDER BY w.waited DESC, g.id))[1] + s.stale_after END,
        max(g.bar_end - g.claimed_at)
    FROM grouped AS g
    CROSS JOIN LATERAL (SELECT g.claimed_at - coalesce(g.due_at, g.claimed_at) AS waited) AS w
    CROSS JOIN tickq.settings AS s
    GROUP BY g.priority, g.kind, g.bar_no, s.stale_after
    ORDER BY g.priority, g.kind, g.bar_no
$$;


--
-- Name: FUNCTION report_timeline_at(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_timeline_at(p_hours numeric, p_now timestamp with time zone) IS 'The status page''s timeline over its window (report_window_start_at): a bar per run at its real length; runs of one outcome the page cannot draw apart (less than a 900th of the window after the last one''s drawn end, a bar being at least two 900ths) are one bar with their count and longest run. Each bar has the longest wait before it and where that wait went stale (a run due during its kind''s last pause waits from the pause''s end).';


--
-- Name: report_waiting_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_waiting_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, due_at timestamp with time zone, waiting interval, stale boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Kinds due now and not yet claimed: their wait is still going on at the right edge. A
    -- paused kind waits on purpose and an unarmed one for a person, not a slot (as
    -- stale_due_at): neither is drawn; a pause that ended counts as due since its end.
    SELECT k.name, k.priority, w.since, p_now - w.since, w.since <= p_now - s.stale_after
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    CROSS JOIN LATERAL (SELECT greatest(k.due_at, k.paused_until) AS since) AS w
    WHERE tickq.kind_claimable(k) AND k.run_id IS NULL AND k.due_at <= p_now
        AND NOT coalesce(k.paused_until > p_now, false)
    ORDER BY w.since, k.name
$$;


--
-- Name: FUNCTION report_waiting_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_waiting_at(p_now timestamp with time zone) IS 'Enabled kinds due and unclaimed as of p_now (the waits still open, since the due time or the end of a pause), with whether each is stale; paused and unarmed kinds are not waiting for a slot.';


--
-- Name: report_window_start_at(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.report_window_start_at(p_hours numeric DEFAULT 24, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    -- A queue younger than the window: the page's timeline begins when the queue began (its
    -- first kind, or an earlier run or the time it was due), so a new install uses the
    -- timeline's whole width instead of a few pixels at its right edge; never later than a
    -- second before p_now. A queue older than the window (the usual case: a kind created, or
    -- a run finished, before it; one probe of job_run_finished_at) reads no run of the window.
    SELECT CASE
        WHEN (SELECT min(k.created_at) FROM tickq.job_kind AS k) <= p_now - p_hours * interval '1 hour'
            OR EXISTS (SELECT FROM tickq.job_run AS r
                WHERE r.finished_at < p_now - p_hours * interval '1 hour' AND r.finished_at IS NOT NULL)
            THEN p_now - p_hours * interval '1 hour'
        ELSE greatest(
            p_now - p_hours * interval '1 hour',
            least(
                coalesce(least(
                    (SELECT min(k.created_at) FROM tickq.job_kind AS k),
                    (SELECT min(least(r.due_at, r.claimed_at))
                        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r)
                ), p_now - p_hours * interval '1 hour'),
                p_now - interval '1 second'
            )
        )
    END
$$;


--
-- Name: FUNCTION report_window_start_at(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.report_window_start_at(p_hours numeric, p_now timestamp with time zone) IS 'Where the status page''s window begins: p_hours before p_now, or when the queue began (its first kind, or a run or its due time in the window if earlier) if that is later and no run finished before the window; at least a second before p_now.';


--
-- Name: request_cancel(text, text, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.request_cancel(p_target text, p_reason text, p_claimed_by text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, leased_by text, leased_until timestamp with time zone, polled_at timestamp with time zone, dispatcher_seen boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $_$
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
$_$;


--
-- Name: FUNCTION request_cancel(p_target text, p_reason text, p_claimed_by text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.request_cancel(p_target text, p_reason text, p_claimed_by text, p_now timestamp with time zone) IS 'Asks the dispatcher holding a run to stop it: p_target is a run id or a kind (its live run). Records when, who (tickq.asked_by: the session''s role, then p_claimed_by, the OS user and host the client claims, labelled as a claim) and why on the run, and returns the dispatcher holding it and whether it was seen lately (asked for cancels in the last 30 seconds). Unknown run or kind: TQ100; not running: TQ101; a reason over 500 characters: TQ102.';


--
-- Name: resume_agent(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.resume_agent(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS tickq.agent
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT tickq.save_agent(p_name, '{"paused": false}', false, p_now);
$$;


--
-- Name: FUNCTION resume_agent(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.resume_agent(p_name text, p_now timestamp with time zone) IS 'Resumes a paused agent: its kind is enabled and due at its next slot after p_now (no catch-up). TQ041 for an unknown agent.';


--
-- Name: resume_kind(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.resume_kind(p_kind text, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_was timestamptz;
BEGIN
    SELECT CASE WHEN k.paused_until > p_now THEN k.paused_until END INTO v_was
    FROM tickq.job_kind AS k
    WHERE k.name = p_kind AND k.retired_at IS NULL
    FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no kind "%" in the registry', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    IF v_was IS NOT NULL THEN
        -- Ended now rather than cleared: a kind due during the pause counts as waiting since
        -- now (stale_due_at), not since its due time.
        UPDATE tickq.job_kind AS k SET paused_until = p_now, updated_at = p_now WHERE k.name = p_kind;
    END IF;
    RETURN v_was;
END
$$;


--
-- Name: FUNCTION resume_kind(p_kind text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.resume_kind(p_kind text, p_now timestamp with time zone) IS 'Ends a pause now; returns when it would have ended (NULL: the kind was not paused). Slots missed during the pause merge into one run, as after a sleep. Raises TQ003 unknown kind.';


--
-- Name: retire_agent_kind(text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.retire_agent_kind(p_name text, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE sql
    AS $$
    -- Retired, never deleted, so the runs and transcripts of a removed agent stay readable.
    UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
    WHERE k.name = 'agent.' || p_name AND k.retired_at IS NULL;
$$;


--
-- Name: FUNCTION retire_agent_kind(p_name text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.retire_agent_kind(p_name text, p_now timestamp with time zone) IS 'Internal: retires the job_kind of a removed agent (disabled, history kept).';


--
-- Name: retired_kinds_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.retired_kinds_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, retired_at timestamp with time zone, runs bigint, last_run_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT k.name, k.retired_at, count(r.id), max(r.finished_at)
    FROM tickq.job_kind AS k
    LEFT JOIN tickq.job_run AS r ON k.name = r.kind
    WHERE k.retired_at IS NOT NULL AND k.retired_at <= p_now
    GROUP BY k.name, k.retired_at
    ORDER BY k.retired_at DESC, k.name
$$;


--
-- Name: FUNCTION retired_kinds_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.retired_kinds_at(p_now timestamp with time zone) IS 'The retired kinds (gone from the registry; kept with their runs until forgotten), latest first: when each was retired, how many runs it keeps, when the last one finished.';


--
-- Name: run_detail(bigint, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.run_detail(p_run_id bigint, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, run_trigger tickq.run_trigger, attempt integer, due_at timestamp with time zone, claimed_at timestamp with time zone, started_at timestamp with time zone, finished_at timestamp with time zone, duration interval, outcome tickq.outcome, exit_code integer, slots_merged integer, dispatcher text, output_tail text, slot_at timestamp with time zone, first_slot_at timestamp with time zone, slots_covered integer, weight integer, pools text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT r.id, r.kind, r.run_trigger, r.attempt::integer, r.due_at, r.claimed_at, r.started_at,
        r.finished_at, coalesce(r.duration, p_now - r.claimed_at), r.outcome, r.exit_code,
        r.slots::integer, r.dispatcher, r.output_tail::text, r.slot_at, r.first_slot_at, r.slots_covered,
        r.weight::integer, r.pools
    FROM tickq.job_run AS r
    WHERE r.id = p_run_id
$$;


--
-- Name: FUNCTION run_detail(p_run_id bigint, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.run_detail(p_run_id bigint, p_now timestamp with time zone) IS 'One run with its whole output tail, its weight and pools (tickq history --run ID); no row for an unknown id.';


--
-- Name: queue_registry; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.queue_registry (
    "only" boolean DEFAULT true NOT NULL,
    path text,
    host text,
    synced_at timestamp with time zone,
    digest text,
    resolved text,
    project text,
    CONSTRAINT queue_registry_only_check CHECK ("only")
);


--
-- Name: TABLE queue_registry; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.queue_registry IS 'One row: what is known of the registry that synced this queue. path: the registry file as the user named it (absolute, links not followed); resolved: the same with links followed; project: its settings.project, if any; host: where the last sync that named a file came from; synced_at: when; digest: see its column. tickq.same_project says whether another registry is this project.';


--
-- Name: COLUMN queue_registry.path; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.queue_registry.path IS 'The registry file as given (absolute, links not followed: a deploy''s `current` link stays one path).';


--
-- Name: COLUMN queue_registry.digest; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.queue_registry.digest IS 'sha256 of the registry JSON (without its "dispatcher" key) and of the API checksum, written by the last tickq.sync_registry that left the queue matching it; NULL once a kind''s registry columns, the settings, the [agents] caps or the slot rows are written by anything else.';


--
-- Name: COLUMN queue_registry.resolved; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.queue_registry.resolved IS 'The registry file with every link followed.';


--
-- Name: COLUMN queue_registry.project; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.queue_registry.project IS 'The registry''s settings.project: a name that makes two checkouts (other paths, other hosts) one project.';


--
-- Name: same_project(tickq.queue_registry, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.same_project(p_stored tickq.queue_registry, p_source jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT coalesce(p_stored.project = p_source ->> 'project', false)
        OR coalesce(p_stored.path IN (p_source ->> 'path', p_source ->> 'resolved'), false)
        OR coalesce(p_stored.resolved IN (p_source ->> 'path', p_source ->> 'resolved'), false)
$$;


--
-- Name: FUNCTION same_project(p_stored tickq.queue_registry, p_source jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.same_project(p_stored tickq.queue_registry, p_source jsonb) IS 'Whether the registry p_source names ({path, resolved, project}: the file as given, with links followed, its settings.project) is the project p_stored recorded: the same project name, or the same file by either path.';


--
-- Name: save_agent(text, jsonb, boolean, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.save_agent(p_name text, p_fields jsonb, p_create boolean DEFAULT NULL::boolean, p_now timestamp with time zone DEFAULT now()) RETURNS tickq.agent
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_old tickq.agent;
    v_new tickq.agent;
    v_exists boolean;
    v_key text;
BEGIN
    IF jsonb_typeof(p_fields) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.agent_error(p_name, '*', 'the fields must be a JSON object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_fields) LOOP
        IF NOT v_key = ANY(ARRAY['prompt', 'every', 'at', 'on', 'days', 'months', 'cron', 'timezone', 'max_turns',
            'timeout', 'owner', 'tools', 'paused']) THEN
            PERFORM tickq.agent_error(p_name, v_key, 'unknown field');
        END IF;
    END LOOP;
    -- Agent edits take the settings row first, as a registry sync does, so the two never lock
    -- kind and settings rows in opposite orders.
    PERFORM FROM tickq.settings FOR UPDATE;
    SELECT * INTO v_old FROM tickq.agent AS a WHERE a.name = p_name FOR UPDATE;
    v_exists := FOUND;
    IF v_exists AND p_create THEN
        RAISE EXCEPTION 'agent % already exists', quote_literal(p_name)
            USING ERRCODE = 'TQ042', HINT = 'Use tickq agent edit to change it, or pick another name.';
    END IF;
    IF NOT v_exists AND NOT p_create THEN
        RAISE EXCEPTION 'no agent %', coalesce(quote_literal(p_name), 'null')
            USING ERRCODE = 'TQ041', HINT = 'tickq agent list shows the agents.';
    END IF;
    IF v_exists THEN
        v_new := v_old;
    ELSE
        SELECT p_name, s.max_turns, s.max_timeout, false, '{}'::text[]
        INTO v_new.name, v_new.max_turns, v_new.timeout, v_new.paused, v_new.tools
        FROM tickq.agent_settings AS s;
        IF NOT p_fields ? 'prompt' THEN
            PERFORM tickq.agent_error(p_name, 'prompt', 'a new agent needs a prompt');
        END IF;
        IF NOT p_fields ?| ARRAY['every', 'at', 'cron'] THEN
            PERFORM tickq.agent_error(p_name, 'schedule', 'a new agent needs "every", "at" or "cron"');
        END IF;
    END IF;

    v_new := tickq.agent_with_fields(v_new, v_exists, p_fields);

    -- The triggers check the row (tickq.check_agent) and move its kind (tickq.agent_changed).
    PERFORM set_config('tickq.agent_now', p_now::text, true);
    IF v_exists THEN
        UPDATE tickq.agent AS a SET
            prompt = v_new.prompt, every = v_new.every, at_times = v_new.at_times, on_days = v_new.on_days,
            days = v_new.days, months = v_new.months, cron = v_new.cron,
            timezone = v_new.timezone, max_turns = v_new.max_turns, timeout = v_new.timeout,
            owner = v_new.owner, tools = v_new.tools, paused = v_new.paused, updated_at = p_now
        WHERE a.id = v_old.id
        RETURNING a.* INTO v_new;
    ELSE
        INSERT INTO tickq.agent AS a (
            name, prompt, every, at_times, on_days, days, months, cron, timezone, max_turns, timeout, owner, tools,
            paused, created_at, updated_at
        ) VALUES (
            v_new.name, v_new.prompt, v_new.every, v_new.at_times, v_new.on_days, v_new.days, v_new.months, v_new.cron,
            v_new.timezone,
            v_new.max_turns, v_new.timeout, v_new.owner, v_new.tools, v_new.paused, p_now, p_now
        )
        RETURNING a.* INTO v_new;
    END IF;
    PERFORM set_config('tickq.agent_now', '', true);
    RETURN v_new;
END
$$;


--
-- Name: FUNCTION save_agent(p_name text, p_fields jsonb, p_create boolean, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.save_agent(p_name text, p_fields jsonb, p_create boolean, p_now timestamp with time zone) IS 'Creates (p_create true), edits (false) or upserts (null) an agent from JSON fields: prompt, every (seconds), at ["HH:MM"] with on [weekdays, "1st mon", "last fri"], days and months, or cron (five fields), with timezone; max_turns, timeout (seconds), owner, tools, paused. Its job_kind "agent.<name>" follows. Raises TQ040 invalid value (naming field and value), TQ041 unknown agent, TQ042 name taken, TQ043 unknown tool.';


--
-- Name: save_settings(tickq.settings, tickq.settings, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.save_settings(p_old tickq.settings, p_new tickq.settings, p_now timestamp with time zone DEFAULT now()) RETURNS void
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


--
-- Name: FUNCTION save_settings(p_old tickq.settings, p_new tickq.settings, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.save_settings(p_old tickq.settings, p_new tickq.settings, p_now timestamp with time zone) IS 'Writes the registry''s settings (when they changed) with the lease they and the kinds need: the longest timeout of a live kind plus lease_margin.';


--
-- Name: schedule_slots(text, jsonb, text, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.schedule_slots(p_name text, p_entry jsonb, p_default_timezone text, p_count integer, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(at timestamp with time zone, local_at timestamp without time zone, timezone text, schedule text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_kind tickq.job_kind;
    v_at timestamptz := p_now;
    v_message text;
    v_key text;
BEGIN
    IF p_count IS NULL OR NOT p_count BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'a count of slots must be from 1 to 10000, got %', coalesce(p_count::text, 'none')
            USING ERRCODE = '22023';
    END IF;
    -- A kind's entry names the kind in a refusal; a schedule typed alone (p_name NULL) only its key.
    BEGIN
        v_kind := tickq.parse_schedule(coalesce(p_name, 'schedule'), p_entry, p_default_timezone);
    EXCEPTION WHEN SQLSTATE 'TQ002' THEN
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
        IF p_name IS NOT NULL THEN
            RAISE;
        END IF;
        RAISE EXCEPTION '%: %', v_key, tickq.registry_problem(v_message, 'schedule', v_key) USING ERRCODE = '22023';
    END;
    schedule := tickq.describe_schedule(v_kind.every, v_kind.every_offset, v_kind.at_times, v_kind.on_days,
        v_kind.days, v_kind.months, v_kind.cron, v_kind.timezone, p_now);
    timezone := v_kind.timezone;
    FOR v_n IN 1..p_count LOOP
        v_at := tickq.next_slot(v_kind.every, v_kind.every_offset, v_kind.at_times, v_kind.on_days, v_kind.days,
            v_kind.months, v_kind.cron, v_kind.timezone, v_at);
        EXIT WHEN v_at IS NULL;
        at := v_at;
        local_at := v_at AT TIME ZONE v_kind.timezone;
        RETURN NEXT;
    END LOOP;
END
$$;


--
-- Name: FUNCTION schedule_slots(p_name text, p_entry jsonb, p_default_timezone text, p_count integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.schedule_slots(p_name text, p_entry jsonb, p_default_timezone text, p_count integer, p_now timestamp with time zone) IS 'The next p_count slots after p_now of one schedule given as a registry entry (every, at with its day filters, or cron; a kind''s, or a cron string typed alone when p_name is NULL), each in UTC and in its zone, with the schedule in words: tickq next and tickq schedule. Refuses a bad schedule like the registry (TQ002 naming kind and key; 22023 naming the key when p_name is NULL).';


--
-- Name: schedule_warnings(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.schedule_warnings(p_registry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, key text, warning text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    WITH lateness AS MATERIALIZED (SELECT * FROM tickq.tick_lateness(p_registry, p_now)),
    on_time AS MATERIALIZED (
        SELECT tickq.on_time_tick(coalesce((p_registry -> 'settings' ->> 'tick')::numeric, 300)::integer,
            ARRAY(SELECT l.grain FROM lateness AS l)) AS tick
    )
    -- Vixie cron's surprise: a day of the month and a weekday both restricted take a day that
    -- matches either, not both ("0 0 13 * 5" runs on every 13th and every Friday).
    SELECT k.name, 'cron', format('%s restricts both the day of the month and the weekday: cron '
        'runs it on a day that matches either (the OR rule), not only on days that match both; '
        'for both, write "at" with "days" and "on"', k.entry -> 'cron')
    FROM jsonb_each(coalesce(p_registry -> 'kinds', '{}'::jsonb)) AS k (name, entry)
    WHERE jsonb_typeof(k.entry -> 'cron') = 'string' AND tickq.cron_problem(k.entry ->> 'cron') IS NULL
        AND (tickq.cron_calendar(k.entry ->> 'cron', 'UTC')).either
    UNION ALL
    -- A slot between two ticks runs at the next tick (tickq.tick_lateness).
    SELECT l.kind, l.key, format('its slots fall between ticks: %s (%s) runs at %s, %s late with '
        'tick = "%s"; tick = "%s" keeps every slot on time', to_char(l.slot_time, t.shape), l.timezone,
        to_char(l.runs_time, t.shape), tickq.format_duration(l.late_by), tickq.format_duration(l.tick),
        tickq.format_duration(o.tick))
    FROM lateness AS l
    CROSS JOIN on_time AS o
    CROSS JOIN LATERAL (SELECT CASE WHEN extract(SECOND FROM l.slot_time) = 0 THEN 'HH24:MI'
        ELSE 'HH24:MI:SS' END AS shape) AS t
    WHERE l.late_by > '0'::interval
    ORDER BY 1, 2
$$;


--
-- Name: FUNCTION schedule_warnings(p_registry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.schedule_warnings(p_registry jsonb, p_now timestamp with time zone) IS 'What tickq check warns about in a registry (JSON) without refusing it: each cron string whose day of the month and weekday are both restricted (Vixie''s OR rule), and each kind whose slots fall between ticks, with how late the latest runs and the tick that keeps every slot on time (tickq.tick_lateness, tickq.on_time_tick). Changes nothing.';


--
-- Name: settings_drift(tickq.settings, tickq.settings); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.settings_drift(p_old tickq.settings, p_new tickq.settings) RETURNS jsonb
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


--
-- Name: FUNCTION settings_drift(p_old tickq.settings, p_new tickq.settings); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.settings_drift(p_old tickq.settings, p_new tickq.settings) IS 'The drift between the stored settings and the registry''s (none before the first sync), each item {field "settings.<key>", stored_value, registry_value, registry_edit}.';


--
-- Name: simulate(numeric, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulate(p_hours numeric, p_durations jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, runs integer, longest_wait interval, starved boolean, worst_due_at timestamp with time zone, behind text[])
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_hours IS NULL OR p_hours <= 0 THEN
        RAISE EXCEPTION 'simulate: the window must be a positive number of hours, got %',
            coalesce(p_hours::text, 'nothing')
            USING ERRCODE = 'TQ080', DETAIL = 'p_hours is the length of the simulated window.',
            HINT = 'Give a positive number of hours, or leave it out for a window that covers every '
                'schedule (tickq.simulation_windows).';
    END IF;
    PERFORM tickq.simulate_events(p_now + p_hours * interval '1 hour', p_durations, p_now);
    RETURN QUERY SELECT * FROM tickq.simulation_report(p_now + p_hours * interval '1 hour', p_now);
END
$$;


--
-- Name: FUNCTION simulate(p_hours numeric, p_durations jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulate(p_hours numeric, p_durations jsonb, p_now timestamp with time zone) IS 'Runs the queue for p_hours from p_now with a moved clock (tickq.simulate_events) in one transaction and reports per kind (tickq.simulation_report): runs, longest wait, starved, when the worst wait began and what a starved kind waited behind. TQ080 for a window that is not positive. Unarmed irreversible kinds are armed first by a manual run, keeping their due time. Use it in a scratch database, in a transaction that is rolled back; for windows of days, call simulate_events part by part with commits between.';


--
-- Name: simulate_events(timestamp with time zone, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulate_events(p_until timestamp with time zone, p_durations jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Meant for a scratch database: it claims and reports as dispatcher 'simulator' on whatever
    -- queue it is given. It goes on where an earlier call stopped (the simulator's runs still
    -- running are picked up), so a caller may commit between parts of a long window: inside one
    -- transaction every claim and report adds a version of the same few kind and slot rows that
    -- nothing can prune, and each step gets slower than the last.
    PERFORM tickq.simulation_session();
    PERFORM tickq.simulation_arm(p_now);
    RETURN tickq.simulation_events(p_until, tickq.simulation_holds(p_durations), p_now);
END
$$;


--
-- Name: FUNCTION simulate_events(p_until timestamp with time zone, p_durations jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulate_events(p_until timestamp with time zone, p_durations jsonb, p_now timestamp with time zone) IS 'The simulator''s clock: from p_now through p_until, a claim at every tick (p_now, p_now + tick, ...) and whenever a run finishes, through the real claim_jobs and report_run as dispatcher "simulator"; each run holds its slot for p_durations->kind seconds, else its timeout. Unarmed irreversible kinds are armed first (tickq.simulation_arm); ticks at which a claim could find nothing cost nothing (tickq.simulation_events). Goes on from the simulator''s runs still running. Returns the events it handled. Scratch databases only.';


--
-- Name: simulate_window(timestamp with time zone, jsonb, boolean, boolean, timestamp with time zone); Type: PROCEDURE; Schema: tickq; Owner: -
--

CREATE PROCEDURE tickq.simulate_window(IN p_until timestamp with time zone, IN p_durations jsonb DEFAULT NULL::jsonb, IN p_steady boolean DEFAULT true, IN p_stop_stale boolean DEFAULT false, IN p_now timestamp with time zone DEFAULT now())
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_part record;
    v_len interval;
    v_grid timestamptz;
    v_count integer;
    v_b record;
    v_mark record;
    v_copy record;
    v_states jsonb[] := '{}'::jsonb[];
    v_fps text[] := '{}'::text[];
    v_ids jsonb[] := '{}'::jsonb[];
    v_firsts bigint[] := '{}'::bigint[];
    v_rest text := md5(jsonb_build_object('kinds', '[]'::jsonb, 'slots', '[]'::jsonb, 'pools', '[]'::jsonb)::text);
    v_at timestamptz;
    v_idle timestamptz;
    v_n integer;
    v_holds jsonb;
BEGIN
    -- One CALL for a whole window: the parts of tickq.simulation_parts, each committed before the
    -- next starts (so the versions of the kind and slot rows it left can be pruned), with no
    -- round trip to the caller between them. At the start of each part but the first (where
    -- irreversible kinds are armed) the state is kept (tickq.simulation_mark); where it is the
    -- state of a day or a week before, and the stretch from then repeats, that stretch's runs
    -- are copied instead of simulated (tickq.simulation_best_copy), never into the last part.
    -- A part with no run going on and nothing due before its end costs nothing. With
    -- p_stop_stale the clock stops at the first part that starts after a wait of stale_after.
    IF p_steady THEN
        PERFORM tickq.simulation_start(p_now);
    END IF;
    PERFORM tickq.simulation_session();
    PERFORM tickq.simulation_arm(p_now);
    v_holds := tickq.simulation_holds(p_durations);
    SELECT min(p.part_from) FILTER (WHERE p.part_from > p_now), count(*) INTO v_grid, v_count
    FROM tickq.simulation_parts(p_until, p_now) AS p;
    SELECT greatest(s.tick, s.tick * floor(900 / extract(EPOCH FROM s.tick))) INTO STRICT v_len FROM tickq.settings AS s;
    v_b := tickq.simulation_window_breaks(p_until, v_len, p_now);
    FOR v_part IN SELECT p.part_from, p.part_until, row_number() OVER (ORDER BY p.part_from)::integer AS n
        FROM tickq.simulation_parts(p_until, p_now) AS p
    LOOP
        CONTINUE WHEN v_part.part_from < v_at;
        v_n := v_part.n;
        IF v_n > 1 AND v_part.part_until < v_idle THEN  -- nothing happens: at rest if it was
            v_fps[v_n] := CASE WHEN v_fps[v_n - 1] = v_rest THEN v_rest END;
            v_states[v_n] := CASE WHEN v_fps[v_n] = v_rest THEN v_states[v_n - 1] END;
            v_ids[v_n] := v_ids[v_n - 1];
            v_firsts[v_n] := v_firsts[v_n - 1];
            CONTINUE;
        ELSIF v_n > 1 THEN
            v_mark := tickq.simulation_mark(v_part.part_from);
            IF v_fps[v_n] <> v_mark.digest THEN  -- a copy must leave the state the clock would
                RAISE EXCEPTION 'simulate_window: the state at % is not the one copied there', v_part.part_from
                    USING ERRCODE = 'internal_error';
            END IF;
            EXIT WHEN p_stop_stale AND tickq.simulation_stale(v_firsts[v_n - 1], v_part.part_from);
            v_states[v_n] := v_mark.state;
            v_fps[v_n] := v_mark.digest;
            v_ids[v_n] := v_mark.ids;
            v_firsts[v_n] := v_mark.first_id;
            v_states[v_n - 8 * 86400 / extract(EPOCH FROM v_len)::integer] := NULL;  -- a week back is enough
            v_idle := CASE WHEN v_mark.idle_until > v_part.part_until THEN v_mark.idle_until END;
            CONTINUE WHEN v_idle IS NOT NULL;
            v_copy := tickq.simulation_best_copy(v_states, v_fps, v_n, v_count, v_grid, v_len, v_b.shifts,
                v_b.rows_shifts, v_b.zones, v_b.firsts, v_b.lasts, v_b.backs);
            IF v_copy.c IS NOT NULL THEN
                PERFORM tickq.simulation_copy(v_grid + v_len * (v_n - v_copy.steps - 2), v_grid + v_len * (v_copy.c - 2),
                    v_len * v_copy.steps, v_states[v_copy.c], v_ids[v_n - v_copy.steps], v_ids[v_copy.c], v_ids[v_n],
                    v_firsts[v_n - v_copy.steps], v_firsts[v_copy.c], v_firsts[v_n]);
                SELECT * INTO v_states, v_fps, v_ids, v_firsts
                FROM tickq.simulation_copy_parts(v_states, v_fps, v_ids, v_firsts, v_n, v_copy.c, v_copy.steps);
                v_at := v_grid + v_len * (v_copy.c + v_copy.steps - 2);
                COMMIT;
                CONTINUE;
            END IF;
        END IF;
        PERFORM tickq.simulation_events(v_part.part_until, v_holds, v_part.part_from);
        COMMIT;
    END LOOP;
END
$$;


--
-- Name: PROCEDURE simulate_window(IN p_until timestamp with time zone, IN p_durations jsonb, IN p_steady boolean, IN p_stop_stale boolean, IN p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON PROCEDURE tickq.simulate_window(IN p_until timestamp with time zone, IN p_durations jsonb, IN p_steady boolean, IN p_stop_stale boolean, IN p_now timestamp with time zone) IS 'The simulator''s clock through a whole window in one CALL: with p_steady, tickq.simulation_start at p_now first; then tickq.simulation_events for each part of tickq.simulation_parts(p_until, p_now), committing after each, but where a stretch repeats one of a day or a week before from the same state, whose runs are copied (tickq.simulation_best_copy, tickq.simulation_copy), and where nothing runs or falls due. With p_stop_stale it stops at the first part that starts after a wait of stale_after (tickq.simulation_stale). Must be called outside a transaction block (it commits). Scratch databases only.';


--
-- Name: simulated_hold(tickq.job_kind, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulated_hold(p_kind tickq.job_kind, p_durations jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE
    AS $$
    -- Each run holds its slot for its given duration, else its timeout (the worst case).
    SELECT coalesce(make_interval(secs => (p_durations ->> p_kind.name)::double precision), p_kind.timeout)
$$;


--
-- Name: FUNCTION simulated_hold(p_kind tickq.job_kind, p_durations jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulated_hold(p_kind tickq.job_kind, p_durations jsonb) IS 'How long a simulated run of the kind holds its slot: p_durations->kind seconds, else its timeout.';


--
-- Name: simulation_arm(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_arm(p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_claim record;
    v_armed integer := 0;
BEGIN
    -- The question is whether the schedule fits once everything runs: each unarmed irreversible
    -- kind is armed first by a manual run through the real path, keeping its due time. The run
    -- runs the kind's command as the sync wrote it (command_since: the sync's instant, later than
    -- a window that opens before it, which the arming would otherwise not count).
    FOR v_claim IN
        SELECT k.name AS kind, k.due_at FROM tickq.job_kind AS k
        WHERE k.irreversible AND k.armed_at IS NULL AND k.enabled AND k.run_id IS NULL
        ORDER BY k.name
    LOOP
        UPDATE tickq.job_kind AS k SET command_since = least(k.command_since, p_now) WHERE k.name = v_claim.kind;
        PERFORM tickq.report_run(c.run_id, 'simulator: first run', 'ok', 0, NULL, '0'::interval, p_now)
        FROM tickq.claim_manual(v_claim.kind, 'simulator: first run', 'simulator', p_now) AS c;
        UPDATE tickq.job_kind AS k SET due_at = v_claim.due_at WHERE k.name = v_claim.kind;
        v_armed := v_armed + 1;
    END LOOP;
    RETURN v_armed;
END
$$;


--
-- Name: FUNCTION simulation_arm(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_arm(p_now timestamp with time zone) IS 'For the simulator, in a scratch database: arms each enabled unarmed irreversible kind by a manual run at p_now through the real claim and report (as a person''s first run would), keeping its due time. Returns how many it armed.';


--
-- Name: simulation_best_copy(jsonb[], text[], integer, integer, timestamp with time zone, interval, interval[], interval[], text[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_best_copy(OUT c integer, OUT steps integer, p_states jsonb[], p_digests text[], p_n integer, p_count integer, p_grid timestamp with time zone, p_len interval, p_shifts interval[], p_rows_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone DEFAULT now()) RETURNS record
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_shift interval;
    v_steps integer;
    v_c integer;
BEGIN
    -- Of the shifts (a day, a week), the copy to part n that reaches furthest: its last part c
    -- of the stretch copied and the shift in parts; NULLs when none (tickq.simulation_copy_until,
    -- never into the last part, p_count).
    FOREACH v_shift IN ARRAY p_shifts LOOP
        v_steps := (extract(EPOCH FROM v_shift) / extract(EPOCH FROM p_len))::integer;
        v_c := tickq.simulation_copy_until(p_states, p_digests, p_n, p_n - v_steps, least(p_n, p_count - v_steps),
            p_grid, p_len, v_shift, p_rows_shifts, p_zones, p_firsts, p_lasts, p_backs);
        IF v_c + v_steps > coalesce(c + steps, p_n) THEN
            c := v_c;
            steps := v_steps;
        END IF;
    END LOOP;
END
$$;


--
-- Name: FUNCTION simulation_best_copy(OUT c integer, OUT steps integer, p_states jsonb[], p_digests text[], p_n integer, p_count integer, p_grid timestamp with time zone, p_len interval, p_shifts interval[], p_rows_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_best_copy(OUT c integer, OUT steps integer, p_states jsonb[], p_digests text[], p_n integer, p_count integer, p_grid timestamp with time zone, p_len interval, p_shifts interval[], p_rows_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) IS 'For tickq.simulate_window standing at part p_n: of the shifts p_shifts, the copy that reaches furthest (tickq.simulation_copy_until): the last part c of the stretch it copies and the shift in parts (steps); NULLs when none. p_count parts in all; p_rows_shifts .. p_backs the day rules'' breaks (tickq.simulation_window_breaks).';


--
-- Name: simulation_breaks(timestamp with time zone, timestamp with time zone, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_breaks(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, zone text, first_at timestamp with time zone, last_at timestamp with time zone, back_to timestamp with time zone)
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
DECLARE
    v_days integer := (extract(EPOCH FROM p_shift) / 86400)::integer;
    v_kind tickq.job_kind;
    v_calendar tickq.calendar;
    v_first date;
    v_last date;
    v_takes boolean[];
    v_day date;
    v_edge timestamptz;
BEGIN
    -- For each calendar kind with day rules, each local day d from about p_from to about p_until
    -- whose rules differ from those of d + p_shift (one has slots, the other none): its slots
    -- that differ (first_at, last_at: d's own, or d + p_shift's less p_shift) and the last slot
    -- before d (back_to: the slots before d are the same in both stretches, zone permitting).
    -- A stretch from p_from repeats only up to back_to when that is at or after p_from, else up
    -- to first_at (tickq.simulation_repeats_until). Each kind also gets a last row at the end of
    -- the days read, whose back_to is its last slot before it: nothing later is known. Exact
    -- only where the kind's zone keeps its offset: the caller walks a kind whose does not.
    FOR v_kind IN SELECT * FROM tickq.job_kind AS k WHERE k.enabled AND tickq.simulation_day_rules(k) ORDER BY k.name LOOP
        v_calendar := tickq.calendar_of(v_kind.at_times, v_kind.on_days, v_kind.days, v_kind.months, v_kind.cron,
            v_kind.timezone);
        v_first := (p_from AT TIME ZONE v_kind.timezone)::date - 2;
        v_last := (p_until AT TIME ZONE v_kind.timezone)::date + 8;
        v_takes := ARRAY(SELECT tickq.calendar_day(v_calendar, d::date)
            FROM generate_series(v_first, v_last + v_days, interval '1 day') AS d ORDER BY d);
        FOR i IN 1..(v_last - v_first + 1) LOOP
            CONTINUE WHEN v_takes[i] = v_takes[i + v_days];
            v_day := v_first + i - 1;
            kind := v_kind.name;
            zone := v_kind.timezone;
            SELECT min(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END,
                max(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END
            INTO first_at, last_at
            FROM tickq.calendar_day_slots(v_calendar, CASE WHEN v_takes[i] THEN v_day ELSE v_day + v_days END) AS s (at);
            back_to := tickq.calendar_last(v_calendar, (v_first::timestamp AT TIME ZONE v_kind.timezone),
                (v_day::timestamp AT TIME ZONE v_kind.timezone) - interval '1 microsecond');
            RETURN NEXT;
        END LOOP;
        v_edge := (v_last + 1)::timestamp AT TIME ZONE v_kind.timezone;
        kind := v_kind.name;
        zone := v_kind.timezone;
        first_at := v_edge;
        last_at := v_edge;
        back_to := tickq.calendar_last(v_calendar, (v_first::timestamp AT TIME ZONE v_kind.timezone),
            v_edge - interval '1 microsecond');
        RETURN NEXT;
    END LOOP;
END
$$;


--
-- Name: FUNCTION simulation_breaks(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_breaks(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone) IS 'For the simulator, a shift of whole days: per calendar kind with day rules, each local day from about p_from to about p_until on which they take a day and not the day p_shift later (or the reverse), with the slots that differ (first_at, last_at) and the kind''s last slot before that day (back_to); and a last row per kind at the end of the days read. Exact where the kind''s zone keeps one offset.';


--
-- Name: simulation_copy(timestamp with time zone, timestamp with time zone, interval, jsonb, jsonb, jsonb, jsonb, bigint, bigint, bigint, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_copy(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_state jsonb, p_was jsonb, p_ended jsonb, p_going jsonb, p_first bigint, p_end bigint, p_next bigint, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE sql
    AS $$
    -- The stretch from p_from until p_until (its runs ids p_first until p_end; p_was and p_ended
    -- the runs going on at its ends, by kind) copied p_shift later, where the clock stands now
    -- (p_from + p_shift; p_going the runs going on, p_next the next run id), and the queue put
    -- in the state p_state (relative to p_until) p_shift later.
    SELECT tickq.simulation_copy_runs(p_until, p_shift, p_first, p_end, p_next - p_first, p_was, p_going);
    SELECT tickq.simulation_restore(p_until + p_shift, p_state,
        tickq.simulation_remap(p_ended, p_first, p_next - p_first, p_going))
$$;


--
-- Name: FUNCTION simulation_copy(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_state jsonb, p_was jsonb, p_ended jsonb, p_going jsonb, p_first bigint, p_end bigint, p_next bigint, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_copy(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_state jsonb, p_was jsonb, p_ended jsonb, p_going jsonb, p_first bigint, p_end bigint, p_next bigint, p_now timestamp with time zone) IS 'For tickq.simulate_window: copies the stretch from p_from until p_until p_shift later (tickq.simulation_copy_runs) and restores the state p_state, relative to p_until, p_shift later (tickq.simulation_restore), the runs going on then remapped to their copies (tickq.simulation_remap).';


--
-- Name: simulation_copy_parts(jsonb[], text[], jsonb[], bigint[], integer, integer, integer); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_copy_parts(INOUT p_states jsonb[], INOUT p_digests text[], INOUT p_ids jsonb[], INOUT p_firsts bigint[], p_n integer, p_c integer, p_steps integer) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    v_j integer := p_n - p_steps;
    v_offset bigint := p_firsts[p_n] - p_firsts[p_n - p_steps];
BEGIN
    -- What is known of the parts of a copy of parts (p_n - p_steps, p_c] made p_steps parts on:
    -- their states and digests, their runs by kind (remapped to the copies) and first ids.
    FOR k IN v_j + 1..p_c LOOP
        p_digests[k + p_steps] := p_digests[k];
        p_states[k + p_steps] := p_states[k];
        p_ids[k + p_steps] := tickq.simulation_remap(p_ids[k], p_firsts[v_j], v_offset, p_ids[p_n]);
        p_firsts[k + p_steps] := p_firsts[k] + v_offset;
    END LOOP;
END
$$;


--
-- Name: FUNCTION simulation_copy_parts(INOUT p_states jsonb[], INOUT p_digests text[], INOUT p_ids jsonb[], INOUT p_firsts bigint[], p_n integer, p_c integer, p_steps integer); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_copy_parts(INOUT p_states jsonb[], INOUT p_digests text[], INOUT p_ids jsonb[], INOUT p_firsts bigint[], p_n integer, p_c integer, p_steps integer) IS 'For tickq.simulate_window: the states, digests, runs by kind and first ids it keeps by part, with those of the parts a copy made (parts p_n - p_steps + 1 through p_c, p_steps parts on, their runs remapped to the copies: tickq.simulation_remap).';


--
-- Name: simulation_copy_runs(timestamp with time zone, interval, bigint, bigint, bigint, jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_copy_runs(p_until timestamp with time zone, p_shift interval, p_first bigint, p_end bigint, p_offset bigint, p_was jsonb, p_going jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- The runs going on now (p_going, by kind) went on p_shift earlier too (p_was):
    -- those that ended before p_until end the same way, p_shift later.
    UPDATE tickq.job_run AS r SET
        finished_at = o.finished_at + p_shift, outcome = o.outcome, exit_code = o.exit_code,
        output_tail = o.output_tail, duration = o.duration, late_report_at = o.late_report_at + p_shift
    FROM jsonb_each_text(p_was) AS w (kind, id)
    INNER JOIN tickq.job_run AS o ON o.id = w.id::bigint
    WHERE r.id = (p_going ->> w.kind)::bigint AND o.finished_at < p_until;
    -- The runs claimed in the stretch copied, until p_until (ids p_first until p_end: a window's runs are
    -- numbered in claim order), p_shift later and p_offset ids on (so the ids keep that order);
    -- those still going on at p_until as they were then.
    INSERT INTO tickq.job_run (id, kind, attempt, run_trigger, slots, dispatcher, claimed_at, started_at, finished_at,
        outcome, exit_code, output_tail, duration, due_at, slot, late_report_at, run_by, slot_at, first_slot_at,
        slots_covered, weight, pools)
    OVERRIDING SYSTEM VALUE
    SELECT r.id + p_offset, r.kind, r.attempt, r.run_trigger, r.slots, r.dispatcher, r.claimed_at + p_shift,
        r.started_at + p_shift, CASE WHEN r.finished_at < p_until THEN r.finished_at + p_shift END,
        CASE WHEN r.finished_at < p_until THEN r.outcome ELSE 'running' END,
        CASE WHEN r.finished_at < p_until THEN r.exit_code END,
        CASE WHEN r.finished_at < p_until THEN r.output_tail END,
        CASE WHEN r.finished_at < p_until THEN r.duration END, r.due_at + p_shift, r.slot,
        CASE WHEN r.finished_at < p_until THEN r.late_report_at + p_shift END, r.run_by, r.slot_at + p_shift,
        r.first_slot_at + p_shift, r.slots_covered, r.weight, r.pools
    FROM tickq.job_run AS r
    WHERE r.id >= p_first AND r.id < p_end
    ORDER BY r.id;
    PERFORM setval(pg_get_serial_sequence('tickq.job_run', 'id'), p_end - 1 + p_offset)
    WHERE p_end > p_first;
END
$$;


--
-- Name: FUNCTION simulation_copy_runs(p_until timestamp with time zone, p_shift interval, p_first bigint, p_end bigint, p_offset bigint, p_was jsonb, p_going jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_copy_runs(p_until timestamp with time zone, p_shift interval, p_first bigint, p_end bigint, p_offset bigint, p_was jsonb, p_going jsonb, p_now timestamp with time zone) IS 'For the simulator''s copies: the runs claimed in the stretch copied, until p_until (ids p_first until p_end), inserted p_shift later with ids p_offset on, those still going on at p_until as going on; and the runs going on now (p_going, by kind) ended as those going on p_shift earlier (p_was) ended before p_until.';


--
-- Name: simulation_copy_until(jsonb[], text[], integer, integer, integer, timestamp with time zone, interval, interval, interval[], text[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_copy_until(p_states jsonb[], p_fps text[], p_i integer, p_j integer, p_top integer, p_grid timestamp with time zone, p_len interval, p_shift interval, p_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_from timestamptz := p_grid + p_len * (p_j - 2);
    v_horizon timestamptz;
    v_c integer;
BEGIN
    -- Parts are numbered from the window's first (1, at its start; 2, on the first whole part of
    -- the clock; each p_len later). The clock stands at part p_i, in the state part p_j stood in
    -- (p_shift earlier): the latest part c in (p_j, p_top] whose state is known and such that the
    -- stretch from part p_j to part c repeats p_shift later for every kind; NULL when none. A
    -- kind waiting past its slot at part p_j counts its slots from its due time.
    IF p_j < 2 OR p_top <= p_j OR p_fps[p_j] IS DISTINCT FROM p_fps[p_i] THEN
        RETURN NULL;
    END IF;
    v_horizon := tickq.simulation_repeats_until(
        least(v_from, v_from + make_interval(secs => (
            SELECT min((e.value ->> 1)::double precision) FROM jsonb_array_elements(p_states[p_j] -> 'kinds') AS e (value)))),
        p_grid + p_len * (p_top - 2), p_shift,
        ARRAY(SELECT z FROM unnest(p_shifts, p_zones) AS b (s, z) WHERE b.s = p_shift),
        ARRAY(SELECT f FROM unnest(p_shifts, p_firsts) AS b (s, f) WHERE b.s = p_shift),
        ARRAY(SELECT l FROM unnest(p_shifts, p_lasts) AS b (s, l) WHERE b.s = p_shift),
        ARRAY(SELECT x FROM unnest(p_shifts, p_backs) AS b (s, x) WHERE b.s = p_shift));
    SELECT max(c.n) INTO v_c
    FROM generate_series(p_j + 1, p_top) AS c (n)
    WHERE p_grid + p_len * (c.n - 2) <= v_horizon AND p_states[c.n] IS NOT NULL;
    RETURN v_c;
END
$$;


--
-- Name: FUNCTION simulation_copy_until(p_states jsonb[], p_fps text[], p_i integer, p_j integer, p_top integer, p_grid timestamp with time zone, p_len interval, p_shift interval, p_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_copy_until(p_states jsonb[], p_fps text[], p_i integer, p_j integer, p_top integer, p_grid timestamp with time zone, p_len interval, p_shift interval, p_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) IS 'For tickq.simulate_window: standing at part p_i in the state part p_j stood in (p_shift earlier; p_states and p_fps: the states known by part and their digests), the latest part c in (p_j, p_top] with a known state such that the stretch from part p_j to part c repeats p_shift later (tickq.simulation_repeats_until, p_shifts .. p_backs: tickq.simulation_breaks'' rows of every shift); NULL when none. Parts are numbered from 1, the window''s start; part 2 starts at p_grid, each p_len after the one before.';


--
-- Name: simulation_day_rules(tickq.job_kind); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_day_rules(p_kind tickq.job_kind) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$
    -- Read from the columns, without parsing a cron string: its day fields are all `*`, or it is
    -- @hourly, @daily or @midnight.
    SELECT p_kind.every IS NULL AND (p_kind.on_days IS NOT NULL OR p_kind.days IS NOT NULL
        OR p_kind.months IS NOT NULL
        OR (p_kind.cron IS NOT NULL AND NOT (p_kind.cron ~ '^\s*\S+\s+\S+\s+\*\s+\*\s+\*\s*$'
            OR lower(btrim(p_kind.cron)) IN ('@hourly', '@daily', '@midnight'))))
$_$;


--
-- Name: FUNCTION simulation_day_rules(p_kind tickq.job_kind); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_day_rules(p_kind tickq.job_kind) IS 'True when a calendar kind takes only some days (weekdays, days of the month, months; a cron string whose day fields are not all *), so its slots differ between days.';


--
-- Name: simulation_events(timestamp with time zone, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_events(p_until timestamp with time zone, p_holds jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_tick numeric;
    v_wake timestamptz := p_now;
    v_t timestamptz;
    v_due timestamptz;
    v_run_ids bigint[];
    v_finish timestamptz[];
    v_keep_ids bigint[];
    v_keep_finish timestamptz[];
    v_claim record;
    v_events integer := 0;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_tick := extract(EPOCH FROM v_settings.tick);
    -- The simulator's runs still running, found by the slot rows they hold (every run a claim
    -- opens holds one until it ends; a heavy run several, and is found by its first, r.slot),
    -- each by its primary key (OFFSET 0 keeps the lookup by key whatever the planner thinks of
    -- the history's size, read again at every part).
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}'), coalesce(array_agg(r.finish ORDER BY r.id), '{}')
    INTO v_run_ids, v_finish
    FROM tickq.slot AS sl
    CROSS JOIN LATERAL (
        SELECT r.id, r.claimed_at + (p_holds ->> r.kind)::interval AS finish
        FROM tickq.job_run AS r
        WHERE r.id = sl.run_id AND r.slot = sl.n AND r.outcome = 'running' AND r.dispatcher = 'simulator'
        OFFSET 0
    ) AS r;
    -- Events in time order: at every tick (p_now, p_now + tick, ...) the OS timer wakes a
    -- dispatcher that claims the free slots; every finished run is reported and its slot
    -- claimed again at once. The clock goes straight to the next instant anything can happen:
    -- while every slot is held, the next finish; while nothing is due, the first tick at or
    -- after the earliest due time (tickq.simulation_next_due) or a finish before it. At every
    -- tick it passes over, a claim would have found nothing, and the simulator skips those
    -- claims anyway (the outcome is the same, and cheaper), so the same claims are made.
    LOOP
        v_t := v_wake;
        FOR i IN 1..coalesce(cardinality(v_finish), 0) LOOP
            v_t := least(v_t, v_finish[i]);
        END LOOP;
        -- Runs an earlier call left that finished before p_now are reported at their own time,
        -- and the clock never claims before p_now.
        v_t := greatest(v_t, p_now);
        EXIT WHEN v_t > p_until;
        v_events := v_events + 1;

        v_keep_ids := '{}'::bigint[];
        v_keep_finish := '{}'::timestamptz[];
        FOR i IN 1..coalesce(cardinality(v_run_ids), 0) LOOP
            IF v_finish[i] <= v_t THEN
                PERFORM tickq.report_run(v_run_ids[i], 'simulator', 'ok', 0, NULL, NULL, v_finish[i]);
            ELSE
                v_keep_ids := v_keep_ids || v_run_ids[i];
                v_keep_finish := v_keep_finish || v_finish[i];
            END IF;
        END LOOP;
        v_run_ids := v_keep_ids;
        v_finish := v_keep_finish;
        -- The next tick after this instant, unless nothing can be claimed before a later one.
        v_wake := p_now + v_settings.tick * (floor(extract(EPOCH FROM v_t - p_now) / v_tick) + 1);
        IF cardinality(v_run_ids) >= v_settings.slots THEN
            v_wake := 'infinity';
            CONTINUE;
        ELSIF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= v_t) THEN
            -- nothing due: the clock goes to the tick where something is (asked only now, as a
            -- queue with something due at most ticks would pay for it at every one)
            v_due := tickq.simulation_next_due();
            v_wake := coalesce(p_now + v_settings.tick * ceil(extract(EPOCH FROM v_due - p_now) / v_tick), 'infinity');
            CONTINUE;
        END IF;
        FOR v_claim IN
            SELECT c.run_id, (p_holds ->> c.kind)::interval AS hold
            -- As a dispatcher does: claim no more than the slots its runs leave free.
            FROM tickq.claim_jobs(v_settings.slots - cardinality(v_run_ids), 'simulator', v_t) AS c
        LOOP
            v_run_ids := v_run_ids || v_claim.run_id;
            v_finish := v_finish || (v_t + v_claim.hold);
        END LOOP;
    END LOOP;
    RETURN v_events;
END
$$;


--
-- Name: FUNCTION simulation_events(p_until timestamp with time zone, p_holds jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_events(p_until timestamp with time zone, p_holds jsonb, p_now timestamp with time zone) IS 'The simulator''s clock from p_now through p_until (tickq.simulate_events without its set-up): each run holds its slot for p_holds->kind (tickq.simulation_holds); ticks at which a claim could find nothing (every slot held, nothing due) cost nothing. Returns the events it handled. Scratch databases only.';


--
-- Name: simulation_fold(jsonb, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_fold(p_worst jsonb, p_more jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- Per kind, the side where it waited longest decides the wait, when it began, what it
    -- waited behind and the window (on a tie p_worst, the earlier windows; never due counts as
    -- shorter than any wait); its runs are those of both sides, and it starved if either did.
    WITH seen AS (SELECT * FROM tickq.simulation_worst(p_worst)),
    more AS (SELECT * FROM tickq.simulation_worst(p_more)),
    paired AS (
        SELECT s, t, s.kind IS NULL OR (t.kind IS NOT NULL
            AND coalesce(t.longest_wait, interval '-1 day') > coalesce(s.longest_wait, interval '-1 day'))
            AS this_is_worse
        FROM seen AS s
        FULL JOIN more AS t ON s.kind = t.kind
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'kind', coalesce((p.s).kind, (p.t).kind),
        'lane', coalesce((p.s).lane, (p.t).lane),
        'runs', coalesce((p.s).runs, 0) + coalesce((p.t).runs, 0),
        'longest_wait', CASE WHEN p.this_is_worse THEN (p.t).longest_wait ELSE (p.s).longest_wait END,
        'starved', coalesce((p.s).starved, false) OR coalesce((p.t).starved, false),
        'worst_due_at', CASE WHEN p.this_is_worse THEN (p.t).worst_due_at ELSE (p.s).worst_due_at END,
        'behind', CASE WHEN p.this_is_worse THEN (p.t).behind ELSE (p.s).behind END,
        'in_window', CASE WHEN p.this_is_worse THEN (p.t).in_window ELSE (p.s).in_window END
    )), '[]'::jsonb)
    FROM paired AS p
$$;


--
-- Name: FUNCTION simulation_fold(p_worst jsonb, p_more jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_fold(p_worst jsonb, p_more jsonb) IS 'Folds p_more, what later windows gave (as tickq.simulation_merge returns it), into p_worst, what earlier windows gave (NULL: none): per kind the longest wait of either side (a tie: p_worst''s), with the runs of both and starved if either starved it. Windows simulated apart (each in a scratch database of its own) folded in their order give what merging them one after the other in one database gives.';


--
-- Name: simulation_holds(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_holds(p_durations jsonb DEFAULT NULL::jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(jsonb_object_agg(k.name, tickq.simulated_hold(k, p_durations)), '{}') FROM tickq.job_kind AS k
$$;


--
-- Name: FUNCTION simulation_holds(p_durations jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_holds(p_durations jsonb) IS 'For the simulator: how long each kind''s runs hold their slot (tickq.simulated_hold), by kind name, read once rather than joined to every claim.';


--
-- Name: simulation_mark(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_mark(OUT state jsonb, OUT digest text, OUT ids jsonb, OUT first_id bigint, OUT idle_until timestamp with time zone, p_at timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    -- The state at p_at (tickq.simulation_state) with its digest, the runs going on by kind, the
    -- id the next run will get (a window's runs are numbered in claim order), and, when no run
    -- holds a slot, the due time before which nothing happens ('infinity': nothing is ever due).
    SELECT s.state, md5(s.state::text), tickq.simulation_running(),
        coalesce((SELECT max(r.id) FROM tickq.job_run AS r), 0) + 1,
        CASE WHEN NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL)
            THEN coalesce(tickq.simulation_next_due(), 'infinity') END
    FROM (SELECT tickq.simulation_state(p_at) AS state OFFSET 0) AS s  -- read once, not once per use
$$;


--
-- Name: FUNCTION simulation_mark(OUT state jsonb, OUT digest text, OUT ids jsonb, OUT first_id bigint, OUT idle_until timestamp with time zone, p_at timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_mark(OUT state jsonb, OUT digest text, OUT ids jsonb, OUT first_id bigint, OUT idle_until timestamp with time zone, p_at timestamp with time zone, p_now timestamp with time zone) IS 'For tickq.simulate_window, at the start of a part: the state at p_at (tickq.simulation_state) and its md5 digest, the runs going on by kind (tickq.simulation_running), the id the next run will get, and when no run holds a slot the next due time (tickq.simulation_next_due; ''infinity'' when none).';


--
-- Name: simulation_merge(jsonb, integer, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_merge(p_worst jsonb, p_window integer, p_until timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- This window's report, in simulation_worst's shape, folded into the earlier windows'.
    SELECT tickq.simulation_fold(p_worst, (
        SELECT jsonb_agg(jsonb_build_object(
            'kind', r.kind, 'lane', r.priority::text, 'runs', r.runs, 'longest_wait', r.longest_wait,
            'starved', r.starved, 'worst_due_at', r.worst_due_at, 'behind', r.behind, 'in_window', p_window))
        FROM tickq.simulation_report(p_until, p_now) AS r
    ))
$$;


--
-- Name: FUNCTION simulation_merge(p_worst jsonb, p_window integer, p_until timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_merge(p_worst jsonb, p_window integer, p_until timestamp with time zone, p_now timestamp with time zone) IS 'Folds the simulator''s report of window p_window (tickq.simulation_report(p_until, p_now)) into p_worst, what earlier windows gave (NULL before the first), by tickq.simulation_fold: per kind the longest wait of any window, with the runs of all and starved if any starved it. Read it with tickq.simulation_worst.';


--
-- Name: simulation_next_due(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_next_due() RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    -- The due time a claim could first find something at: the earliest of the enabled kinds no
    -- run holds, read as four short ranges of job_kind_claimable (one per lane), not a scan.
    SELECT least(
        (SELECT k.due_at FROM tickq.job_kind AS k WHERE k.enabled AND k.priority = 'urgent' AND k.run_id IS NULL
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k WHERE k.enabled AND k.priority = 'high' AND k.run_id IS NULL
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k WHERE k.enabled AND k.priority = 'normal' AND k.run_id IS NULL
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k WHERE k.enabled AND k.priority = 'low' AND k.run_id IS NULL
            ORDER BY k.due_at LIMIT 1))
$$;


--
-- Name: FUNCTION simulation_next_due(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_next_due() IS 'For the simulator: the earliest due time of an enabled kind no run holds (NULL: none), the first instant a claim could find anything; paused and unarmed kinds count, as the claim the simulator skips when nothing is due counts them.';


--
-- Name: simulation_parts(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_parts(p_until timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(part_from timestamp with time zone, part_until timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    -- A caller runs simulate_events part by part, committing after each: in one transaction
    -- every claim and report adds a version of the same few kind and slot rows that nothing can
    -- prune, and a week would take minutes instead of seconds. Parts of 15 minutes, rounded
    -- down to whole ticks (at least one), so every part starts on a tick; each ends just before
    -- the next part's first tick, which that part handles. 15 minutes, not 3 hours: the backend's
    -- CPU time of a real_fix week fell by about a fifth and of a day of 1,000 kinds by a quarter
    -- (bench/README.md); 10 minutes gained nothing more.
    -- After a first shorter part the parts begin on whole parts of the clock since 2000-01-01
    -- UTC (for 15 minutes the quarter hours, in every zone) when a tick falls there: slots are
    -- written on round times, so runs begin there and seldom run across one, and
    -- simulate_window finds the clock at rest at a part's start (where it may copy a day that
    -- repeats) more often. real_fix's week: 148 parts simulated, not 205 on :05, :20, :35 and
    -- :50 (its window starts at 23:35), with the same runs (bench/README.md).
    WITH p AS (
        SELECT s.tick, greatest(s.tick, s.tick * floor(extract(EPOCH FROM interval '15 minutes')
            / extract(EPOCH FROM s.tick))) AS part
        FROM tickq.settings AS s
    ),
    first AS (
        -- The first tick after p_now on a whole part of the clock; none: a part after p_now.
        SELECT p.part, coalesce((
            SELECT p_now + g.k * p.tick
            FROM generate_series(1, (extract(EPOCH FROM p.part) / extract(EPOCH FROM p.tick))::integer) AS g (k)
            WHERE date_bin(p.part, p_now + g.k * p.tick, timestamptz '2000-01-01 00:00:00+00') = p_now + g.k * p.tick
            ORDER BY g.k
            LIMIT 1
        ), p_now + p.part) AS at
        FROM p
    ),
    starts AS (
        SELECT p_now AS at WHERE p_now <= p_until
        UNION ALL
        SELECT g.at FROM first AS f CROSS JOIN LATERAL generate_series(f.at, p_until, f.part) AS g (at)
    )
    SELECT s.at, least(coalesce(lead(s.at) OVER (ORDER BY s.at) - interval '1 microsecond', p_until), p_until)
    FROM starts AS s
    ORDER BY s.at
$$;


--
-- Name: FUNCTION simulation_parts(p_until timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_parts(p_until timestamp with time zone, p_now timestamp with time zone) IS 'The simulator''s clock, in parts: from p_now through p_until, parts of 15 minutes in whole ticks (at least one), after a first shorter one on the clock''s quarter hours where a tick falls there, each for one call of tickq.simulate_events with a commit after it.';


--
-- Name: simulation_remap(jsonb, bigint, bigint, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_remap(p_ids jsonb, p_first bigint, p_offset bigint, p_going jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
    -- A run of the copied stretch (id p_first or later) is its copy, p_offset further; one from
    -- before the stretch is the run of the same kind going on where the copy began (p_going).
    SELECT coalesce(jsonb_object_agg(r.key, CASE WHEN r.value::bigint >= p_first THEN to_jsonb(r.value::bigint + p_offset)
        ELSE p_going -> r.key END), '{}')
    FROM jsonb_each_text(p_ids) AS r
$$;


--
-- Name: FUNCTION simulation_remap(p_ids jsonb, p_first bigint, p_offset bigint, p_going jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_remap(p_ids jsonb, p_first bigint, p_offset bigint, p_going jsonb) IS 'For the simulator''s copies: run ids by kind (tickq.simulation_running) as they are in the copy of a stretch whose first run is p_first, copied p_offset ids on, begun where p_going ran. p_now is unused.';


--
-- Name: simulation_repeats_until(timestamp with time zone, timestamp with time zone, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT tickq.simulation_repeats_until(p_from, p_until, p_shift, coalesce(array_agg(b.zone), '{}'),
        coalesce(array_agg(b.first_at), '{}'),
        coalesce(array_agg(b.last_at), '{}'), coalesce(array_agg(b.back_to), '{}'))
    FROM tickq.simulation_breaks(p_from, p_until, p_shift) AS b
    WHERE extract(EPOCH FROM p_shift) % 86400 = 0
$$;


--
-- Name: FUNCTION simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone) IS 'tickq.simulation_repeats_until with the breaks of the kinds'' day rules read for this stretch alone.';


--
-- Name: simulation_repeats_until(timestamp with time zone, timestamp with time zone, interval, text[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone[], timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone DEFAULT now()) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_kind tickq.job_kind;
    v_horizon timestamptz := p_until;
    v_days boolean := extract(EPOCH FROM p_shift) % 86400 = 0;
    v_steady text[] := '{}'::text[];
BEGIN
    IF EXISTS (SELECT FROM tickq.job_kind AS pk WHERE pk.enabled AND pk.paused_until > p_from) THEN
        RETURN NULL;
    END IF;
    IF v_days THEN  -- the zones that keep their offset around both stretches
        v_steady := ARRAY(SELECT z.zone FROM (SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k
                WHERE k.enabled AND k.every IS NULL OFFSET 0) AS z  -- each zone once, not each kind
            WHERE tickq.zone_steady(z.zone, p_from - interval '1 day', p_until + p_shift + interval '1 day'));
        -- The breaks of the kinds with day rules in those zones (p_zones ... p_backs: rows of
        -- tickq.simulation_breaks for this shift, from before p_from to past p_until).
        v_horizon := least(v_horizon, (
            SELECT min(CASE WHEN b.back_to >= p_from THEN b.back_to ELSE greatest(b.first_at, p_from) END)
            FROM unnest(p_zones, p_firsts, p_lasts, p_backs) AS b (zone, first_at, last_at, back_to)
            WHERE b.last_at >= p_from AND b.zone = ANY(v_steady)));
    END IF;
    -- The rest, walked (the answer is the least of the kinds', so the kinds most likely to
    -- differ go first, and once it is p_from the walk ends): a cadence p_shift does not divide,
    -- then calendars with day rules, then those of a zone with clock changes, fewest times
    -- first. Left out: cadences p_shift divides, and calendars in steady zones for whole days.
    FOR v_kind IN
        SELECT jk.* FROM tickq.job_kind AS jk
        WHERE jk.enabled
            AND NOT (jk.every IS NOT NULL AND extract(EPOCH FROM p_shift) % extract(EPOCH FROM jk.every) = 0)
            AND NOT (v_days AND jk.every IS NULL AND jk.timezone = ANY(v_steady))
        ORDER BY jk.every IS NULL, NOT tickq.simulation_day_rules(jk), jk.timezone = 'UTC',
            cardinality(jk.at_times), jk.name
    LOOP
        EXIT WHEN v_horizon <= p_from;
        v_horizon := tickq.simulation_walk_until(v_kind, p_from, v_horizon, p_shift);
    END LOOP;
    RETURN v_horizon;
END
$$;


--
-- Name: FUNCTION simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) IS 'For the simulator: the latest instant C, at most p_until, such that the stretch from p_from until C comes again p_shift later for every enabled kind (the same slots, and the first one at or after C, p_shift later; or no slot in either stretch); p_from or earlier when none; NULL when a kind is paused past p_from. p_zones .. p_backs are tickq.simulation_breaks'' rows for p_shift over the stretch (read once per window).';


--
-- Name: simulation_replay_window(numeric, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_replay_window(p_hours numeric DEFAULT NULL::numeric, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(starts_at timestamp with time zone, hours numeric, period interval, warm_up interval, dst_zone text, month_end date)
    LANGUAGE sql STABLE
    AS $$
    -- A registry deployed now: nothing ran before it, so there is no warm-up. By default the
    -- first planned window's period and stale_after.
    SELECT p_now, coalesce(p_hours, round(w.hours - extract(EPOCH FROM w.warm_up) / 3600, 6)), w.period,
        '0'::interval, NULL::text, NULL::date
    FROM tickq.simulation_windows(p_now) AS w
    ORDER BY w.period DESC, w.starts_at
    LIMIT 1
$$;


--
-- Name: FUNCTION simulation_replay_window(p_hours numeric, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_replay_window(p_hours numeric, p_now timestamp with time zone) IS 'The window tickq simulate replays: from p_now, p_hours long (default: every schedule once and stale_after, as the first whole-period window of tickq.simulation_windows without its warm-up).';


--
-- Name: simulation_report(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_report(p_until timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, runs integer, longest_wait interval, starved boolean, worst_due_at timestamp with time zone, behind text[])
    LANGUAGE sql STABLE
    AS $$
    WITH settings AS (SELECT s.stale_after FROM tickq.settings AS s),
    sim_runs AS (
        SELECT r.kind, r.due_at, r.claimed_at, coalesce(r.finished_at, p_until) AS ended_at,
            r.outcome = 'skipped' AS skipped
        FROM tickq.job_run AS r
        WHERE r.dispatcher = 'simulator' AND r.claimed_at >= p_now AND r.claimed_at <= p_until
    ),
    waits AS (
        -- Every wait from due to claim, and the waits of kinds still unclaimed at the end.
        SELECT r.kind, r.due_at, r.claimed_at AS until FROM sim_runs AS r
        UNION ALL
        SELECT k.name, k.due_at, p_until FROM tickq.job_kind AS k
        WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_until
    ),
    worst AS (
        SELECT DISTINCT ON (w.kind) w.kind, w.due_at, w.until, w.until - w.due_at AS wait
        FROM waits AS w
        ORDER BY w.kind, w.until - w.due_at DESC, w.due_at
    ),
    -- A skipped slot (catch_up) held no slot: no run, and the simulated queue dropped it, which
    -- starves the kind whatever its wait (in the simulator nothing sleeps: only a full queue
    -- makes a slot that late).
    run_counts AS (
        SELECT r.kind, (count(*) FILTER (WHERE NOT r.skipped))::integer AS runs, bool_or(r.skipped) AS skipped
        FROM sim_runs AS r GROUP BY r.kind
    ),
    holders AS (SELECT r.* FROM sim_runs AS r WHERE NOT r.skipped)
    SELECT
        k.name,
        k.priority,
        coalesce(c.runs, 0),
        CASE WHEN w.kind IS NOT NULL THEN greatest(w.wait, '0'::interval) END,
        coalesce(w.wait > s.stale_after, false) OR coalesce(c.skipped, false),
        CASE WHEN w.wait > '0'::interval THEN w.due_at END,
        -- What a starved kind waited behind: the kinds whose runs held slots during its worst
        -- wait, longest holders first.
        CASE WHEN w.wait > s.stale_after OR c.skipped THEN ARRAY(
            SELECT r.kind FROM holders AS r
            WHERE r.kind <> k.name AND r.claimed_at < w.until AND r.ended_at > w.due_at
            GROUP BY r.kind
            ORDER BY sum(least(r.ended_at, w.until) - greatest(r.claimed_at, w.due_at)) DESC, r.kind
        ) END
    FROM tickq.job_kind AS k
    CROSS JOIN settings AS s
    LEFT JOIN worst AS w ON w.kind = k.name
    LEFT JOIN run_counts AS c ON c.kind = k.name
    WHERE k.enabled
    ORDER BY k.priority, k.name
$$;


--
-- Name: FUNCTION simulation_report(p_until timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_report(p_until timestamp with time zone, p_now timestamp with time zone) IS 'What the simulator saw from p_now through p_until, per enabled kind: runs, longest wait from due to claim (NULL when it was never due), starved (waited longer than stale_after, or a slot skipped for its catch_up), when that wait began, and for a starved kind the kinds whose runs held slots meanwhile, longest first.';


--
-- Name: simulation_restore(timestamp with time zone, jsonb, jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_restore(p_at timestamp with time zone, p_state jsonb, p_ids jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Every kind waiting for its next slot at or after p_at; those p_state names as it says,
    -- relative to p_at, with the runs p_ids names; the slot and pool rows likewise. Only the
    -- kinds due before p_at, or named by p_state, are written.
    UPDATE tickq.job_kind AS k SET
        run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0, next_trigger = 'schedule',
        due_at = coalesce(tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
            k.timezone, p_at - interval '1 microsecond'), p_at + interval '1 day')
    WHERE k.enabled AND (k.due_at < p_at OR k.run_id IS NOT NULL OR k.leased_by IS NOT NULL OR k.attempts <> 0
        OR k.next_trigger <> 'schedule');
    UPDATE tickq.job_kind AS k SET
        due_at = p_at + make_interval(secs => (e.value ->> 1)::double precision),
        attempts = (e.value ->> 2)::integer,
        next_trigger = (e.value ->> 3)::tickq.run_trigger,
        slot_at = CASE WHEN e.value -> 4 <> 'null' THEN p_at + make_interval(secs => (e.value -> 4 ->> 0)::double precision)
            ELSE k.slot_at END,
        first_slot_at = CASE WHEN e.value -> 4 <> 'null'
            THEN p_at + make_interval(secs => (e.value -> 4 ->> 1)::double precision) ELSE k.first_slot_at END,
        slots_covered = CASE WHEN e.value -> 4 <> 'null' THEN (e.value -> 4 ->> 2)::integer ELSE k.slots_covered END,
        run_id = (p_ids ->> (e.value ->> 0))::bigint,
        leased_by = e.value -> 5 ->> 0,
        leased_until = p_at + make_interval(secs => (e.value -> 5 ->> 1)::double precision)
    FROM jsonb_array_elements(p_state -> 'kinds') AS e (value)
    WHERE k.name = e.value ->> 0;
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL
    WHERE sl.run_id IS NOT NULL OR sl.leased_until IS NOT NULL;
    UPDATE tickq.slot AS sl SET run_id = (p_ids ->> (e.value ->> 1))::bigint,
        leased_until = p_at + make_interval(secs => (e.value ->> 2)::double precision)
    FROM jsonb_array_elements(p_state -> 'slots') AS e (value)
    WHERE sl.n = (e.value ->> 0)::integer;
    UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL
    WHERE ps.run_id IS NOT NULL OR ps.leased_until IS NOT NULL;
    UPDATE tickq.pool_slot AS ps SET run_id = (p_ids ->> (e.value ->> 2))::bigint,
        leased_until = p_at + make_interval(secs => (e.value ->> 3)::double precision)
    FROM jsonb_array_elements(p_state -> 'pools') AS e (value)
    WHERE ps.pool = e.value ->> 0 AND ps.n = (e.value ->> 1)::integer;
END
$$;


--
-- Name: FUNCTION simulation_restore(p_at timestamp with time zone, p_state jsonb, p_ids jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_restore(p_at timestamp with time zone, p_state jsonb, p_ids jsonb) IS 'For the simulator''s copies: puts the queue in the state p_state (tickq.simulation_state, relative to p_at) with the runs p_ids names (by kind): every other kind waiting for its next slot at or after p_at.';


--
-- Name: simulation_running(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_running() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(jsonb_object_agg(k.name, k.run_id), '{}')
    FROM tickq.job_kind AS k
    WHERE k.run_id IS NOT NULL
$$;


--
-- Name: FUNCTION simulation_running(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_running() IS 'For the simulator: the run each leased kind holds, by kind name (the ids tickq.simulation_state leaves out).';


--
-- Name: simulation_session(); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_session() RETURNS void
    LANGUAGE sql
    AS $$
    -- What the simulator's functions may keep for the rest of the session: the calendars of
    -- its cron strings (tickq.cron_calendar).
    SELECT set_config('tickq.simulator', 'on', false)
$$;


--
-- Name: FUNCTION simulation_session(); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_session() IS 'Marks the session as the simulator''s (setting tickq.simulator = on, for the session): tickq.cron_calendar then keeps each cron string''s calendar for the session. Scratch databases only.';


--
-- Name: simulation_stale(bigint, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_stale(p_since bigint, p_now timestamp with time zone DEFAULT now()) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    -- A kind due stale_after ago or earlier still unclaimed, or a run from id p_since on (the
    -- runs of the parts since the last look) claimed that late or skipped past its catch_up.
    SELECT EXISTS (
            SELECT FROM tickq.job_kind AS k CROSS JOIN tickq.settings AS s
            WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_now - s.stale_after)
        OR EXISTS (
            SELECT FROM tickq.job_run AS r CROSS JOIN tickq.settings AS s
            WHERE r.id >= p_since AND r.dispatcher = 'simulator'
                AND (r.outcome = 'skipped' OR r.claimed_at - r.due_at >= s.stale_after))
$$;


--
-- Name: FUNCTION simulation_stale(p_since bigint, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_stale(p_since bigint, p_now timestamp with time zone) IS 'For tickq.simulate_window stopping at the first stale wait (check --suggest''s proposals): true when at p_now a kind has waited stale_after or longer, or a run from id p_since on was claimed that late or skipped slots past its catch_up.';


--
-- Name: simulation_start(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_start(p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM tickq.simulation_session();
    -- A queue that has run for a while: each kind waits for its own next slot, none is due at
    -- once because it was just synced, and nothing is running.
    UPDATE tickq.job_run AS r SET outcome = 'lost', finished_at = p_now WHERE r.outcome = 'running';
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id IS NOT NULL;
    UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL WHERE ps.run_id IS NOT NULL;
    UPDATE tickq.job_kind AS k SET
        run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0, next_trigger = 'schedule',
        last_run_id = NULL,
        due_at = tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
            p_now - interval '1 microsecond')
    WHERE k.enabled;
    -- An earlier window's runs would count in this one's report.
    DELETE FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
END
$$;


--
-- Name: FUNCTION simulation_start(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_start(p_now timestamp with time zone) IS 'For the simulator, in a scratch database: puts every enabled kind at its first slot at or after p_now with nothing running and no simulated run left, as in a queue that has been running for a while (a kind new to a queue is due at once; that one-off burst is not the steady state tickq check judges).';


--
-- Name: simulation_state(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_state(p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    -- Times in seconds from p_now; no run ids (tickq.simulation_running has them), so the same
    -- state at two instants is the same jsonb. A kind waiting for its next slot (not leased, at
    -- its first try, due at or after p_now) is left out: its due time is its next slot at or
    -- after p_now (every write of it is the next slot after an earlier instant), which the
    -- schedule gives.
    SELECT jsonb_build_object(
        'kinds', coalesce((
            SELECT jsonb_agg(jsonb_build_array(k.name, extract(EPOCH FROM k.due_at - p_now), k.attempts,
                k.next_trigger, CASE WHEN k.run_id IS NOT NULL OR k.next_trigger = 'retry' THEN jsonb_build_array(
                    extract(EPOCH FROM k.slot_at - p_now), extract(EPOCH FROM k.first_slot_at - p_now), k.slots_covered)
                END,
                CASE WHEN k.run_id IS NOT NULL THEN jsonb_build_array(k.leased_by, extract(EPOCH FROM k.leased_until - p_now),
                    extract(EPOCH FROM r.claimed_at - p_now), r.attempt, r.run_trigger, r.slots, r.slot,
                    extract(EPOCH FROM r.due_at - p_now), r.dispatcher, r.run_by)
                END) ORDER BY k.name)
            FROM tickq.job_kind AS k
            LEFT JOIN tickq.job_run AS r ON k.run_id = r.id
            WHERE k.enabled AND (k.run_id IS NOT NULL OR k.leased_by IS NOT NULL OR k.due_at < p_now OR k.attempts <> 0
                OR k.next_trigger <> 'schedule')), '[]'),
        'slots', coalesce((
            SELECT jsonb_agg(jsonb_build_array(sl.n, r.kind, extract(EPOCH FROM sl.leased_until - p_now)) ORDER BY sl.n)
            FROM tickq.slot AS sl
            LEFT JOIN tickq.job_run AS r ON sl.run_id = r.id
            WHERE sl.run_id IS NOT NULL OR sl.leased_until IS NOT NULL), '[]'),
        'pools', coalesce((
            SELECT jsonb_agg(jsonb_build_array(ps.pool, ps.n, r.kind, extract(EPOCH FROM ps.leased_until - p_now))
                ORDER BY ps.pool, ps.n)
            FROM tickq.pool_slot AS ps
            LEFT JOIN tickq.job_run AS r ON ps.run_id = r.id
            WHERE ps.run_id IS NOT NULL OR ps.leased_until IS NOT NULL), '[]'))
$$;


--
-- Name: FUNCTION simulation_state(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_state(p_now timestamp with time zone) IS 'For the simulator, in a scratch database: what claims and reports read from p_now on, relative to p_now (times in seconds from it): each enabled kind that is not waiting for its next slot (its due time, tries, trigger, lease and run), and the slot and pool rows held, by kind. Two instants with the same state go on the same way where the kinds'' slots repeat.';


--
-- Name: simulation_walk_until(tickq.job_kind, timestamp with time zone, timestamp with time zone, interval); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_walk_until(p_kind tickq.job_kind, p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_slot timestamptz;
    v_later timestamptz;
    v_matched timestamptz;
BEGIN
    -- The kind's slots from p_from and from p_from + p_shift side by side, once: the last slot
    -- that matched is the latest C (its first slot at or after C); before any matched, C must
    -- come before the first slot of either stretch. An every cadence that p_shift does not
    -- divide only waits through both stretches. The walk stops at p_until.
    v_slot := tickq.next_slot(p_kind.every, p_kind.every_offset, p_kind.at_times, p_kind.on_days, p_kind.days,
        p_kind.months, p_kind.cron, p_kind.timezone, p_from - interval '1 microsecond');
    v_later := tickq.next_slot(p_kind.every, p_kind.every_offset, p_kind.at_times, p_kind.on_days, p_kind.days,
        p_kind.months, p_kind.cron, p_kind.timezone, p_from + p_shift - interval '1 microsecond');
    LOOP
        IF p_kind.every IS NOT NULL OR v_slot IS DISTINCT FROM v_later - p_shift THEN
            RETURN least(p_until, coalesce(v_matched,
                CASE WHEN v_slot IS NOT NULL AND v_later IS NOT NULL THEN least(v_slot, v_later - p_shift) END,
                p_from));
        END IF;
        EXIT WHEN v_slot IS NULL OR v_slot >= p_until;  -- the same slots as far as needed
        v_matched := v_slot;
        v_slot := tickq.next_slot(p_kind.every, p_kind.every_offset, p_kind.at_times, p_kind.on_days, p_kind.days,
            p_kind.months, p_kind.cron, p_kind.timezone, v_slot);
        v_later := tickq.next_slot(p_kind.every, p_kind.every_offset, p_kind.at_times, p_kind.on_days, p_kind.days,
            p_kind.months, p_kind.cron, p_kind.timezone, v_later);
    END LOOP;
    RETURN p_until;
END
$$;


--
-- Name: FUNCTION simulation_walk_until(p_kind tickq.job_kind, p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_walk_until(p_kind tickq.job_kind, p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval) IS 'For the simulator: the latest C, at most p_until, such that the kind''s slots from p_from until C and its first one at or after C come again p_shift later (or it has none in either stretch), found by walking both stretches slot by slot.';


--
-- Name: simulation_window_breaks(timestamp with time zone, interval, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_window_breaks(OUT shifts interval[], OUT rows_shifts interval[], OUT zones text[], OUT firsts timestamp with time zone[], OUT lasts timestamp with time zone[], OUT backs timestamp with time zone[], p_until timestamp with time zone, p_len interval, p_now timestamp with time zone DEFAULT now()) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    -- The shifts a copy may use (a day and a week, each a whole number of parts p_len long), and
    -- for all of them the breaks of the kinds' day rules over the window (tickq.simulation_breaks),
    -- as arrays for tickq.simulation_copy_until.
    WITH s AS (
        SELECT s.shift FROM unnest(ARRAY[interval '1 day', interval '7 days']) AS s (shift)
        WHERE extract(EPOCH FROM s.shift) % extract(EPOCH FROM p_len) = 0
    )
    SELECT ARRAY(SELECT s.shift FROM s ORDER BY s.shift), coalesce(array_agg(s.shift), '{}'), array_agg(b.zone),
        array_agg(b.first_at), array_agg(b.last_at), array_agg(b.back_to)
    FROM s CROSS JOIN LATERAL tickq.simulation_breaks(p_now, p_until, s.shift) AS b
$$;


--
-- Name: FUNCTION simulation_window_breaks(OUT shifts interval[], OUT rows_shifts interval[], OUT zones text[], OUT firsts timestamp with time zone[], OUT lasts timestamp with time zone[], OUT backs timestamp with time zone[], p_until timestamp with time zone, p_len interval, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_window_breaks(OUT shifts interval[], OUT rows_shifts interval[], OUT zones text[], OUT firsts timestamp with time zone[], OUT lasts timestamp with time zone[], OUT backs timestamp with time zone[], p_until timestamp with time zone, p_len interval, p_now timestamp with time zone) IS 'For tickq.simulate_window: the shifts a copy may use in a window from p_now to p_until in parts p_len long (a day, a week: whole numbers of parts), and the breaks of the kinds'' day rules for each (tickq.simulation_breaks), as arrays, one entry per break.';


--
-- Name: simulation_windows(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_windows(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(starts_at timestamp with time zone, hours numeric, period interval, warm_up interval, dst_zone text, month_end date)
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
DECLARE
    v_stale interval;
    v_period interval := '0'::interval;
    v_lcm bigint := 1;
    v_seconds bigint;
    v_warm interval;
    v_tick interval;
    v_zone record;
    v_end record;
    v_starts timestamptz[] := '{}'::timestamptz[];
    v_periods interval[] := '{}'::interval[];
    v_zones text[] := '{}'::text[];
    v_ends date[] := '{}'::date[];
BEGIN
    SELECT s.stale_after, s.tick INTO STRICT v_stale, v_tick FROM tickq.settings AS s;
    -- The period that covers every schedule once: the longest cadence, a day for daily calendar
    -- times, a week for weekdays, and the cadences' least common multiple (when cadences of 7 and
    -- 11 minutes meet only every 77), at most a week; all of it at most 31 days.
    FOR v_seconds IN
        SELECT DISTINCT extract(EPOCH FROM k.every)::bigint FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every IS NOT NULL
    LOOP
        v_lcm := least(v_lcm / gcd(v_lcm, v_seconds) * v_seconds, 7 * 86400);
    END LOOP;
    SELECT greatest(
        make_interval(secs => v_lcm),
        max(k.every),
        max(CASE WHEN k.cron IS NOT NULL OR k.days IS NOT NULL OR k.months IS NOT NULL
                OR NOT k.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[] THEN interval '31 days'
            WHEN k.at_times IS NULL THEN NULL WHEN k.on_days IS NULL THEN interval '1 day'
            ELSE interval '7 days' END))
    INTO v_period
    FROM tickq.job_kind AS k
    WHERE k.enabled;
    v_period := least(coalesce(v_period, '1 hour'::interval), '31 days'::interval);
    -- A run due at the very end still has stale_after to show that it waited too long; the
    -- window opens the longest timeout early, so runs that started before it hold their slots
    -- when it begins, as they would in a queue that has been running. Whole ticks, so the
    -- simulated ticks fall on the period's aligned instants (as cron's */N does).
    SELECT v_tick * ceil(extract(EPOCH FROM coalesce(max(k.timeout), '0'::interval)) / extract(EPOCH FROM v_tick))
    INTO v_warm FROM tickq.job_kind AS k WHERE k.enabled;

    -- Calendar times in a zone with daylight saving: windows hold each clock-change day of each
    -- such zone (its next two changes after p_now in the database's own time-zone data, spring
    -- and fall), starting at that day's local midnight: the next change a whole period, the one
    -- after it that day and the next. A change in a window already planned shares it.
    FOR v_zone IN
        SELECT z.zone, c.changes_at, c.n
        FROM (SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k
            WHERE k.enabled AND (k.at_times IS NOT NULL OR k.cron IS NOT NULL)) AS z
        CROSS JOIN LATERAL (
            SELECT h.at AS changes_at, row_number() OVER (ORDER BY h.at) AS n
            FROM generate_series(date_trunc('hour', p_now), date_trunc('hour', p_now) + interval '400 days',
                interval '1 hour') AS h (at)
            WHERE (h.at AT TIME ZONE z.zone) - (h.at AT TIME ZONE 'UTC')
                <> ((h.at + interval '1 hour') AT TIME ZONE z.zone) - ((h.at + interval '1 hour') AT TIME ZONE 'UTC')
            ORDER BY h.at LIMIT 2
        ) AS c
        ORDER BY c.n, c.changes_at, z.zone
    LOOP
        CONTINUE WHEN EXISTS (SELECT FROM unnest(v_starts, v_periods) AS w (at, period)
            WHERE v_zone.changes_at >= w.at AND v_zone.changes_at + interval '1 hour' <= w.at + w.period);
        v_starts := v_starts || ((((v_zone.changes_at + interval '1 hour') AT TIME ZONE v_zone.zone)::date)::timestamp
            AT TIME ZONE v_zone.zone);
        v_periods := v_periods || CASE WHEN v_zone.n = 1 THEN v_period ELSE least(v_period, interval '2 days') END;
        v_zones := v_zones || v_zone.zone::text;
        v_ends := v_ends || NULL::date;
    END LOOP;
    IF cardinality(v_starts) = 0 THEN
        -- No change day to hold: from midnight UTC, where every clock-aligned cadence meets.
        v_starts := ARRAY[date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'];
        v_periods := ARRAY[v_period];
        v_zones := ARRAY[NULL::text];
        v_ends := ARRAY[NULL::date];
    END IF;
    -- A month end of each length (sql/api/17_month_ends.sql), unless a planned window holds it.
    FOR v_end IN SELECT * FROM tickq.month_end_windows(p_now) AS e ORDER BY e.starts_at LOOP
        CONTINUE WHEN EXISTS (SELECT FROM unnest(v_starts, v_periods) AS w (at, period)
            WHERE v_end.starts_at >= w.at AND v_end.starts_at + v_end.period <= w.at + w.period);
        v_starts := v_starts || v_end.starts_at;
        v_periods := v_periods || v_end.period;
        v_zones := v_zones || NULL::text;
        v_ends := v_ends || v_end.month_end;
    END LOOP;
    RETURN QUERY
    SELECT w.at - v_warm, round(extract(EPOCH FROM v_warm + w.period + v_stale) / 3600, 6), w.period, v_warm,
        w.zone, w.month_end
    FROM unnest(v_starts, v_periods, v_zones, v_ends) AS w (at, period, zone, month_end)
    ORDER BY w.at;
END
$$;


--
-- Name: FUNCTION simulation_windows(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_windows(p_now timestamp with time zone) IS 'The windows tickq check simulates: each covers every enabled schedule at least once (period: the longest cadence or calendar period, the cadences'' least common multiple up to a week, at most 31 days), opened the longest timeout early and closed stale_after late; with calendar kinds in zones that change clocks, one window per change day (the next after p_now), whose period starts at its local midnight, shared by zones it covers, and a shorter one (two days at most) for the change after it; with kinds on days of the month, months, nth weekdays or cron strings, a month end of each length (tickq.month_end_windows, month_end) that no other window holds.';


--
-- Name: simulation_worst(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.simulation_worst(p_worst jsonb) RETURNS TABLE(kind text, lane text, runs integer, longest_wait interval, starved boolean, worst_due_at timestamp with time zone, behind text[], in_window integer)
    LANGUAGE sql STABLE
    AS $$
    SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window
    FROM jsonb_to_recordset(coalesce(p_worst, '[]'::jsonb)) AS w (
        kind text, lane text, runs integer, longest_wait interval, starved boolean,
        worst_due_at timestamptz, behind text[], in_window integer
    )
    ORDER BY array_position(enum_range(NULL::tickq.priority), w.lane::tickq.priority), w.kind
$$;


--
-- Name: FUNCTION simulation_worst(p_worst jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.simulation_worst(p_worst jsonb) IS 'Reads what tickq.simulation_merge gathered: per kind its runs over all windows, its longest wait (NULL: never due), starved, when that wait began, what it waited behind, and in which window (1 = the first merged). By lane, then name.';


--
-- Name: slot_holders_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slot_holders_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(run_id bigint, kind text, dispatcher text, since timestamp with time zone, leased_until timestamp with time zone, weight integer, pools text[])
    LANGUAGE sql STABLE
    AS $$
    -- One row per run holding global slots (not one per slot row): weight is how many it holds.
    SELECT r.id, r.kind, r.dispatcher, coalesce(r.started_at, r.claimed_at), min(t.leased_until),
        count(*)::integer, coalesce(r.pools, '{}')
    FROM tickq.slot AS t
    INNER JOIN tickq.job_run AS r ON t.run_id = r.id
    WHERE r.claimed_at <= p_now
    GROUP BY r.id
    ORDER BY min(t.leased_until), r.id
$$;


--
-- Name: FUNCTION slot_holders_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slot_holders_at(p_now timestamp with time zone) IS 'The runs holding global slots as of p_now, one row per run: kind, dispatcher, since (started, else claimed), lease until, weight (the slot rows it holds) and the pools it names; the lease that runs out first first.';


--
-- Name: slot_occupancy_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slot_occupancy_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(slots integer, busy integer, free integer, holders jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- Busy counts slot rows (a run holds its weight of them); after the limit was lowered
    -- they may outnumber the slots for a while: free is then 0, never negative.
    SELECT s.slots, b.busy, greatest(s.slots - b.busy, 0), coalesce((
        SELECT jsonb_agg(jsonb_build_object(
            'run_id', h.run_id, 'kind', h.kind, 'dispatcher', h.dispatcher, 'since', h.since,
            'leased_until', h.leased_until, 'weight', h.weight, 'pools', to_jsonb(h.pools)
        ) ORDER BY h.leased_until, h.run_id)
        FROM tickq.slot_holders_at(p_now) AS h
    ), '[]')
    FROM tickq.settings AS s
    CROSS JOIN LATERAL (
        SELECT count(*)::integer AS busy FROM tickq.slot AS t WHERE t.run_id IS NOT NULL
    ) AS b
$$;


--
-- Name: FUNCTION slot_occupancy_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slot_occupancy_at(p_now timestamp with time zone) IS 'The global slots as of p_now: the limit, how many slot rows live runs hold (busy; a run holds its weight), how many are free, and the runs holding them (slot_holders_at, as JSON).';


--
-- Name: slot_seconds(jsonb, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slot_seconds(p_entry jsonb, p_timezone text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(second integer, hour integer)
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_calendar tickq.calendar;
    v_step integer;
    v_start integer;
BEGIN
    -- The seconds past the hour (wall clock in p_timezone) a registry entry's slots fall on, with
    -- the first hour of the day each falls in. They are read from the schedule, not walked: a
    -- clock change shifts times by whole hours (one that does not, Lord Howe's half hour, moves
    -- a shifted time off the tick too). Nothing for an entry whose schedule does not read.
    IF jsonb_typeof(p_entry -> 'every') = 'number' THEN
        -- An every cadence is aligned to the Unix epoch: the hour's slots start at the offset
        -- plus the zone's offset from UTC, and repeat every gcd(every, 1h).
        v_step := gcd((p_entry ->> 'every')::numeric::integer, 3600);
        v_start := ((coalesce((p_entry ->> 'offset')::numeric, 0)::integer
            + extract(EPOCH FROM (p_now AT TIME ZONE p_timezone) - (p_now AT TIME ZONE 'UTC'))::integer)
            % v_step + v_step) % v_step;
        RETURN QUERY SELECT v_start + g.n * v_step, 0 FROM generate_series(0, 3600 / v_step - 1) AS g (n);
        RETURN;
    END IF;
    IF jsonb_typeof(p_entry -> 'cron') = 'string' THEN
        v_calendar := tickq.cron_calendar(p_entry ->> 'cron', p_timezone);
    ELSE
        v_calendar.times := ARRAY(SELECT t.t::time FROM jsonb_array_elements_text(
            CASE jsonb_typeof(p_entry -> 'at') WHEN 'array' THEN p_entry -> 'at' WHEN 'string'
                THEN jsonb_build_array(p_entry -> 'at') ELSE '[]' END) AS t (t));
    END IF;
    IF v_calendar.times IS NOT NULL THEN
        RETURN QUERY SELECT floor(extract(EPOCH FROM t.t))::integer % 3600,
            min(extract(HOUR FROM t.t))::integer
            FROM unnest(v_calendar.times) AS t (t) GROUP BY 1 ORDER BY 1;
        RETURN;
    END IF;
    RETURN QUERY SELECT m.m * 60, coalesce(v_calendar.hours[1], 0)::integer
        FROM unnest(v_calendar.minutes) AS m (m) ORDER BY 1;
EXCEPTION WHEN OTHERS THEN
    RETURN;  -- registry_problems says what is wrong with it
END
$$;


--
-- Name: FUNCTION slot_seconds(p_entry jsonb, p_timezone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slot_seconds(p_entry jsonb, p_timezone text, p_now timestamp with time zone) IS 'The seconds past the hour (wall clock in p_timezone) a registry entry''s slots fall on, each with the first hour of the day it falls in (0 for an every cadence, which starts from the Unix epoch, its offset and the zone''s offset at p_now); nothing for a schedule that does not read.';


--
-- Name: slots_between(interval, interval, time without time zone[], smallint[], text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE sql STABLE
    AS $$
    SELECT tickq.slots_between(p_every, p_offset, p_at_times, p_on_days, NULL, NULL, NULL, p_timezone,
        p_since, p_now)
$$;


--
-- Name: FUNCTION slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) IS 'tickq.slots_between for a schedule with no days of the month, months or cron string.';


--
-- Name: slots_between(interval, interval, time without time zone[], smallint[], smallint[], smallint[], text, text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_seconds numeric;
    v_offset numeric;
    v_calendar tickq.calendar;
BEGIN
    IF p_since >= p_now THEN
        RETURN 0;
    END IF;
    IF p_every IS NOT NULL THEN
        v_seconds := extract(EPOCH FROM p_every);
        v_offset := coalesce(extract(EPOCH FROM p_offset), 0);
        -- Capped below what an integer holds (claims add the slot due): a one-second kind asleep
        -- for 70 years would overflow it.
        RETURN least(floor((extract(EPOCH FROM p_now) - v_offset) / v_seconds)
            - floor((extract(EPOCH FROM p_since) - v_offset) / v_seconds), 2147483646)::integer;
    END IF;
    -- A claim asks this of every kind it leases, nearly always before the kind's next slot: the
    -- first slot after p_since is found in a few steps, where counting walks three local days.
    v_calendar := tickq.calendar_of(p_at_times, p_on_days, p_days, p_months, p_cron, p_timezone);
    IF tickq.calendar_next(v_calendar, p_since) > p_now THEN
        RETURN 0;
    END IF;
    RETURN tickq.calendar_count(v_calendar, p_since, p_now);
END
$$;


--
-- Name: FUNCTION slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) IS 'How many slots of a schedule fall in (p_since, p_now]: the slots a late run merges (a calendar''s at most 100,000).';


--
-- Name: slots_left(integer); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.slots_left(p_slots integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- Normally every free slot row up to the limit may be taken: the rows themselves keep
    -- concurrent claims apart. After the limit went down, runs may still hold slots past it;
    -- until they end, claims take the settings lock and count, so the total stays within the
    -- new limit.
    IF NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > p_slots AND sl.run_id IS NOT NULL) THEN
        RETURN p_slots;
    END IF;
    PERFORM FROM tickq.settings FOR UPDATE;
    RETURN greatest(0, p_slots - (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL));
END
$$;


--
-- Name: FUNCTION slots_left(p_slots integer); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.slots_left(p_slots integer) IS 'Internal: how many free slot rows a claim may take: all of them, or while runs still hold slots past a lowered limit, the limit less every busy slot (counted under the settings lock).';


--
-- Name: spread_offsets(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.spread_offsets(p_durations jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, offset_seconds integer)
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
DECLARE
    v_tick interval;
    v_start timestamptz;
    v_period interval;
    v_load integer[];
    v_cells integer[];
    v_kind record;
    v_best integer;
    v_cell integer;
    v_weight integer;
BEGIN
    -- Over the period of the first planned window, each kind's runs hold whole ticks
    -- (tickq.held_ticks); v_load[t + 1] counts the slots the runs holding tick t take (their
    -- weights).
    SELECT s.tick INTO STRICT v_tick FROM tickq.settings AS s;
    SELECT w.starts_at + w.warm_up, w.period INTO STRICT v_start, v_period
    FROM tickq.simulation_windows(p_now) AS w
    ORDER BY w.period DESC, w.starts_at
    LIMIT 1;
    v_load := array_fill(0,
        ARRAY[greatest(1, ceil(extract(EPOCH FROM v_period) / extract(EPOCH FROM v_tick)))::integer]);
    -- What no offset moves: calendar slots, the housekeeping kind, cadences at or below the tick
    -- (claimed at every tick, whatever their offset).
    FOR v_cells, v_weight IN
        SELECT tickq.held_ticks(c.slot, v_period, tickq.ticks_held(k, p_durations, v_tick), v_period, v_tick,
            v_start), k.weight
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL tickq.calendar_slots_in(k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
            v_start + v_period, v_start) AS c (slot)
        WHERE k.enabled AND (k.at_times IS NOT NULL OR k.cron IS NOT NULL)
        UNION ALL
        SELECT tickq.held_ticks(
            tickq.next_slot(k.every, k.every_offset, NULL, NULL, k.timezone, v_start - interval '1 microsecond'),
            greatest(k.every, v_tick), tickq.ticks_held(k, p_durations, v_tick), v_period, v_tick, v_start),
            k.weight
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every IS NOT NULL AND (k.every <= v_tick OR k.name = 'tickq.housekeeping')
    LOOP
        FOREACH v_cell IN ARRAY v_cells LOOP
            v_load[v_cell + 1] := v_load[v_cell + 1] + v_weight;
        END LOOP;
    END LOOP;
    -- The movable kinds, longest holders first as in bin packing, then by lane and name for a
    -- stable answer; each in turn at the offset (whole ticks) whose ticks are least loaded (the
    -- fullest tick, then the sum), its own offset when that is as good.
    FOR v_kind IN
        SELECT k.name, k.every, k.timezone, tickq.ticks_held(k, p_durations, v_tick) AS ticks,
            coalesce(extract(EPOCH FROM k.every_offset), 0)::integer AS own, k.weight
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every > v_tick AND k.name <> 'tickq.housekeeping'
        ORDER BY 4 DESC, k.priority, k.name
    LOOP
        SELECT o.seconds, c.cells INTO STRICT v_best, v_cells
        FROM (
            SELECT v_kind.own AS seconds
            UNION ALL
            SELECT g.seconds::integer FROM generate_series(0, extract(EPOCH FROM v_kind.every)::integer - 1,
                extract(EPOCH FROM v_tick)::integer) AS g (seconds)
        ) AS o
        CROSS JOIN LATERAL (
            SELECT tickq.held_ticks(tickq.next_slot(v_kind.every, make_interval(secs => o.seconds), NULL, NULL,
                v_kind.timezone, v_start - interval '1 microsecond'), v_kind.every, v_kind.ticks, v_period, v_tick,
                v_start) AS cells
        ) AS c
        ORDER BY (SELECT max(v_load[x + 1]) FROM unnest(c.cells) AS x),
            (SELECT sum(v_load[x + 1]) FROM unnest(c.cells) AS x),
            o.seconds <> v_kind.own, o.seconds
        LIMIT 1;
        FOREACH v_cell IN ARRAY v_cells LOOP
            v_load[v_cell + 1] := v_load[v_cell + 1] + v_kind.weight;
        END LOOP;
        IF v_best <> v_kind.own THEN
            kind := v_kind.name;
            offset_seconds := v_best;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;


--
-- Name: FUNCTION spread_offsets(p_durations jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.spread_offsets(p_durations jsonb, p_now timestamp with time zone) IS 'The offsets tickq check --suggest proposes for the queue''s every kinds slower than the tick: over the first planned window''s period (tickq.simulation_windows), each kind in turn, longest holder first, at the offset in whole ticks whose ticks the runs already placed load least (its own offset when that is as good). Returns only the kinds whose offset changes, in seconds. Each run holds its slot for p_durations->kind seconds, else its timeout.';


--
-- Name: spread_times(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.spread_times(p_durations jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, at_times text[])
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
DECLARE
    v_tick interval;
    v_start timestamptz;
    v_period interval;
    v_ticks integer;
    v_load integer[];
    v_cells integer[];
    v_kind record;
    v_best integer;
    v_cell integer;
BEGIN
    -- As tickq.spread_offsets does for cadences, over the same period (the first whole-period
    -- window of tickq.simulation_windows): the load of every kind's runs in whole ticks, then
    -- each calendar kind with "at" times in turn (longest holder first) moved later by the whole
    -- ticks (whole minutes, within its day) whose ticks are least loaded: its own times when
    -- they are as good. A month-end pile-up (many kinds on days = [-1] at 00:00) is spread so.
    SELECT s.tick INTO STRICT v_tick FROM tickq.settings AS s;
    SELECT w.starts_at + w.warm_up, w.period INTO STRICT v_start, v_period
    FROM tickq.simulation_windows(p_now) AS w
    ORDER BY w.period DESC, w.starts_at
    LIMIT 1;
    v_ticks := greatest(1, ceil(extract(EPOCH FROM v_period) / extract(EPOCH FROM v_tick)))::integer;
    v_load := array_fill(0, ARRAY[v_ticks]);
    -- What stays: cadences at their own offsets, cron strings, the housekeeping kind.
    FOR v_cells IN
        SELECT tickq.held_ticks(c.slot, v_period, tickq.ticks_held(k, p_durations, v_tick), v_period, v_tick, v_start)
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL tickq.calendar_slots_in(NULL, NULL, NULL, NULL, k.cron, k.timezone,
            v_start + v_period, v_start) AS c (slot)
        WHERE k.enabled AND k.cron IS NOT NULL
        UNION ALL
        SELECT tickq.held_ticks(
            tickq.next_slot(k.every, k.every_offset, NULL, NULL, k.timezone, v_start - interval '1 microsecond'),
            greatest(k.every, v_tick), tickq.ticks_held(k, p_durations, v_tick), v_period, v_tick, v_start)
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every IS NOT NULL
    LOOP
        FOREACH v_cell IN ARRAY v_cells LOOP
            v_load[v_cell + 1] := v_load[v_cell + 1] + 1;
        END LOOP;
    END LOOP;
    FOR v_kind IN
        SELECT k.name, k.at_times, tickq.ticks_held(k, p_durations, v_tick) AS ticks,
            coalesce((SELECT array_agg(x ORDER BY x) FROM tickq.job_kind AS j
                CROSS JOIN LATERAL tickq.calendar_slots_in(j.at_times, j.on_days, j.days, j.months, NULL, j.timezone,
                    v_start + v_period, v_start) AS c (slot)
                CROSS JOIN LATERAL unnest(tickq.held_ticks(c.slot, v_period, tickq.ticks_held(j, p_durations, v_tick),
                    v_period, v_tick, v_start)) AS x
                WHERE j.name = k.name), '{}') AS cells,
            -- later by at most what keeps the last time within its day, in whole minutes
            floor(extract(EPOCH FROM '23:59'::time - (SELECT max(t) FROM unnest(k.at_times) AS t))
                / extract(EPOCH FROM v_tick))::integer AS most
        FROM tickq.job_kind AS k
        -- an agent's times are its owner's, not the registry's to print
        WHERE k.enabled AND k.at_times IS NOT NULL AND k.name NOT LIKE 'agent.%'
        ORDER BY 3 DESC, k.priority, k.name
    LOOP
        SELECT s.n INTO STRICT v_best
        FROM generate_series(0, greatest(v_kind.most, 0)) AS s (n)
        WHERE (s.n * extract(EPOCH FROM v_tick))::numeric % 60 = 0
        ORDER BY (SELECT max(v_load[(x + s.n) % v_ticks + 1]) FROM unnest(v_kind.cells) AS x),
            (SELECT sum(v_load[(x + s.n) % v_ticks + 1]) FROM unnest(v_kind.cells) AS x), s.n
        LIMIT 1;
        FOREACH v_cell IN ARRAY v_kind.cells LOOP
            v_load[(v_cell + v_best) % v_ticks + 1] := v_load[(v_cell + v_best) % v_ticks + 1] + 1;
        END LOOP;
        IF v_best > 0 THEN
            kind := v_kind.name;
            at_times := ARRAY(SELECT to_char(t + v_best * v_tick, 'HH24:MI') FROM unnest(v_kind.at_times) AS t
                ORDER BY t);
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;


--
-- Name: FUNCTION spread_times(p_durations jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.spread_times(p_durations jsonb, p_now timestamp with time zone) IS 'The "at" times tickq check --suggest proposes for the queue''s calendar kinds (not cron strings): over the first whole-period window of tickq.simulation_windows, each kind in turn, longest holder first, its times moved later by the whole ticks (whole minutes, within the day) whose ticks the runs already placed load least, its own times when they are as good. Returns only the kinds whose times change ("HH:MM"). Each run holds its slot for p_durations->kind seconds, else its timeout.';


--
-- Name: stale_due_at(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.stale_due_at(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, priority tickq.priority, due_at timestamp with time zone, waiting interval)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT k.name, k.priority, k.due_at, p_now - k.due_at
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    -- Waiting while paused is on purpose: a pause that ended counts as due since its end.
    WHERE tickq.kind_claimable(k) AND k.run_id IS NULL
        AND greatest(k.due_at, k.paused_until) <= p_now - s.stale_after
        -- A slot later than the kind's catch_up is skipped by the next claim, not waited for.
        AND NOT (k.catch_up IS NOT NULL AND k.name IN (SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name)))
    ORDER BY k.due_at, k.name
$$;


--
-- Name: FUNCTION stale_due_at(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.stale_due_at(p_now timestamp with time zone) IS 'Kinds due and left unclaimed longer than settings.stale_after as of p_now, longest wait first (an unarmed irreversible kind waits for a person, not a slot: queue_status shows it as unarmed; a paused kind is not stale: it waits on purpose; nor is a kind due later than its catch_up, whose slot the next claim skips).';


--
-- Name: start_run(bigint, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.start_run(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
BEGIN
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    UPDATE tickq.job_run AS r SET started_at = p_now WHERE r.id = p_run_id;
END
$$;


--
-- Name: FUNCTION start_run(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.start_run(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone) IS 'Records that the command of a live run has started (its process exists).';


--
-- Name: sync_agents(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_agents(p_agents jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_old tickq.agent_settings;
    v_new tickq.agent_settings;
    v_agent tickq.agent;
    v_has boolean := coalesce(jsonb_typeof(p_agents), 'null') <> 'null';
BEGIN
    -- A registry that says nothing about agents (no section at all) changes nothing of them: it
    -- may be another host's registry beside one that has [agents], and its dispatcher leaves
    -- agent runs to that one (tickq.claim_jobs). An empty section means the defaults.
    -- Whether the registry the queue is synced with can run agents (tickq.claim_jobs).
    UPDATE tickq.settings AS s SET agents = v_has WHERE s.agents IS DISTINCT FROM v_has;
    IF NOT v_has THEN
        RETURN;
    END IF;
    v_new := tickq.parse_agents(p_agents);
    SELECT * INTO STRICT v_old FROM tickq.agent_settings FOR UPDATE;
    IF (v_new.priority, v_new.max_turns, v_new.max_timeout, v_new.retries, v_new.tools, v_new.weight)
        IS NOT DISTINCT FROM (v_old.priority, v_old.max_turns, v_old.max_timeout, v_old.retries, v_old.tools,
            v_old.weight) THEN
        RETURN;
    END IF;
    UPDATE tickq.agent_settings AS s SET
        priority = v_new.priority, max_turns = v_new.max_turns, max_timeout = v_new.max_timeout,
        retries = v_new.retries, tools = v_new.tools, weight = v_new.weight, updated_at = p_now;
    -- Each agent's kind takes the new lane, retries, weight and (capped) timeout.
    FOR v_agent IN SELECT * FROM tickq.agent AS a ORDER BY a.name LOOP
        PERFORM tickq.apply_agent_kind(v_agent, false, p_now);
    END LOOP;
END
$$;


--
-- Name: FUNCTION sync_agents(p_agents jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_agents(p_agents jsonb, p_now timestamp with time zone) IS 'Called by tickq.sync_registry with the registry''s "agents" object: sets tickq.agent_settings (tickq.parse_agents) and moves every agent''s kind to the new lane, retries and capped timeout. No object (a registry without an [agents] section) changes nothing of them. Records in tickq.settings.agents whether the registry has the section.';


--
-- Name: sync_dispatcher(jsonb, tickq.settings, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_dispatcher(p_registry jsonb, p_settings tickq.settings, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql
    AS $_$
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
$_$;


--
-- Name: FUNCTION sync_dispatcher(p_registry jsonb, p_settings tickq.settings, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_dispatcher(p_registry jsonb, p_settings tickq.settings, p_now timestamp with time zone) IS 'Records the dispatcher named in p_registry (its registry''s fingerprint, the lease its kinds need and whether it has an [agents] section, without which it is leased no agent run) and returns a drift item (field "registry") when another host synced a different registry within three ticks.';


--
-- Name: sync_kind(text, jsonb, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_kind(p_name text, p_entry jsonb, p_timezone text, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_incoming tickq.job_kind := tickq.parse_kind(p_name, p_entry, p_timezone);
    v_stored tickq.job_kind;
    v_in_entry jsonb;
    v_stored_entry jsonb;
    v_new_command boolean;
    v_mirror_intact boolean;
    v_wait text;
    v_drift jsonb := '[]'::jsonb;
BEGIN
    v_in_entry := tickq.registry_entry(v_incoming);
    v_incoming.registry := v_in_entry;
    -- Never waits long on a row another session holds: a claim or report of another dispatcher
    -- lets go within milliseconds, a person's psql left in a transaction may never. Past a
    -- quarter of a second that kind's sync is left for the next tick, returned as a notice (field
    -- "locked"), and the other kinds are synced. The settings row, locked by sync_registry,
    -- keeps two syncs apart.
    SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = p_name FOR UPDATE SKIP LOCKED;
    IF NOT FOUND AND EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.name = p_name) THEN
        v_wait := current_setting('lock_timeout');
        BEGIN
            PERFORM set_config('lock_timeout', CASE WHEN v_wait::interval BETWEEN '1ms' AND '250ms'
                THEN v_wait ELSE '250ms' END, true);
            SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = p_name FOR UPDATE;
            PERFORM set_config('lock_timeout', v_wait, true);
        EXCEPTION WHEN lock_not_available THEN  -- the rollback of this block restores lock_timeout
            RETURN jsonb_build_array(jsonb_build_object('kind', p_name, 'field', 'locked',
                'registry_edit', false));
        END;
    END IF;
    IF v_stored.name IS NULL THEN
        PERFORM tickq.write_kind(v_incoming, false, false, p_now);
        RETURN v_drift;
    END IF;
    v_stored_entry := tickq.registry_entry(v_stored);
    v_mirror_intact := v_stored.registry_digest IS NOT DISTINCT FROM md5(v_stored.registry::text);
    IF v_stored.retired_at IS NOT NULL THEN
        v_drift := jsonb_build_array(jsonb_build_object('kind', p_name, 'field', 'kind',
            'registry_value', v_in_entry, 'registry_edit', true));
    ELSE
        -- An edit of the registry file is a field whose typed column still held what the
        -- previous registry said (its mirror, job_kind.registry); anything else was changed
        -- behind the registry's back. command, cwd, env and ping_url live only in the mirror: an edit when
        -- the mirror is as the last sync wrote it (its digest), else changed behind its back.
        v_drift := coalesce((
            SELECT jsonb_agg(jsonb_build_object('kind', p_name, 'field', f.key,
                'stored_value', v_stored_entry -> f.key, 'registry_value', v_in_entry -> f.key,
                'registry_edit', (NOT f.key IN ('command', 'cwd', 'env', 'ping_url') OR v_mirror_intact)
                    AND (v_stored.registry -> f.key) IS NOT DISTINCT FROM (v_stored_entry -> f.key)))
            FROM (SELECT jsonb_object_keys(v_stored_entry) UNION SELECT jsonb_object_keys(v_in_entry))
                AS f (key)
            WHERE (v_stored_entry -> f.key) IS DISTINCT FROM (v_in_entry -> f.key)), '[]');
        -- The mirror column itself may have been edited: the registry wins there too.
        IF v_stored.registry IS DISTINCT FROM v_in_entry AND v_stored_entry = v_in_entry THEN
            v_drift := v_drift || jsonb_build_object('kind', p_name, 'field', 'registry',
                'stored_value', v_stored.registry, 'registry_value', v_in_entry, 'registry_edit', false);
        END IF;
    END IF;
    -- A new command (or steps, cwd, env) needs a new first run by hand: disarmed, and logged.
    v_new_command := tickq.command_changed(v_stored, v_incoming);
    -- The disarming follows the edit: an edit when the change of command was one.
    IF v_new_command AND v_stored.armed_at IS NOT NULL THEN
        v_drift := v_drift || jsonb_build_object('kind', p_name, 'field', 'armed',
            'stored_value', jsonb_build_object('armed_at', v_stored.armed_at,
                'armed_by', v_stored.armed_by, 'run_id', v_stored.armed_run_id),
            'registry_edit', v_mirror_intact AND v_stored.retired_at IS NULL);
    END IF;
    IF v_stored_entry IS DISTINCT FROM v_in_entry OR v_stored.registry IS DISTINCT FROM v_in_entry
        OR v_stored.retired_at IS NOT NULL THEN
        PERFORM tickq.write_kind(v_incoming, false, v_new_command, p_now);
    END IF;
    RETURN v_drift;
END
$$;


--
-- Name: FUNCTION sync_kind(p_name text, p_entry jsonb, p_timezone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_kind(p_name text, p_entry jsonb, p_timezone text, p_now timestamp with time zone) IS 'Makes the job_kind p_name match its registry entry (inserted, overwritten, or brought back from retirement) and returns the drift found, each item {kind, field, stored_value, registry_value, registry_edit}; a row another session holds locked is left as it is, returned as one item {kind, field "locked"}.';


--
-- Name: sync_kinds(jsonb, text, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_kinds(p_kinds jsonb, p_timezone text, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_name text;
    v_drift jsonb := '[]'::jsonb;
BEGIN
    -- Built-in kinds (tickq.housekeeping) come in p_kinds from tickq.sync_registry; a registry
    -- may not name one of its own so.
    FOR v_name IN SELECT jsonb_object_keys(p_kinds) ORDER BY 1 LOOP
        v_drift := v_drift || tickq.sync_kind(v_name, p_kinds -> v_name, p_timezone, p_now);
    END LOOP;

    -- Kinds gone from the registry: retired (disabled), never deleted, so their history stays.
    -- A row another session holds is left for the next sync, as a notice (field "locked").
    WITH gone AS (
        -- Agent kinds belong to tickq.agent rows, not to the registry file.
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.retired_at IS NULL AND NOT p_kinds ? k.name AND k.name NOT LIKE 'agent.%'
    ), free AS (
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.name IN (SELECT g.name FROM gone AS g) FOR UPDATE SKIP LOCKED
    ), retired AS (
        UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
        WHERE k.name IN (SELECT f.name FROM free AS f)
        RETURNING k.*
    )
    SELECT v_drift || coalesce((SELECT jsonb_agg(jsonb_build_object('kind', r.name, 'field', 'kind',
            'stored_value', tickq.registry_entry(r), 'registry_edit', true) ORDER BY r.name)
        FROM retired AS r), '[]') || coalesce((SELECT jsonb_agg(jsonb_build_object('kind', g.name,
            'field', 'locked', 'registry_edit', false) ORDER BY g.name)
        FROM gone AS g WHERE NOT g.name IN (SELECT f.name FROM free AS f)), '[]')
    INTO v_drift;
    RETURN v_drift;
END
$$;


--
-- Name: FUNCTION sync_kinds(p_kinds jsonb, p_timezone text, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_kinds(p_kinds jsonb, p_timezone text, p_now timestamp with time zone) IS 'Makes the queue''s kinds match p_kinds (name -> registry entry): each synced by tickq.sync_kind, kinds missing from it retired (agents'' kinds excepted), never waiting on a row another session holds (returned as field "locked", left for the next sync). Returns the drift found.';


--
-- Name: sync_pools(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_pools(p_pools jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS jsonb
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


--
-- Name: FUNCTION sync_pools(p_pools jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_pools(p_pools jsonb, p_now timestamp with time zone) IS 'Makes tickq.pool and tickq.pool_slot match the registry''s "pools" object: slots set, rows 1..slots kept, free rows past the limit dropped, a pool gone from the registry drained (slots 0) and deleted once no run holds its rows. Returns the drift items (field "pools.NAME.slots").';


--
-- Name: sync_queue_registry(jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_queue_registry(p_registry jsonb, p_kinds jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS void
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


--
-- Name: FUNCTION sync_queue_registry(p_registry jsonb, p_kinds jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_queue_registry(p_registry jsonb, p_kinds jsonb, p_now timestamp with time zone) IS 'Part of tickq.sync_registry: records p_registry''s "source" ({path, resolved, host}: the file as given and with links followed) and its settings.project as the registry of this queue, and refuses (TQ090) a sync tickq.queue_registry_problem refuses (another project''s that would retire kinds of p_kinds'' queue, unless "replace_queue": true). A JSON without a source changes nothing.';


--
-- Name: sync_registry(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_registry(p_registry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, field text, stored_value jsonb, registry_value jsonb, registry_edit boolean, changed text[], unit text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
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
    IF jsonb_typeof(p_registry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', 'the registry must be a JSON object');
    END IF;
    IF jsonb_typeof(v_settings) <> 'object' OR jsonb_typeof(v_kinds) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', '"settings" and "kinds" must be objects');
    END IF;
    -- The registry the queue last synced, from the file it was synced from, and nothing written
    -- behind its back since (the triggers of migration 0024 forget the digest): nothing to do,
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


--
-- Name: FUNCTION sync_registry(p_registry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_registry(p_registry jsonb, p_now timestamp with time zone) IS 'Makes the queue match the registry (JSON, durations in seconds): the settings, the kinds (retiring those that left it), the agents'' caps, the lease (longest timeout + lease_margin), the dispatcher''s record, the slots and the pools; writes nothing when tickq.queue_registry holds this registry''s digest (synced last, nothing written behind its back since). The registry wins on every field; each difference is recorded in tickq.drift and returned classified: registry_edit (an edit of the registry file, not a row changed behind its back), changed (the env names whose values differ), unit (''s'' for a duration in seconds). A kind whose row another session holds locked is not waited on: it is returned as field "locked" (not recorded) and synced by a later call.';


--
-- Name: sync_slots(integer); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.sync_slots(p_slots integer) RETURNS void
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


--
-- Name: FUNCTION sync_slots(p_slots integer); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.sync_slots(p_slots integer) IS 'Makes the slot rows 1..p_slots exist; free slots past p_slots are dropped.';


--
-- Name: take_alerts(timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.take_alerts(p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(alert_id bigint, kind text, event text, condition tickq.alert_condition, failure_streak integer, last_outcome tickq.outcome, output_tail text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
#variable_conflict use_column
BEGIN
    -- Raise: an open row per (kind, condition) is unique, so of two dispatchers looking at once
    -- exactly one inserts it and gets the event. Clear: the UPDATE re-checks cleared_at under the
    -- row lock, so exactly one gets the recovery.
    RETURN QUERY
    WITH wanted AS (
        SELECT k.name AS kind, 'failing'::tickq.alert_condition AS condition, k.failure_streak
        FROM tickq.job_kind AS k CROSS JOIN tickq.settings AS s
        WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after
        UNION ALL
        SELECT st.kind, 'stale', k.failure_streak
        FROM tickq.stale_due_at(p_now) AS st
        INNER JOIN tickq.job_kind AS k ON k.name = st.kind
    ),
    raised AS (
        INSERT INTO tickq.alert AS a (kind, condition, raised_at, failure_streak)
        SELECT w.kind, w.condition, p_now, w.failure_streak FROM wanted AS w
        ON CONFLICT (kind, condition) WHERE cleared_at IS NULL DO NOTHING
        RETURNING a.id, a.kind, a.condition
    ),
    cleared AS (
        UPDATE tickq.alert AS a SET cleared_at = p_now
        WHERE a.cleared_at IS NULL
            AND NOT EXISTS (SELECT FROM wanted AS w WHERE w.kind = a.kind AND w.condition = a.condition)
        RETURNING a.id, a.kind, a.condition
    ),
    events AS (
        SELECT r.id, r.kind, r.condition::text AS event, r.condition FROM raised AS r
        UNION ALL
        SELECT c.id, c.kind, 'recovered', c.condition FROM cleared AS c
    )
    SELECT e.id, e.kind, e.event, e.condition, k.failure_streak::integer, last_run.outcome, last_run.output_tail::text
    FROM events AS e
    INNER JOIN tickq.job_kind AS k ON k.name = e.kind
    LEFT JOIN tickq.job_run AS last_run ON last_run.id = k.last_run_id
    ORDER BY e.id;
END
$$;


--
-- Name: FUNCTION take_alerts(p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.take_alerts(p_now timestamp with time zone) IS 'Alert bookkeeping: returns each event to send now, once across all dispatchers: failing (the streak reached settings.alert_after), stale (due and unclaimed past stale_after), and recovered (either condition ended), with the kind''s streak and last run.';


--
-- Name: tick_lateness(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.tick_lateness(p_registry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(kind text, key text, timezone text, tick interval, grain integer, late_by interval, slot_time time without time zone, runs_time time without time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
DECLARE
    v_tick integer := CASE WHEN jsonb_typeof(p_registry -> 'settings' -> 'tick') = 'number'
        THEN (p_registry -> 'settings' ->> 'tick')::numeric::integer ELSE 300 END;
    v_zone text := coalesce(p_registry -> 'settings' ->> 'timezone', 'UTC');
    v_entry record;
    v_slot record;
    v_late integer;
BEGIN
    -- A slot runs at the first tick at or after it. A tick that does not divide an hour counts
    -- from the timer's start: no slot is known late, and no row is returned.
    IF v_tick NOT BETWEEN 1 AND 3600 OR 3600 % v_tick <> 0 THEN
        RETURN;
    END IF;
    tick := make_interval(secs => v_tick);
    FOR v_entry IN SELECT e.key AS name, e.value AS entry
        FROM jsonb_each(coalesce(p_registry -> 'kinds', '{}'::jsonb)) AS e ORDER BY e.key LOOP
        kind := v_entry.name;
        key := CASE WHEN v_entry.entry ? 'cron' THEN 'cron' WHEN v_entry.entry ? 'every' THEN 'every'
            ELSE 'at' END;
        -- An every cadence has no zone of its own: the ticks' is the machine's, which the
        -- registry's timezone stands for.
        timezone := CASE WHEN key = 'every' THEN v_zone ELSE coalesce(v_entry.entry ->> 'timezone', v_zone) END;
        grain := NULL;
        late_by := '0'::interval;
        slot_time := NULL;
        runs_time := NULL;
        FOR v_slot IN SELECT * FROM tickq.slot_seconds(v_entry.entry, timezone, p_now) LOOP
            grain := gcd(coalesce(grain, 3600), v_slot.second);
            v_late := (v_tick - v_slot.second % v_tick) % v_tick;
            IF make_interval(secs => v_late) > late_by THEN
                late_by := make_interval(secs => v_late);
                slot_time := make_time(v_slot.hour, v_slot.second / 60, v_slot.second % 60);
                runs_time := slot_time + late_by;
            END IF;
        END LOOP;
        IF grain IS NOT NULL THEN  -- else the schedule does not read: registry_problems' to say
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;


--
-- Name: FUNCTION tick_lateness(p_registry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.tick_lateness(p_registry jsonb, p_now timestamp with time zone) IS 'Per kind of a registry (the JSON sync sends) whose schedule reads: how late the registry''s tick runs its slots at most (late_by: the first time of day it runs that late, slot_time, runs at runs_time, in the kind''s zone), and grain, the largest number of seconds dividing an hour that divides every slot''s seconds past the hour (tickq.slot_seconds). Ticks fall on the clock when the tick divides an hour; for any other tick nothing is known late and no row is returned. A kind whose schedule does not read has no row.';


--
-- Name: tick_on_time(jsonb, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.tick_on_time(p_registry jsonb, p_now timestamp with time zone DEFAULT now()) RETURNS interval
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    SELECT tickq.on_time_tick(coalesce((p_registry -> 'settings' ->> 'tick')::numeric, 300)::integer,
        ARRAY(SELECT l.grain FROM tickq.tick_lateness(p_registry, p_now) AS l))
$$;


--
-- Name: FUNCTION tick_on_time(p_registry jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.tick_on_time(p_registry jsonb, p_now timestamp with time zone) IS 'The tick that keeps every slot of a registry (the JSON sync sends) on time: the largest tick, no longer than the registry''s, that divides an hour and every slot''s seconds past the hour (tickq.tick_lateness, tickq.on_time_tick); the registry''s own tick when none of its slots falls between ticks, NULL for a tick that does not divide an hour.';


--
-- Name: ticks_held(tickq.job_kind, jsonb, interval); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.ticks_held(p_kind tickq.job_kind, p_durations jsonb, p_tick interval) RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT greatest(1,
        ceil(extract(EPOCH FROM tickq.simulated_hold(p_kind, p_durations)) / extract(EPOCH FROM p_tick)))::integer
$$;


--
-- Name: FUNCTION ticks_held(p_kind tickq.job_kind, p_durations jsonb, p_tick interval); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.ticks_held(p_kind tickq.job_kind, p_durations jsonb, p_tick interval) IS 'Internal to spread_offsets: how many whole ticks a run of the kind holds its slot (at least one), as tickq.simulated_hold counts it.';


--
-- Name: unknown_zone(jsonb); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.unknown_zone(p_value jsonb) RETURNS text
    LANGUAGE sql STABLE
    AS $_$
    WITH wanted AS (
        SELECT lower(p_value #>> '{}') AS zone
        WHERE jsonb_typeof(p_value) = 'string' AND (p_value #>> '{}') !~ '[+-][0-9]'
            AND length(p_value #>> '{}') BETWEEN 3 AND 80
    ), pairs AS (
        SELECT DISTINCT substr(w.zone, i.n, 2) AS pair
        FROM wanted AS w CROSS JOIN generate_series(1, length(w.zone) - 1) AS i (n)
    ), scored AS (
        SELECT z.name, max(2.0 * c.common / (c.total + (SELECT count(*) FROM pairs))) AS score
        FROM pg_timezone_names AS z
        -- the whole name, and its place: the part after the last /
        CROSS JOIN LATERAL (VALUES (lower(z.name)), (lower(substring(z.name FROM '[^/]+$')))) AS t (text)
        CROSS JOIN LATERAL (
            SELECT count(*) AS total, count(*) FILTER (WHERE g.pair IN (SELECT p.pair FROM pairs AS p)) AS common
            FROM (SELECT DISTINCT substr(t.text, i.n, 2) AS pair
                FROM generate_series(1, length(t.text) - 1) AS i (n)) AS g
        ) AS c
        WHERE EXISTS (SELECT FROM wanted) AND z.name !~ '^(posix|right)/'
            AND tickq.legacy_zone_problem(z.name) IS NULL
        GROUP BY z.name
    )
    SELECT format('unknown time zone %s', left(p_value::text, 200)) || coalesce(
        -- only a name tickq takes, and never the value itself (the system's zone files may hold
        -- names such as "localtime" that PostgreSQL lists but tickq refuses)
        (SELECT format('; did you mean "%s"?', s.name) FROM scored AS s
            WHERE s.score >= 0.6 AND lower(s.name) <> lower(p_value #>> '{}') AND tickq.is_timezone(s.name)
            ORDER BY s.score DESC, s.name LIMIT 1),
        ' (use an IANA name spelled as in the zone database, such as Europe/London)')
$_$;


--
-- Name: FUNCTION unknown_zone(p_value jsonb); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.unknown_zone(p_value jsonb) IS 'The registry''s message for a zone value PostgreSQL does not know: the nearest zone name when one is close (a typo), else how a zone is spelled.';


--
-- Name: upcoming_at(numeric, integer, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.upcoming_at(p_hours numeric DEFAULT 24, p_limit integer DEFAULT 100, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(due_at timestamp with time zone, kind text, priority tickq.priority, trigger tickq.run_trigger, schedule text, held text, paused_until timestamp with time zone, total integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'tickq', 'pg_temp'
    AS $$
    -- What falls due next, in order, as claim_jobs will take it: each enabled kind's due time (a
    -- retry, a merged late slot or the next slot; for a kind paused until a time, that time,
    -- when the missed slots run as one), then the slots after it from tickq.next_slot, the one
    -- schedule rule. An every cadence repeats exactly after its first slot, so its later slots
    -- are counted on from there; a calendar asks next_slot for each. The first p_limit runs and
    -- each kind's next run are listed, total counts every run in the window. A kind no claim will take (unarmed irreversible, paused
    -- until resumed) is one row after them with held saying why and no due time.
    WITH RECURSIVE kinds AS (
        SELECT k.name, k.priority, k.next_trigger, k.every, k.every_offset, k.at_times,
            k.on_days, k.days, k.months, k.cron, k.timezone, p.paused_until,
            greatest(k.due_at, p.paused_until) AS first,
            tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
                greatest(k.due_at, p.paused_until, p_now))
                AS second
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.paused_until > p_now THEN k.paused_until END AS paused_until
        ) AS p
        WHERE tickq.kind_claimable(k) AND k.retired_at IS NULL AND k.run_id IS NULL
            AND coalesce(p.paused_until, '-infinity') < 'infinity'
            AND greatest(k.due_at, p.paused_until) <= p_now + p_hours * interval '1 hour'
    ),
    calendar AS (
        SELECT ki.name, ki.second AS at, ki.at_times, ki.on_days, ki.days, ki.months, ki.cron, ki.timezone
        FROM kinds AS ki
        WHERE ki.every IS NULL AND ki.second <= p_now + p_hours * interval '1 hour'
        UNION ALL
        SELECT c.name, tickq.next_slot(NULL, NULL, c.at_times, c.on_days, c.days, c.months, c.cron, c.timezone, c.at),
            c.at_times, c.on_days, c.days, c.months, c.cron, c.timezone
        FROM calendar AS c
        WHERE c.at <= p_now + p_hours * interval '1 hour'
    ),
    slots AS (
        SELECT ki.name, ki.first AS at, ki.next_trigger AS trigger,
            CASE WHEN ki.paused_until = ki.first THEN ki.paused_until END AS paused_until
        FROM kinds AS ki
        UNION ALL
        SELECT ki.name, ki.second + g.n * ki.every, 'schedule'::tickq.run_trigger, NULL
        FROM kinds AS ki
        CROSS JOIN LATERAL generate_series(0, least(p_limit - 2,
            floor(extract(EPOCH FROM p_now + p_hours * interval '1 hour' - ki.second)
                / extract(EPOCH FROM ki.every))::integer)) AS g (n)
        WHERE ki.every IS NOT NULL
        UNION ALL
        SELECT c.name, c.at, 'schedule'::tickq.run_trigger, NULL FROM calendar AS c
    ),
    counted AS (
        -- Every runs past the generated ones are counted, not listed.
        SELECT (SELECT count(*) FROM slots AS sl WHERE sl.at <= p_now + p_hours * interval '1 hour')
            + coalesce((SELECT sum(greatest(0, floor(extract(EPOCH FROM
                p_now + p_hours * interval '1 hour' - ki.second) / extract(EPOCH FROM ki.every)) + 1
                - greatest(0, p_limit - 1)))
                FROM kinds AS ki WHERE ki.every IS NOT NULL), 0) AS total
    ),
    ranked AS (
        SELECT sl.at, k.name, k.priority, sl.trigger,
            CASE WHEN sl.paused_until IS NOT NULL THEN 'paused' END AS held, sl.paused_until,
            row_number() OVER (ORDER BY sl.at, k.priority, k.name) AS n,
            row_number() OVER (PARTITION BY k.name ORDER BY sl.at) AS nth
        FROM slots AS sl
        INNER JOIN kinds AS k ON sl.name = k.name
        WHERE sl.at <= p_now + p_hours * interval '1 hour'
    ),
    listed AS (
        -- The first p_limit runs, and each kind's next run even past them: a kind due every
        -- minute must not hide when a daily one (an agent's) runs next.
        SELECT r.at, r.name, r.priority, r.trigger, r.held, r.paused_until
        FROM ranked AS r
        WHERE r.n <= p_limit OR r.nth = 1
    ),
    held AS (
        SELECT NULL::timestamptz AS at, k.name, k.priority, k.next_trigger AS trigger,
            CASE WHEN k.irreversible AND k.armed_at IS NULL THEN 'unarmed' ELSE 'paused' END AS held,
            NULL::timestamptz AS paused_until
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.retired_at IS NULL AND k.run_id IS NULL
            AND ((k.irreversible AND k.armed_at IS NULL) OR k.paused_until = 'infinity')
    )
    SELECT u.at, u.name, u.priority, u.trigger,
        tickq.describe_schedule(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, p_now),
        u.held, u.paused_until, (SELECT c.total::integer FROM counted AS c)
    FROM (SELECT * FROM listed UNION ALL SELECT * FROM held) AS u
    INNER JOIN tickq.job_kind AS k ON u.name = k.name
    ORDER BY u.at NULLS LAST, u.priority, u.name
$$;


--
-- Name: FUNCTION upcoming_at(p_hours numeric, p_limit integer, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.upcoming_at(p_hours numeric, p_limit integer, p_now timestamp with time zone) IS 'The next p_limit runs due within p_hours of p_now (and each kind''s next run past them), in order, as claims will take them: each enabled, unleased kind''s due time (a kind paused until a time: that time, held = paused), then its following slots from tickq.next_slot (correct across daylight-saving changes); total counts every run in the window, listed or not. After them one row per kind no claim will take, with no due time and held = unarmed (an irreversible kind no person has run) or paused (until resumed).';


--
-- Name: weekday_name(smallint); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.weekday_name(p_day smallint) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    -- ISO 1..7 as mon..sun, 10 * n + day as "1st mon".."5th sun", 90 + day as "last fri".
    SELECT CASE WHEN p_day BETWEEN 91 AND 97 THEN 'last '
            WHEN p_day > 10 THEN (ARRAY['1st', '2nd', '3rd', '4th', '5th'])[p_day / 10] || ' '
            ELSE '' END
        || (ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[p_day % 10]
$$;


--
-- Name: FUNCTION weekday_name(p_day smallint); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.weekday_name(p_day smallint) IS 'A weekday of on_days as the registry writes it: "mon", "1st mon", "last fri".';


--
-- Name: weight_problems(jsonb, integer); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.weight_problems(p_registry jsonb, p_slots integer) RETURNS TABLE(kind text, key text, problem text)
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


--
-- Name: FUNCTION weight_problems(p_registry jsonb, p_slots integer); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.weight_problems(p_registry jsonb, p_slots integer) IS 'The rules between keys of p_registry: a kind''s weight (key weight) and [agents] weight at most p_slots (settings.slots), and each pool a kind names (key pools) one of the registry''s [pools]. One row per problem; changes nothing.';


--
-- Name: window_runs(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.window_runs(p_since timestamp with time zone, p_now timestamp with time zone DEFAULT now()) RETURNS SETOF tickq.job_run
    LANGUAGE sql STABLE
    AS $$
    SELECT r.* FROM tickq.job_run AS r
    WHERE r.finished_at >= p_since AND r.finished_at IS NOT NULL AND r.claimed_at <= p_now
    UNION ALL
    -- A live run is the one its kind's lease points at (job_kind.run_id; migration 0007
    -- dropped the index of running runs): the kinds, never a scan of the history.
    SELECT r.* FROM tickq.job_kind AS k
    INNER JOIN tickq.job_run AS r ON k.run_id = r.id
    WHERE k.run_id IS NOT NULL AND r.outcome = 'running' AND r.claimed_at <= p_now
$$;


--
-- Name: FUNCTION window_runs(p_since timestamp with time zone, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.window_runs(p_since timestamp with time zone, p_now timestamp with time zone) IS 'The runs that overlap (p_since, p_now]: finished in it (an index range), or still running (the runs the kinds'' leases point at). Never a scan of the history.';


--
-- Name: write_kind(tickq.job_kind, boolean, boolean, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.write_kind(p_kind tickq.job_kind, p_reschedule boolean, p_new_command boolean, p_now timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_next timestamptz := tickq.next_slot(p_kind.every, p_kind.every_offset, p_kind.at_times,
        p_kind.on_days, p_kind.days, p_kind.months, p_kind.cron, p_kind.timezone, p_now);
BEGIN
    INSERT INTO tickq.job_kind AS k (
        name, registry, registry_digest, every, every_offset, at_times, on_days, days, months, cron,
        timezone, timeout, priority, retries, enabled, irreversible, weight, pools, command_since, due_at,
        created_at, updated_at, catch_up
    ) VALUES (
        p_kind.name, p_kind.registry, md5(p_kind.registry::text), p_kind.every, p_kind.every_offset,
        p_kind.at_times, p_kind.on_days, p_kind.days, p_kind.months, p_kind.cron, p_kind.timezone,
        p_kind.timeout, p_kind.priority, p_kind.retries,
        p_kind.enabled, coalesce(p_kind.irreversible, false), coalesce(p_kind.weight, 1),
        coalesce(p_kind.pools, '{}'), p_now,
        -- New to the queue: as its first_run says, else an every cadence is due at once and a
        -- calendar one at its next slot.
        CASE p_kind.registry ->> 'first_run' WHEN 'now' THEN p_now WHEN 'next_slot' THEN v_next
            ELSE CASE WHEN p_kind.every IS NOT NULL THEN p_now ELSE v_next END END,
        p_now, p_now, p_kind.catch_up
    )
    ON CONFLICT (name) DO UPDATE SET
        registry = excluded.registry,
        registry_digest = excluded.registry_digest,
        every = excluded.every,
        every_offset = excluded.every_offset,
        at_times = excluded.at_times,
        on_days = excluded.on_days,
        days = excluded.days,
        months = excluded.months,
        cron = excluded.cron,
        timezone = excluded.timezone,
        timeout = excluded.timeout,
        priority = excluded.priority,
        retries = excluded.retries,
        catch_up = excluded.catch_up,
        enabled = excluded.enabled,
        irreversible = excluded.irreversible,
        weight = excluded.weight,
        pools = excluded.pools,
        -- A new command (or steps, cwd, env) needs a new first run by hand: disarmed.
        command_since = CASE WHEN p_new_command THEN p_now ELSE k.command_since END,
        armed_at = CASE WHEN p_new_command THEN NULL ELSE k.armed_at END,
        armed_by = CASE WHEN p_new_command THEN NULL ELSE k.armed_by END,
        armed_run_id = CASE WHEN p_new_command THEN NULL ELSE k.armed_run_id END,
        retired_at = NULL,
        -- A retired kind coming back starts afresh; p_reschedule moves it to its next slot after
        -- now (a resumed agent does not catch up); otherwise a changed schedule takes effect at
        -- once, unless the kind is already due sooner.
        due_at = CASE
            WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN excluded.due_at
            WHEN p_reschedule THEN v_next
            WHEN (k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone)
                IS NOT DISTINCT FROM (excluded.every, excluded.every_offset, excluded.at_times,
                    excluded.on_days, excluded.days, excluded.months, excluded.cron, excluded.timezone)
                THEN k.due_at
            ELSE least(k.due_at, v_next)
        END,
        attempts = CASE WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN 0 ELSE k.attempts END,
        next_trigger = CASE WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN 'schedule'
            ELSE k.next_trigger END,
        updated_at = p_now;
END
$$;


--
-- Name: FUNCTION write_kind(p_kind tickq.job_kind, p_reschedule boolean, p_new_command boolean, p_now timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.write_kind(p_kind tickq.job_kind, p_reschedule boolean, p_new_command boolean, p_now timestamp with time zone) IS 'The one writer of a job_kind row (registry kinds and agents'' kinds): inserts it (due as its first_run says: now, or next_slot; without one an every cadence at once, a calendar one at its next slot) or overwrites it, un-retiring it; p_reschedule moves it to its next slot after p_now, p_new_command disarms it.';


--
-- Name: zone_steady(text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: tickq; Owner: -
--

CREATE FUNCTION tickq.zone_steady(p_zone text, p_from timestamp with time zone, p_until timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    -- Read at every whole hour of UTC: a change of offset, wherever it falls, differs between two
    -- of them (no zone changes and changes back within an hour).
    SELECT p_zone = 'UTC' OR (
        SELECT count(DISTINCT (h.at AT TIME ZONE p_zone) - (h.at AT TIME ZONE 'UTC')) = 1
        FROM generate_series(date_trunc('hour', p_from), p_until + interval '1 hour', interval '1 hour') AS h (at))
$$;


--
-- Name: FUNCTION zone_steady(p_zone text, p_from timestamp with time zone, p_until timestamp with time zone); Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON FUNCTION tickq.zone_steady(p_zone text, p_from timestamp with time zone, p_until timestamp with time zone) IS 'True when the IANA zone p_zone keeps one UTC offset from p_from through p_until (UTC always).';


--
-- Name: agent_id_seq; Type: SEQUENCE; Schema: tickq; Owner: -
--

ALTER TABLE tickq.agent ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tickq.agent_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: agent_turn; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.agent_turn (
    run_id bigint NOT NULL,
    turn integer NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    entry tickq.agent_turn_entry NOT NULL,
    CONSTRAINT agent_turn_number CHECK (((turn >= 1) AND tickq.within_limit('agents.max_turns'::text, (turn)::numeric)))
);


--
-- Name: TABLE agent_turn; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.agent_turn IS 'The transcript of agent runs: per turn the request summary, the tool calls with their arguments and output tails, the answer and the token counts the server reported. At most six turns of 32 KiB per run; pruned with the run by housekeeping.';


--
-- Name: alert; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.alert (
    id bigint NOT NULL,
    kind text NOT NULL,
    condition tickq.alert_condition NOT NULL,
    raised_at timestamp with time zone NOT NULL,
    cleared_at timestamp with time zone,
    failure_streak integer NOT NULL,
    CONSTRAINT cleared_after_raised CHECK (((cleared_at IS NULL) OR (cleared_at >= raised_at)))
);


--
-- Name: TABLE alert; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.alert IS 'One row per episode of a condition on a kind: raised once when it starts, cleared once when it recovers. The open row is unique per kind and condition, so however many dispatchers look, an episode alerts once when raised and once when cleared.';


--
-- Name: alert_id_seq; Type: SEQUENCE; Schema: tickq; Owner: -
--

ALTER TABLE tickq.alert ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tickq.alert_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: api_checksum; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.api_checksum (
    id boolean DEFAULT true NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT api_checksum_id_check CHECK (id)
);


--
-- Name: TABLE api_checksum; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.api_checksum IS 'sha256 of the sql/api/*.sql files last applied (one row); written by tickq.db.migrate.';


--
-- Name: capacity; Type: VIEW; Schema: tickq; Owner: -
--

CREATE VIEW tickq.capacity AS
 SELECT kind,
    priority,
    schedule,
    runs_per_tick,
    expected_duration,
    duration_source,
    slot_share
   FROM tickq.capacity_at(now()) capacity_at(kind, priority, schedule, runs_per_tick, expected_duration, duration_source, slot_share);


--
-- Name: VIEW capacity; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON VIEW tickq.capacity IS 'Per enabled kind: runs per tick, expected duration, and share of one slot. The sum of the shares must stay at or below slots * (1 - capacity_margin): see tickq.capacity_total_at.';


--
-- Name: dispatcher; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.dispatcher (
    name text NOT NULL,
    fingerprint text NOT NULL,
    lease interval NOT NULL,
    synced_at timestamp with time zone NOT NULL,
    agents boolean DEFAULT true NOT NULL,
    CONSTRAINT dispatcher_lease_positive CHECK ((lease > '00:00:00'::interval))
);


--
-- Name: TABLE dispatcher; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.dispatcher IS 'One row per dispatcher name (host:pid) that synced a registry lately: fingerprint (sha256 of the registry JSON it sent), lease (its longest timeout plus its lease_margin: claims it makes are leased at least this long), synced_at. Written by tickq.sync_registry, which also prunes it.';


--
-- Name: COLUMN dispatcher.agents; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.dispatcher.agents IS 'Whether the registry this dispatcher last synced has an [agents] section: only then does tickq.claim_jobs lease it agent runs (kinds agent.NAME).';


--
-- Name: dispatcher_poll; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.dispatcher_poll (
    name text NOT NULL,
    polled_at timestamp with time zone NOT NULL
);


--
-- Name: TABLE dispatcher_poll; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.dispatcher_poll IS 'When each dispatcher (host:pid) last asked for cancels of the runs it holds (written by tickq.cancels_requested every few seconds while it runs commands); pruned after 8 days by tickq.sync_registry, as the dispatcher rows are.';


--
-- Name: dispatcher_tick; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.dispatcher_tick (
    host text NOT NULL,
    dispatcher text NOT NULL,
    last_tick_at timestamp with time zone NOT NULL
);


--
-- Name: TABLE dispatcher_tick; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.dispatcher_tick IS 'The last tick that ended on each host (written by tickq.record_tick): a timer that stopped firing shows in tickq.health_problems. One row per host, since every tick is a new process.';


--
-- Name: drift; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.drift (
    id bigint NOT NULL,
    kind text,
    field text NOT NULL,
    stored_value jsonb,
    registry_value jsonb,
    detected_at timestamp with time zone NOT NULL
);


--
-- Name: TABLE drift; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.drift IS 'Each difference tickq.sync_registry found between a stored row and the registry file, which won. kind is null for settings. field "kind" with a null registry_value: the kind left the registry and was retired; with a null stored_value: a retired kind came back.';


--
-- Name: drift_id_seq; Type: SEQUENCE; Schema: tickq; Owner: -
--

ALTER TABLE tickq.drift ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tickq.drift_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: job_run_id_seq; Type: SEQUENCE; Schema: tickq; Owner: -
--

ALTER TABLE tickq.job_run ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tickq.job_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: job_step; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.job_step (
    run_id bigint NOT NULL,
    n integer NOT NULL,
    name text NOT NULL,
    outcome tickq.outcome NOT NULL,
    exit_code integer,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    output_tail tickq.output_tail,
    CONSTRAINT step_finishes_after_start CHECK ((finished_at >= started_at)),
    CONSTRAINT step_number_positive CHECK ((n >= 1)),
    CONSTRAINT step_outcome_final CHECK ((outcome <> ALL (ARRAY['running'::tickq.outcome, 'lost'::tickq.outcome])))
);


--
-- Name: TABLE job_step; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.job_step IS 'One row per step a chain''s run executed, written by tickq.report_step: outcome, exit code, start and finish, and the last 64 KiB of its output. Steps a run did not execute have no row.';


--
-- Name: migration; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.migration (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: TABLE migration; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.migration IS 'One row per applied sql/migrations/NNNN_name.sql file; written by tickq.db.migrate.';


--
-- Name: pool; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.pool (
    name text NOT NULL,
    slots integer NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT pool_name_format CHECK ((name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'::text)),
    CONSTRAINT pool_slots_not_negative CHECK ((slots >= 0))
);


--
-- Name: TABLE pool; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.pool IS 'The registry''s [pools.NAME] tables: slots is how many runs of the kinds naming the pool go on at once (1: mutual exclusion). Kept by tickq.sync_pools; a pool gone from the registry is deleted once no run holds its rows (slots 0 until then).';


--
-- Name: pool_occupancy; Type: VIEW; Schema: tickq; Owner: -
--

CREATE VIEW tickq.pool_occupancy AS
 SELECT pool,
    slots,
    busy,
    free,
    holders,
    kinds,
    waiting
   FROM tickq.pool_occupancy_at(now()) pool_occupancy_at(pool, slots, busy, free, holders, kinds, waiting);


--
-- Name: VIEW pool_occupancy; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON VIEW tickq.pool_occupancy IS 'Each pool, now: slots, busy, free, the runs holding it, the kinds naming it and how many of them wait. A pool of slots = 1 is a mutual exclusion: its one holder is who keeps the others out.';


--
-- Name: pool_slot; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.pool_slot (
    pool text NOT NULL,
    n integer NOT NULL,
    run_id bigint,
    leased_until timestamp with time zone,
    CONSTRAINT pool_slot_number_positive CHECK ((n >= 1))
)
WITH (fillfactor='50');


--
-- Name: TABLE pool_slot; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.pool_slot IS 'One row per slot of a pool (tickq.pool.slots of them, kept by tickq.sync_pools). run_id is the live run holding it, or null when free; leased_until a copy of its lease. A claim takes one free row of each pool its kind names with FOR UPDATE SKIP LOCKED; a report or an expired lease frees it.';


--
-- Name: COLUMN pool_slot.run_id; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.pool_slot.run_id IS 'The live run holding this pool slot, or null when free.';


--
-- Name: COLUMN pool_slot.leased_until; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.pool_slot.leased_until IS 'When the lease of the run in this pool slot expires.';


--
-- Name: queue_status; Type: VIEW; Schema: tickq; Owner: -
--

CREATE VIEW tickq.queue_status AS
 SELECT kind,
    priority,
    schedule,
    state,
    due,
    running,
    due_at,
    next_due_at,
    run_id,
    leased_by,
    leased_until,
    attempts,
    failure_streak,
    last_outcome,
    last_finished_at,
    last_duration,
    irreversible,
    armed_at,
    armed_by,
    steps,
    paused_until,
    paused_reason,
    paused_by,
    streak_outcome,
    weight,
    pools
   FROM tickq.queue_status_at(now()) queue_status_at(kind, priority, schedule, state, due, running, due_at, next_due_at, run_id, leased_by, leased_until, attempts, failure_streak, last_outcome, last_finished_at, last_duration, irreversible, armed_at, armed_by, steps, paused_until, paused_reason, paused_by, streak_outcome, weight, pools);


--
-- Name: VIEW queue_status; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON VIEW tickq.queue_status IS 'One row per kind, now: due or not, running or not, last outcome and finish, failure streak, next due, weight and pools.';


--
-- Name: run_count; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.run_count (
    kind text NOT NULL,
    runs bigint[] DEFAULT '{0,0,0,0,0,0,0,0}'::bigint[] NOT NULL,
    merged_slots bigint DEFAULT 0 NOT NULL,
    timed_runs bigint DEFAULT 0 NOT NULL,
    seconds numeric DEFAULT 0 NOT NULL,
    buckets bigint[] DEFAULT '{0,0,0,0,0,0,0,0,0}'::bigint[] NOT NULL,
    last_ok timestamp with time zone
);


--
-- Name: TABLE run_count; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.run_count IS 'Every run that ended, per kind, kept or pruned: how many by outcome (the enum''s order), the slots merged into them, how many had a duration and their seconds, the cumulative counts per bound of metrics_buckets(), the last finish of one that ended ok. Kept by the triggers run_counted and run_counted_insert as runs end; what tickq.metrics_text prints.';


--
-- Name: run_total; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.run_total (
    kind text NOT NULL,
    outcome tickq.outcome NOT NULL,
    runs bigint DEFAULT 0 NOT NULL,
    merged_slots bigint DEFAULT 0 NOT NULL,
    timed_runs bigint DEFAULT 0 NOT NULL,
    seconds double precision DEFAULT 0 NOT NULL,
    buckets bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    last_finished_at timestamp with time zone
);


--
-- Name: TABLE run_total; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.run_total IS 'Runs pruned from job_run by housekeeping, per kind and outcome: how many, the slots merged into them, how many had a duration and their seconds, the cumulative counts per bound of metrics_buckets(), the last finish. tickq.metrics_text adds the runs still in job_run.';


--
-- Name: slot; Type: TABLE; Schema: tickq; Owner: -
--

CREATE TABLE tickq.slot (
    n tickq.slot_number NOT NULL,
    run_id bigint,
    leased_until timestamp with time zone
)
WITH (fillfactor='50');


--
-- Name: TABLE slot; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON TABLE tickq.slot IS 'One row per slot (settings.slots of them, kept by tickq.sync_registry). run_id is the live run holding the slot, or null when free. Claims take free rows with FOR UPDATE SKIP LOCKED; a report or an expired lease frees the row.';


--
-- Name: COLUMN slot.leased_until; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON COLUMN tickq.slot.leased_until IS 'When the lease of the run in this slot expires: a copy of job_kind.leased_until, written with it, so claims find expired leases among the slot rows.';


--
-- Name: stale_due; Type: VIEW; Schema: tickq; Owner: -
--

CREATE VIEW tickq.stale_due AS
 SELECT kind,
    priority,
    due_at,
    waiting
   FROM tickq.stale_due_at(now()) stale_due_at(kind, priority, due_at, waiting);


--
-- Name: VIEW stale_due; Type: COMMENT; Schema: tickq; Owner: -
--

COMMENT ON VIEW tickq.stale_due IS 'Kinds due and left unclaimed longer than the stale threshold (default 15 minutes): a slot shortage or a starving lane. Every tick logs one warning per row.';


--
-- Data for Name: agent; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.agent OVERRIDING SYSTEM VALUE VALUES (1, 'brief', 'Summarise.', NULL, '{07:30:00}', NULL, 'UTC', 6, '00:10:00', NULL, '{search_crm}', false, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', NULL, NULL, NULL);


--
-- Data for Name: agent_settings; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.agent_settings VALUES (true, 'normal', 6, '00:10:00', 0, '{search_crm}', '2026-12-01 08:00:00+00', 1);


--
-- Data for Name: agent_turn; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: alert; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: api_checksum; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.api_checksum VALUES (true, '69383a982a31cc1ef1e305d95cb138aadd3783062e3c9fe849ed87eeed05871c', '2026-12-07 13:09:47.512499+00');


--
-- Data for Name: dispatcher; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: dispatcher_poll; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: dispatcher_tick; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: drift; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: job_kind; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.job_kind VALUES ('report', '{"at": ["06:00"], "on": ["mon", "fri"], "pools": ["db"], "weight": 2, "command": ["bin/report"], "enabled": true, "retries": 0, "timeout": 600, "priority": "normal", "timezone": "Europe/London"}', NULL, '{06:00:00}', '{1,5}', 'Europe/London', '00:10:00', 'normal', 0, true, NULL, '2026-12-04 06:00:00+00', 'schedule', 0, 0, NULL, NULL, NULL, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', NULL, NULL, false, '2026-12-01 08:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, 'a6dbb1fa243d91abb5bb1f7cebd889d7', NULL, NULL, NULL, NULL, NULL, 0, 2, '{db}', NULL);
INSERT INTO tickq.job_kind VALUES ('tickq.housekeeping', '{"every": 900, "command": ["tickq", "housekeeping"], "enabled": true, "retries": 0, "timeout": 60, "priority": "normal"}', '00:15:00', NULL, NULL, 'UTC', '00:01:00', 'normal', 0, true, NULL, '2026-12-01 08:00:00+00', 'schedule', 0, 0, NULL, NULL, NULL, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', NULL, NULL, false, '2026-12-01 08:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, 'acd527b125d217b3ae2ce3504ee9e968', NULL, NULL, NULL, NULL, NULL, 0, 1, '{}', NULL);
INSERT INTO tickq.job_kind VALUES ('agent.brief', '{"agent": 1}', NULL, '{07:30:00}', NULL, 'UTC', '00:10:00', 'normal', 0, true, NULL, '2026-12-02 07:30:00+00', 'schedule', 0, 0, NULL, NULL, NULL, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', NULL, NULL, false, '2026-12-01 08:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, '288e2e8a315d449f5354dfbed63cd4ed', NULL, NULL, NULL, NULL, NULL, 0, 1, '{}', NULL);
INSERT INTO tickq.job_kind VALUES ('email', '{"every": 300, "command": ["bin/send"], "enabled": true, "retries": 0, "timeout": 60, "priority": "normal"}', '00:05:00', NULL, NULL, 'UTC', '00:01:00', 'normal', 0, true, NULL, '2026-12-01 08:00:00+00', 'schedule', 1, 0, 1, 'host-a', '2026-12-01 08:25:00+00', '2026-12-01 08:00:00+00', '2026-12-01 08:05:00+00', NULL, NULL, false, '2026-12-01 08:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, '2ee20cdf0400b306a6572f9ce9a47b59', NULL, NULL, NULL, '2026-12-01 08:05:00+00', '2026-12-01 08:00:00+00', 2, 1, '{}', NULL);
INSERT INTO tickq.job_kind VALUES ('etl', '{"every": 3600, "steps": [{"name": "pull", "command": ["bin/pull"], "timeout": 300}, {"name": "load", "command": ["bin/load"], "timeout": 300}], "enabled": true, "retries": 0, "timeout": 900, "priority": "normal"}', '01:00:00', NULL, NULL, 'UTC', '00:15:00', 'normal', 0, true, NULL, '2026-12-01 08:00:00+00', 'schedule', 1, 0, 2, 'host-a', '2026-12-01 08:25:00+00', '2026-12-01 08:00:00+00', '2026-12-01 08:05:00+00', NULL, NULL, false, '2026-12-01 08:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, '9456b2c18ed7696a39f88c7e7178895f', NULL, NULL, NULL, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', 1, 1, '{}', NULL);


--
-- Data for Name: job_run; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.job_run OVERRIDING SYSTEM VALUE VALUES (1, 'email', 1, 'schedule', 2, 'host-a', '2026-12-01 08:05:00+00', NULL, NULL, 'running', NULL, NULL, NULL, '2026-12-01 08:00:00+00', 1, NULL, NULL, NULL, NULL, NULL, NULL, '2026-12-01 08:05:00+00', '2026-12-01 08:00:00+00', 2, 1, '{}');
INSERT INTO tickq.job_run OVERRIDING SYSTEM VALUE VALUES (2, 'etl', 1, 'schedule', 1, 'host-a', '2026-12-01 08:05:00+00', NULL, NULL, 'running', NULL, NULL, NULL, '2026-12-01 08:00:00+00', 2, NULL, NULL, NULL, NULL, NULL, NULL, '2026-12-01 08:00:00+00', '2026-12-01 08:00:00+00', 1, 1, '{}');


--
-- Data for Name: job_step; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: migration; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.migration VALUES (1, '0001_queue.sql', '2026-12-07 12:35:43.491362+00');
INSERT INTO tickq.migration VALUES (2, '0002_capacity_alerts_housekeeping.sql', '2026-12-07 12:35:43.564484+00');
INSERT INTO tickq.migration VALUES (3, '0003_fast_paths.sql', '2026-12-07 12:35:43.587819+00');
INSERT INTO tickq.migration VALUES (4, '0004_slot_rows.sql', '2026-12-07 12:35:43.590969+00');
INSERT INTO tickq.migration VALUES (5, '0005_one_lease_per_run.sql', '2026-12-07 12:35:43.608867+00');
INSERT INTO tickq.migration VALUES (6, '0006_drop_unused_run_index.sql', '2026-12-07 12:35:43.61174+00');
INSERT INTO tickq.migration VALUES (7, '0007_lean_hot_path.sql', '2026-12-07 12:35:43.615416+00');
INSERT INTO tickq.migration VALUES (8, '0008_hot_leases.sql', '2026-12-07 12:35:43.623549+00');
INSERT INTO tickq.migration VALUES (9, '0009_lease_without_foreign_key.sql', '2026-12-07 12:35:43.630519+00');
INSERT INTO tickq.migration VALUES (10, '0010_column_domains.sql', '2026-12-07 12:35:43.633631+00');
INSERT INTO tickq.migration VALUES (11, '0011_every_offset.sql', '2026-12-07 12:35:43.665175+00');
INSERT INTO tickq.migration VALUES (12, '0012_registry_bounds.sql', '2026-12-07 12:35:43.671887+00');
INSERT INTO tickq.migration VALUES (13, '0013_secrets_and_late_reports.sql', '2026-12-07 12:35:43.688994+00');
INSERT INTO tickq.migration VALUES (14, '0014_irreversible_and_chains.sql', '2026-12-07 12:35:43.697867+00');
INSERT INTO tickq.migration VALUES (15, '0015_agents.sql', '2026-12-07 12:35:43.719157+00');
INSERT INTO tickq.migration VALUES (17, '0017_operator.sql', '2026-12-07 12:35:43.750801+00');
INSERT INTO tickq.migration VALUES (18, '0018_one_table_of_bounds.sql', '2026-12-07 12:35:43.758831+00');
INSERT INTO tickq.migration VALUES (19, '0019_api_signatures.sql', '2026-12-07 12:35:43.76605+00');
INSERT INTO tickq.migration VALUES (20, '0020_upcoming.sql', '2026-12-07 12:35:43.772818+00');
INSERT INTO tickq.migration VALUES (21, '0021_queue_registry.sql', '2026-12-07 12:35:43.775172+00');
INSERT INTO tickq.migration VALUES (22, '0022_page_at_a_glance.sql', '2026-12-07 12:35:43.783962+00');
INSERT INTO tickq.migration VALUES (23, '0023_streak_outcome_and_mirror_digest.sql', '2026-12-07 12:35:43.787262+00');
INSERT INTO tickq.migration VALUES (24, '0024_quiet_sync.sql', '2026-12-07 12:35:43.790554+00');
INSERT INTO tickq.migration VALUES (26, '0026_calendar_fields.sql', '2026-12-07 12:35:43.79306+00');
INSERT INTO tickq.migration VALUES (27, '0027_run_totals_and_pings.sql', '2026-12-07 12:35:43.801114+00');
INSERT INTO tickq.migration VALUES (29, '0029_calendar_columns_forget_the_digest.sql', '2026-12-07 12:35:43.813066+00');
INSERT INTO tickq.migration VALUES (30, '0030_dispatcher_agents.sql', '2026-12-07 12:35:43.817173+00');
INSERT INTO tickq.migration VALUES (31, '0031_cancel.sql', '2026-12-07 12:35:43.824127+00');
INSERT INTO tickq.migration VALUES (32, '0032_run_slots.sql', '2026-12-07 12:35:43.834917+00');
INSERT INTO tickq.migration VALUES (33, '0033_weights_and_pools.sql', '2026-12-07 12:35:43.840426+00');
INSERT INTO tickq.migration VALUES (34, '0034_catch_up.sql', '2026-12-07 12:35:43.86119+00');
INSERT INTO tickq.migration VALUES (36, '0036_weights_and_pools_seen.sql', '2026-12-07 12:35:43.865713+00');
INSERT INTO tickq.migration VALUES (37, '0037_claim_fit_one_record.sql', '2026-12-07 12:35:43.868083+00');
INSERT INTO tickq.migration VALUES (38, '0038_kind_valid_one_test_at_a_time.sql', '2026-12-07 12:35:43.874854+00');
INSERT INTO tickq.migration VALUES (39, '0039_simulation_repeat_rest_points.sql', '2026-12-07 12:35:43.877061+00');
INSERT INTO tickq.migration VALUES (40, '0040_simulation_repeats_until.sql', '2026-12-07 12:35:43.881077+00');
INSERT INTO tickq.migration VALUES (60, '0060_project_identity.sql', '2026-12-07 12:35:43.888787+00');
INSERT INTO tickq.migration VALUES (65, '0065_cancel_who_asked.sql', '2026-12-07 12:35:43.892489+00');
INSERT INTO tickq.migration VALUES (85, '0085_drop_claim_kind.sql', '2026-12-07 12:35:43.896034+00');
INSERT INTO tickq.migration VALUES (70, '0070_simulation_from_states.sql', '2026-12-07 13:09:47.468485+00');
INSERT INTO tickq.migration VALUES (71, '0071_simulate_window_stops_stale.sql', '2026-12-07 13:09:47.472773+00');
INSERT INTO tickq.migration VALUES (72, '0072_run_counts.sql', '2026-12-07 13:09:47.475525+00');
INSERT INTO tickq.migration VALUES (73, '0073_metrics_kind.sql', '2026-12-07 13:09:47.502515+00');
INSERT INTO tickq.migration VALUES (90, '0090_no_dead_clock_parameters.sql', '2026-12-07 13:09:47.505763+00');


--
-- Data for Name: pool; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.pool VALUES ('db', 1, '2026-12-01 08:00:00+00');


--
-- Data for Name: pool_slot; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.pool_slot VALUES ('db', 1, NULL, NULL);


--
-- Data for Name: queue_registry; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.queue_registry VALUES (true, NULL, NULL, NULL, NULL, NULL, NULL);


--
-- Data for Name: run_count; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: run_total; Type: TABLE DATA; Schema: tickq; Owner: -
--



--
-- Data for Name: settings; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.settings VALUES (true, 4, '00:05:00', '00:15:00', '00:05:00', '00:20:00', '00:00:30', '01:00:00', 'UTC', '2026-12-01 08:00:00+00', 0.25, 3, '00:15:00', '30 days', 100, true);


--
-- Data for Name: slot; Type: TABLE DATA; Schema: tickq; Owner: -
--

INSERT INTO tickq.slot VALUES (3, NULL, NULL);
INSERT INTO tickq.slot VALUES (4, NULL, NULL);
INSERT INTO tickq.slot VALUES (1, 1, '2026-12-01 08:25:00+00');
INSERT INTO tickq.slot VALUES (2, 2, '2026-12-01 08:25:00+00');


--
-- Name: agent_id_seq; Type: SEQUENCE SET; Schema: tickq; Owner: -
--

SELECT pg_catalog.setval('tickq.agent_id_seq', 1, true);


--
-- Name: alert_id_seq; Type: SEQUENCE SET; Schema: tickq; Owner: -
--

SELECT pg_catalog.setval('tickq.alert_id_seq', 1, false);


--
-- Name: drift_id_seq; Type: SEQUENCE SET; Schema: tickq; Owner: -
--

SELECT pg_catalog.setval('tickq.drift_id_seq', 1, false);


--
-- Name: job_run_id_seq; Type: SEQUENCE SET; Schema: tickq; Owner: -
--

SELECT pg_catalog.setval('tickq.job_run_id_seq', 2, true);


--
-- Name: agent agent_name_unique; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.agent
    ADD CONSTRAINT agent_name_unique UNIQUE (name);


--
-- Name: agent agent_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.agent
    ADD CONSTRAINT agent_pkey PRIMARY KEY (id);


--
-- Name: agent_settings agent_settings_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.agent_settings
    ADD CONSTRAINT agent_settings_pkey PRIMARY KEY (id);


--
-- Name: agent_turn agent_turn_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.agent_turn
    ADD CONSTRAINT agent_turn_pkey PRIMARY KEY (run_id, turn);


--
-- Name: settings alert_after_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT alert_after_bounded CHECK (tickq.within_limit('alert_after'::text, (alert_after)::numeric)) NOT VALID;


--
-- Name: alert alert_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.alert
    ADD CONSTRAINT alert_pkey PRIMARY KEY (id);


--
-- Name: api_checksum api_checksum_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.api_checksum
    ADD CONSTRAINT api_checksum_pkey PRIMARY KEY (id);


--
-- Name: settings capacity_margin_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT capacity_margin_bounded CHECK (tickq.within_limit('capacity_margin'::text, capacity_margin)) NOT VALID;


--
-- Name: dispatcher dispatcher_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.dispatcher
    ADD CONSTRAINT dispatcher_pkey PRIMARY KEY (name);


--
-- Name: dispatcher_poll dispatcher_poll_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.dispatcher_poll
    ADD CONSTRAINT dispatcher_poll_pkey PRIMARY KEY (name);


--
-- Name: dispatcher_tick dispatcher_tick_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.dispatcher_tick
    ADD CONSTRAINT dispatcher_tick_pkey PRIMARY KEY (host);


--
-- Name: drift drift_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.drift
    ADD CONSTRAINT drift_pkey PRIMARY KEY (id);


--
-- Name: settings housekeeping_every_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT housekeeping_every_bounded CHECK (tickq.within_limit('housekeeping_every'::text, EXTRACT(epoch FROM housekeeping_every))) NOT VALID;


--
-- Name: job_kind job_kind_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.job_kind
    ADD CONSTRAINT job_kind_pkey PRIMARY KEY (name);


--
-- Name: job_run job_run_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.job_run
    ADD CONSTRAINT job_run_pkey PRIMARY KEY (id);


--
-- Name: job_step job_step_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.job_step
    ADD CONSTRAINT job_step_pkey PRIMARY KEY (run_id, n);


--
-- Name: settings keep_runs_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT keep_runs_bounded CHECK (tickq.within_limit('keep_runs'::text, (keep_runs)::numeric)) NOT VALID;


--
-- Name: settings lease_margin_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT lease_margin_bounded CHECK (tickq.within_limit('lease_margin'::text, EXTRACT(epoch FROM lease_margin))) NOT VALID;


--
-- Name: migration migration_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.migration
    ADD CONSTRAINT migration_pkey PRIMARY KEY (version);


--
-- Name: pool pool_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.pool
    ADD CONSTRAINT pool_pkey PRIMARY KEY (name);


--
-- Name: pool_slot pool_slot_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.pool_slot
    ADD CONSTRAINT pool_slot_pkey PRIMARY KEY (pool, n);


--
-- Name: queue_registry queue_registry_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.queue_registry
    ADD CONSTRAINT queue_registry_pkey PRIMARY KEY ("only");


--
-- Name: settings retention_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT retention_bounded CHECK (tickq.within_limit('retention'::text, EXTRACT(epoch FROM retention))) NOT VALID;


--
-- Name: settings retry_base_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT retry_base_bounded CHECK (tickq.within_limit('retry_base'::text, EXTRACT(epoch FROM retry_base))) NOT VALID;


--
-- Name: settings retry_max_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT retry_max_bounded CHECK (tickq.within_limit('retry_max'::text, EXTRACT(epoch FROM retry_max))) NOT VALID;


--
-- Name: run_count run_count_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.run_count
    ADD CONSTRAINT run_count_pkey PRIMARY KEY (kind);


--
-- Name: run_total run_total_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.run_total
    ADD CONSTRAINT run_total_pkey PRIMARY KEY (kind, outcome);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (id);


--
-- Name: slot slot_pkey; Type: CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.slot
    ADD CONSTRAINT slot_pkey PRIMARY KEY (n);


--
-- Name: settings slots_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT slots_bounded CHECK (tickq.within_limit('slots'::text, (slots)::numeric)) NOT VALID;


--
-- Name: settings stale_after_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT stale_after_bounded CHECK (tickq.within_limit('stale_after'::text, EXTRACT(epoch FROM stale_after))) NOT VALID;


--
-- Name: settings tick_bounded; Type: CHECK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE tickq.settings
    ADD CONSTRAINT tick_bounded CHECK (tickq.within_limit('tick'::text, EXTRACT(epoch FROM tick))) NOT VALID;


--
-- Name: alert_cleared_at; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX alert_cleared_at ON tickq.alert USING btree (cleared_at) WHERE (cleared_at IS NOT NULL);


--
-- Name: alert_open; Type: INDEX; Schema: tickq; Owner: -
--

CREATE UNIQUE INDEX alert_open ON tickq.alert USING btree (kind, condition) WHERE (cleared_at IS NULL);


--
-- Name: dispatcher_synced_at; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX dispatcher_synced_at ON tickq.dispatcher USING btree (synced_at);


--
-- Name: drift_detected_at; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX drift_detected_at ON tickq.drift USING btree (detected_at);


--
-- Name: job_kind_catch_up; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_kind_catch_up ON tickq.job_kind USING btree (due_at) WHERE ((catch_up IS NOT NULL) AND enabled AND ((NOT irreversible) OR (armed_at IS NOT NULL)));


--
-- Name: job_kind_claimable; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_kind_claimable ON tickq.job_kind USING btree (priority, due_at, name) WHERE (enabled AND ((NOT irreversible) OR (armed_at IS NOT NULL)));


--
-- Name: job_kind_timeout; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_kind_timeout ON tickq.job_kind USING btree (timeout) WHERE (retired_at IS NULL);


--
-- Name: job_kind_weighted; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_kind_weighted ON tickq.job_kind USING btree (name) WHERE ((weight > 1) OR (pools <> '{}'::text[]));


--
-- Name: job_run_finished_at; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_run_finished_at ON tickq.job_run USING btree (finished_at) WHERE (finished_at IS NOT NULL);


--
-- Name: job_run_kind_id; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_run_kind_id ON tickq.job_run USING btree (kind, id DESC);


--
-- Name: job_run_kind_ok; Type: INDEX; Schema: tickq; Owner: -
--

CREATE INDEX job_run_kind_ok ON tickq.job_run USING btree (kind, id DESC) WHERE (outcome = 'ok'::tickq.outcome);


--
-- Name: agent agent_kind_follows; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER agent_kind_follows AFTER INSERT OR DELETE OR UPDATE ON tickq.agent FOR EACH ROW EXECUTE FUNCTION tickq.agent_changed();


--
-- Name: agent_settings agent_settings_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER agent_settings_written AFTER UPDATE ON tickq.agent_settings FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: agent agent_valid; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER agent_valid BEFORE INSERT OR UPDATE ON tickq.agent FOR EACH ROW EXECUTE FUNCTION tickq.check_agent();


--
-- Name: job_kind kind_armed_by_a_run; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER kind_armed_by_a_run BEFORE INSERT OR UPDATE OF armed_at, armed_by, armed_run_id, irreversible, command_since ON tickq.job_kind FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_armed();


--
-- Name: job_kind kind_offset_valid; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER kind_offset_valid BEFORE INSERT OR UPDATE OF every, every_offset ON tickq.job_kind FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_offset();


--
-- Name: job_kind kind_registry_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER kind_registry_written AFTER INSERT OR DELETE OR UPDATE OF name, registry, every, every_offset, at_times, on_days, days, months, cron, timezone, timeout, priority, retries, enabled, irreversible, retired_at, weight, pools ON tickq.job_kind FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: job_kind kind_valid; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER kind_valid BEFORE INSERT OR UPDATE OF name, every, at_times, on_days, days, months, cron, timezone, timeout, retries, enabled, retired_at ON tickq.job_kind FOR EACH ROW EXECUTE FUNCTION tickq.check_kind();


--
-- Name: job_kind kinds_truncated; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER kinds_truncated AFTER TRUNCATE ON tickq.job_kind FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: job_kind lease_covers_timeouts; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE CONSTRAINT TRIGGER lease_covers_timeouts AFTER INSERT OR UPDATE OF timeout, retired_at ON tickq.job_kind DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();


--
-- Name: settings lease_covers_timeouts; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE CONSTRAINT TRIGGER lease_covers_timeouts AFTER UPDATE OF lease ON tickq.settings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();


--
-- Name: pool_slot pool_slots_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER pool_slots_written AFTER INSERT OR DELETE ON tickq.pool_slot FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: pool pools_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER pools_written AFTER INSERT OR DELETE OR UPDATE ON tickq.pool FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: job_run run_counted; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER run_counted AFTER UPDATE OF outcome, duration, slots, finished_at ON tickq.job_run FOR EACH ROW WHEN ((((old.outcome <> 'running'::tickq.outcome) OR (new.outcome <> 'running'::tickq.outcome)) AND ((old.outcome IS DISTINCT FROM new.outcome) OR (old.duration IS DISTINCT FROM new.duration) OR ((old.slots)::integer IS DISTINCT FROM (new.slots)::integer) OR (old.finished_at IS DISTINCT FROM new.finished_at)))) EXECUTE FUNCTION tickq.count_run();


--
-- Name: job_run run_counted_insert; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER run_counted_insert AFTER INSERT ON tickq.job_run FOR EACH ROW WHEN ((new.outcome <> 'running'::tickq.outcome)) EXECUTE FUNCTION tickq.count_run();


--
-- Name: job_run running_runs_stay; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER running_runs_stay AFTER DELETE ON tickq.job_run REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION tickq.refuse_deleting_running_runs();


--
-- Name: settings settings_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER settings_written AFTER UPDATE ON tickq.settings FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: slot slots_written; Type: TRIGGER; Schema: tickq; Owner: -
--

CREATE TRIGGER slots_written AFTER INSERT OR DELETE ON tickq.slot FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();


--
-- Name: agent_turn agent_turn_run_id_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.agent_turn
    ADD CONSTRAINT agent_turn_run_id_fkey FOREIGN KEY (run_id) REFERENCES tickq.job_run(id) ON DELETE CASCADE;


--
-- Name: alert alert_kind_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.alert
    ADD CONSTRAINT alert_kind_fkey FOREIGN KEY (kind) REFERENCES tickq.job_kind(name) ON UPDATE CASCADE;


--
-- Name: job_run job_run_kind_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.job_run
    ADD CONSTRAINT job_run_kind_fkey FOREIGN KEY (kind) REFERENCES tickq.job_kind(name) ON UPDATE CASCADE;


--
-- Name: job_step job_step_run_id_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.job_step
    ADD CONSTRAINT job_step_run_id_fkey FOREIGN KEY (run_id) REFERENCES tickq.job_run(id) ON DELETE CASCADE;


--
-- Name: pool_slot pool_slot_pool_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.pool_slot
    ADD CONSTRAINT pool_slot_pool_fkey FOREIGN KEY (pool) REFERENCES tickq.pool(name) ON DELETE CASCADE;


--
-- Name: run_count run_count_kind_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.run_count
    ADD CONSTRAINT run_count_kind_fkey FOREIGN KEY (kind) REFERENCES tickq.job_kind(name) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: run_total run_total_kind_fkey; Type: FK CONSTRAINT; Schema: tickq; Owner: -
--

ALTER TABLE ONLY tickq.run_total
    ADD CONSTRAINT run_total_kind_fkey FOREIGN KEY (kind) REFERENCES tickq.job_kind(name) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: FUNCTION access_privileges(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.access_privileges() FROM PUBLIC;


--
-- Name: FUNCTION agent_changed(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_changed() FROM PUBLIC;


--
-- Name: FUNCTION agent_detail(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_detail(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agent_entry(p_agent tickq.agent); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_entry(p_agent tickq.agent) FROM PUBLIC;


--
-- Name: FUNCTION agent_error(p_name text, p_field text, p_message text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_error(p_name text, p_field text, p_message text) FROM PUBLIC;


--
-- Name: FUNCTION agent_for_kind(p_kind text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_for_kind(p_kind text) FROM PUBLIC;


--
-- Name: FUNCTION agent_json_seconds(p_name text, p_field text, p_value jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_json_seconds(p_name text, p_field text, p_value jsonb) FROM PUBLIC;


--
-- Name: FUNCTION agent_json_text(p_name text, p_field text, p_value jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_json_text(p_name text, p_field text, p_value jsonb) FROM PUBLIC;


--
-- Name: FUNCTION agent_next_runs(p_name text, p_count integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_next_runs(p_name text, p_count integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agent_run_transcript(p_name text, p_run_id bigint, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_run_transcript(p_name text, p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agent_runs(p_name text, p_limit integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_runs(p_name text, p_limit integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agent_schedule(p_agent tickq.agent, p_exists boolean, p_fields jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_schedule(p_agent tickq.agent, p_exists boolean, p_fields jsonb) FROM PUBLIC;


--
-- Name: FUNCTION agent_transcript(p_run_id bigint, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_transcript(p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agent_with_fields(p_agent tickq.agent, p_exists boolean, p_fields jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agent_with_fields(p_agent tickq.agent, p_exists boolean, p_fields jsonb) FROM PUBLIC;


--
-- Name: FUNCTION agents_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agents_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION agents_export(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agents_export() FROM PUBLIC;


--
-- Name: FUNCTION agents_problems(p_agents jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.agents_problems(p_agents jsonb) FROM PUBLIC;


--
-- Name: FUNCTION apply_agent_kind(p_agent tickq.agent, p_reschedule boolean, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.apply_agent_kind(p_agent tickq.agent, p_reschedule boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION arm_kind(p_run tickq.job_run, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.arm_kind(p_run tickq.job_run, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION asked_by(p_claimed text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.asked_by(p_claimed text) FROM PUBLIC;


--
-- Name: FUNCTION calendar_count(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_count(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION calendar_day(p_calendar tickq.calendar, p_day date); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_day(p_calendar tickq.calendar, p_day date) FROM PUBLIC;


--
-- Name: FUNCTION calendar_day_first(p_calendar tickq.calendar, p_day date, p_after timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_day_first(p_calendar tickq.calendar, p_day date, p_after timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION calendar_day_slots(p_calendar tickq.calendar, p_day date); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_day_slots(p_calendar tickq.calendar, p_day date) FROM PUBLIC;


--
-- Name: FUNCTION calendar_last(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_last(p_calendar tickq.calendar, p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION calendar_next(p_calendar tickq.calendar, p_after timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_next(p_calendar tickq.calendar, p_after timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION calendar_of(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_of(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.calendar_slots_in(p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_until timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION cancels_requested(p_dispatcher text, p_run_ids bigint[], p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.cancels_requested(p_dispatcher text, p_run_ids bigint[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION capacity_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.capacity_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION capacity_total_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.capacity_total_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION capacity_verdict_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.capacity_verdict_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION catch_up_kinds(p_dispatcher text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.catch_up_kinds(p_dispatcher text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION chain_start(p_run_id bigint, p_dispatcher text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.chain_start(p_run_id bigint, p_dispatcher text) FROM PUBLIC;


--
-- Name: FUNCTION chain_summary(p_run_id bigint); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.chain_summary(p_run_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION check_agent(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.check_agent() FROM PUBLIC;


--
-- Name: FUNCTION check_kind(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.check_kind() FROM PUBLIC;


--
-- Name: FUNCTION check_kind_armed(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.check_kind_armed() FROM PUBLIC;


--
-- Name: FUNCTION check_kind_offset(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.check_kind_offset() FROM PUBLIC;


--
-- Name: FUNCTION check_lease_covers_timeouts(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.check_lease_covers_timeouts() FROM PUBLIC;


--
-- Name: FUNCTION claim_candidates(p_limit integer, p_agents boolean, p_stale timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_candidates(p_limit integer, p_agents boolean, p_stale timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION claim_fit(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_stale timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_fit(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_stale timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION claim_jobs(p_limit integer, p_dispatcher text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_jobs(p_limit integer, p_dispatcher text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION claim_manual(p_kind text, p_dispatcher text, p_run_by text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_manual(p_kind text, p_dispatcher text, p_run_by text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION claim_open_runs(p_picked text[], p_slots integer[], p_dispatcher text, p_lease interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_open_runs(p_picked text[], p_slots integer[], p_dispatcher text, p_lease interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION claim_plain(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.claim_plain(OUT picked text[], OUT slots integer[], OUT kinds integer, OUT pooled jsonb, p_candidates text[], p_limit integer, p_slots integer, p_over_limit boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION command_changed(p_stored tickq.job_kind, p_incoming tickq.job_kind); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.command_changed(p_stored tickq.job_kind, p_incoming tickq.job_kind) FROM PUBLIC;


--
-- Name: FUNCTION count_run(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.count_run() FROM PUBLIC;


--
-- Name: FUNCTION cron_calendar(p_cron text, p_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.cron_calendar(p_cron text, p_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION cron_field(p_field text, p_what text, p_low integer, p_high integer, p_names text[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.cron_field(p_field text, p_what text, p_low integer, p_high integer, p_names text[]) FROM PUBLIC;


--
-- Name: FUNCTION cron_parse(p_cron text, p_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.cron_parse(p_cron text, p_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION cron_problem(p_cron text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.cron_problem(p_cron text) FROM PUBLIC;


--
-- Name: FUNCTION describe_calendar(p_calendar tickq.calendar); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.describe_calendar(p_calendar tickq.calendar) FROM PUBLIC;


--
-- Name: FUNCTION describe_days(p_calendar tickq.calendar); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.describe_days(p_calendar tickq.calendar) FROM PUBLIC;


--
-- Name: FUNCTION describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.describe_schedule(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION env_digests(p_kind text, p_env jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.env_digests(p_kind text, p_env jsonb) FROM PUBLIC;


--
-- Name: FUNCTION expected_duration(p_kind text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.expected_duration(p_kind text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION expire_leases(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.expire_leases(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION explain_kind(p_kind text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.explain_kind(p_kind text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION explain_queue(p_kind text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.explain_queue(p_kind text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION finish_run(OUT run_id bigint, OUT kind text, OUT outcome tickq.outcome, OUT failure_streak integer, OUT next_due_at timestamp with time zone, OUT next_trigger tickq.run_trigger, p_run_id bigint, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.finish_run(OUT run_id bigint, OUT kind text, OUT outcome tickq.outcome, OUT failure_streak integer, OUT next_due_at timestamp with time zone, OUT next_trigger tickq.run_trigger, p_run_id bigint, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION forget_kind(p_kind text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.forget_kind(p_kind text) FROM PUBLIC;


--
-- Name: FUNCTION forget_registry_digest(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.forget_registry_digest() FROM PUBLIC;


--
-- Name: FUNCTION format_duration(p_duration interval); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.format_duration(p_duration interval) FROM PUBLIC;


--
-- Name: FUNCTION grant_access(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.grant_access(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION health_problems(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.health_problems(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION held_ticks(p_first timestamp with time zone, p_step interval, p_ticks integer, p_period interval, p_tick interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.held_ticks(p_first timestamp with time zone, p_step interval, p_ticks integer, p_period interval, p_tick interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION hold_from(p_stale_after interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.hold_from(p_stale_after interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION housekeeping(p_batch integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.housekeeping(p_batch integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION is_timezone(p_zone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.is_timezone(p_zone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION keep_registry_digest(p_digest text, p_drift jsonb, p_slots integer); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.keep_registry_digest(p_digest text, p_drift jsonb, p_slots integer) FROM PUBLIC;


--
-- Name: FUNCTION kind_claimable(p_kind tickq.job_kind); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.kind_claimable(p_kind tickq.job_kind) FROM PUBLIC;


--
-- Name: FUNCTION kind_history(p_kind text, p_limit integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.kind_history(p_kind text, p_limit integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION kind_name_ok(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.kind_name_ok(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION kind_problems(p_name text, p_entry jsonb, p_default_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.kind_problems(p_name text, p_entry jsonb, p_default_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION kinds_to_catch_up(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.kinds_to_catch_up(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION last_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.last_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION legacy_zone_problem(p_zone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.legacy_zone_problem(p_zone text) FROM PUBLIC;


--
-- Name: FUNCTION live_leases(p_run_ids bigint[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.live_leases(p_run_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION live_run(p_run_id bigint, p_dispatcher text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.live_run(p_run_id bigint, p_dispatcher text) FROM PUBLIC;


--
-- Name: FUNCTION load_agent(p_id bigint); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.load_agent(p_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION metrics_buckets(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_buckets() FROM PUBLIC;


--
-- Name: FUNCTION metrics_families(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_families() FROM PUBLIC;


--
-- Name: FUNCTION metrics_kind_gauge(p_kinds tickq.metrics_kind[], p_family text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_kind_gauge(p_kinds tickq.metrics_kind[], p_family text) FROM PUBLIC;


--
-- Name: FUNCTION metrics_kinds_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_kinds_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION metrics_label(p_value text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_label(p_value text) FROM PUBLIC;


--
-- Name: FUNCTION metrics_last_success(p_kinds tickq.metrics_kind[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_last_success(p_kinds tickq.metrics_kind[]) FROM PUBLIC;


--
-- Name: FUNCTION metrics_merged_slots(p_kinds tickq.metrics_kind[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_merged_slots(p_kinds tickq.metrics_kind[]) FROM PUBLIC;


--
-- Name: FUNCTION metrics_queue(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_queue(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION metrics_run_duration(p_kinds tickq.metrics_kind[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_run_duration(p_kinds tickq.metrics_kind[]) FROM PUBLIC;


--
-- Name: FUNCTION metrics_runs_total(p_kinds tickq.metrics_kind[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_runs_total(p_kinds tickq.metrics_kind[]) FROM PUBLIC;


--
-- Name: FUNCTION metrics_text(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.metrics_text(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION month_end_at(p_zone text, p_at timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.month_end_at(p_zone text, p_at timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION month_end_windows(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.month_end_windows(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION next_due_at(p_before timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.next_due_at(p_before timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_after timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_after timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_after timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.next_slot(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_after timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION number_ranges(p_values smallint[], p_names text[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.number_ranges(p_values smallint[], p_names text[]) FROM PUBLIC;


--
-- Name: FUNCTION on_time_tick(p_tick integer, p_grains integer[]); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.on_time_tick(p_tick integer, p_grains integer[]) FROM PUBLIC;


--
-- Name: FUNCTION within_limit(p_key text, p_value numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.within_limit(p_key text, p_value numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION parse_agents(p_agents jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_agents(p_agents jsonb) FROM PUBLIC;


--
-- Name: FUNCTION parse_chain(p_name text, p_entry jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_chain(p_name text, p_entry jsonb) FROM PUBLIC;


--
-- Name: FUNCTION parse_days(p_name text, p_entry jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_days(p_name text, p_entry jsonb) FROM PUBLIC;


--
-- Name: FUNCTION parse_kind(p_name text, p_entry jsonb, p_default_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_kind(p_name text, p_entry jsonb, p_default_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION parse_pools(p_pools jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_pools(p_pools jsonb) FROM PUBLIC;


--
-- Name: FUNCTION parse_schedule(p_name text, p_entry jsonb, p_default_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_schedule(p_name text, p_entry jsonb, p_default_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION parse_settings(p_settings jsonb, p_old tickq.settings); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_settings(p_settings jsonb, p_old tickq.settings) FROM PUBLIC;


--
-- Name: FUNCTION parse_weight(p_name text, p_entry jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_weight(p_name text, p_entry jsonb) FROM PUBLIC;


--
-- Name: FUNCTION parse_zone(p_name text, p_entry jsonb, p_default_timezone text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.parse_zone(p_name text, p_entry jsonb, p_default_timezone text) FROM PUBLIC;


--
-- Name: FUNCTION pause_agent(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.pause_agent(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION pause_kind(p_kind text, p_until timestamp with time zone, p_reason text, p_by text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.pause_kind(p_kind text, p_until timestamp with time zone, p_reason text, p_by text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION pool_occupancy_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.pool_occupancy_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION pool_slots_left(p_pool text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.pool_slots_left(p_pool text) FROM PUBLIC;


--
-- Name: FUNCTION pools_problems(p_pools jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.pools_problems(p_pools jsonb) FROM PUBLIC;


--
-- Name: FUNCTION project_problem(p_value jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.project_problem(p_value jsonb) FROM PUBLIC;


--
-- Name: FUNCTION queue_registry_at(p_source jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.queue_registry_at(p_source jsonb) FROM PUBLIC;


--
-- Name: FUNCTION queue_registry_problem(p_registry jsonb, p_kinds jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.queue_registry_problem(p_registry jsonb, p_kinds jsonb) FROM PUBLIC;


--
-- Name: FUNCTION queue_status_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.queue_status_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION record_agent_turn(p_run_id bigint, p_agent_id bigint, p_turn integer, p_entry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.record_agent_turn(p_run_id bigint, p_agent_id bigint, p_turn integer, p_entry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION record_tick(p_dispatcher text, p_host text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.record_tick(p_dispatcher text, p_host text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION refuse_deleting_running_runs(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.refuse_deleting_running_runs() FROM PUBLIC;


--
-- Name: FUNCTION registry_count(p_value jsonb, p_kind text, p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_count(p_value jsonb, p_kind text, p_key text) FROM PUBLIC;


--
-- Name: FUNCTION registry_digest(p_registry jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_digest(p_registry jsonb) FROM PUBLIC;


--
-- Name: FUNCTION registry_entry(p_kind tickq.job_kind); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_entry(p_kind tickq.job_kind) FROM PUBLIC;


--
-- Name: FUNCTION registry_error(p_kind text, p_key text, p_message text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_error(p_kind text, p_key text, p_message text) FROM PUBLIC;


--
-- Name: FUNCTION registry_fraction(p_value jsonb, p_kind text, p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_fraction(p_value jsonb, p_kind text, p_key text) FROM PUBLIC;


--
-- Name: FUNCTION registry_limit(p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_limit(p_key text) FROM PUBLIC;


--
-- Name: FUNCTION registry_limits(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_limits() FROM PUBLIC;


--
-- Name: FUNCTION registry_mirror(p_kind text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_mirror(p_kind text) FROM PUBLIC;


--
-- Name: FUNCTION registry_problem(p_message text, p_kind text, p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_problem(p_message text, p_kind text, p_key text) FROM PUBLIC;


--
-- Name: FUNCTION registry_problems(p_registry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_problems(p_registry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION registry_seconds(p_value jsonb, p_kind text, p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_seconds(p_value jsonb, p_kind text, p_key text) FROM PUBLIC;


--
-- Name: FUNCTION registry_settings(p_settings tickq.settings); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_settings(p_settings tickq.settings) FROM PUBLIC;


--
-- Name: FUNCTION registry_source(p_registry jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_source(p_registry jsonb) FROM PUBLIC;


--
-- Name: FUNCTION registry_where(p_kind text, p_key text); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.registry_where(p_kind text, p_key text) FROM PUBLIC;


--
-- Name: FUNCTION release_dead_lease(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.release_dead_lease(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION remove_agent(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.remove_agent(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_dispatchers_at(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_dispatchers_at(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_header_at(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_header_at(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_kinds_at(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_kinds_at(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_late_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_late_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_occupancy_at(p_hours numeric, p_steps integer, p_pool text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_occupancy_at(p_hours numeric, p_steps integer, p_pool text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_pools_at(p_hours numeric, p_steps integer, p_limit integer, p_holders integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_pools_at(p_hours numeric, p_steps integer, p_limit integer, p_holders integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_run(p_run_id bigint, p_dispatcher text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_slots_at(p_hours numeric, p_steps integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_slots_at(p_hours numeric, p_steps integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_step(p_run_id bigint, p_dispatcher text, p_n integer, p_name text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_step(p_run_id bigint, p_dispatcher text, p_n integer, p_name text, p_outcome tickq.outcome, p_exit_code integer, p_output_tail text, p_duration interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_timeline_at(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_timeline_at(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_waiting_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_waiting_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION report_window_start_at(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.report_window_start_at(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION request_cancel(p_target text, p_reason text, p_claimed_by text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.request_cancel(p_target text, p_reason text, p_claimed_by text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION resume_agent(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.resume_agent(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION resume_kind(p_kind text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.resume_kind(p_kind text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION retire_agent_kind(p_name text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.retire_agent_kind(p_name text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION retired_kinds_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.retired_kinds_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION run_detail(p_run_id bigint, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.run_detail(p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION same_project(p_stored tickq.queue_registry, p_source jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.same_project(p_stored tickq.queue_registry, p_source jsonb) FROM PUBLIC;


--
-- Name: FUNCTION save_agent(p_name text, p_fields jsonb, p_create boolean, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.save_agent(p_name text, p_fields jsonb, p_create boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION save_settings(p_old tickq.settings, p_new tickq.settings, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.save_settings(p_old tickq.settings, p_new tickq.settings, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION schedule_slots(p_name text, p_entry jsonb, p_default_timezone text, p_count integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.schedule_slots(p_name text, p_entry jsonb, p_default_timezone text, p_count integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION schedule_warnings(p_registry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.schedule_warnings(p_registry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION settings_drift(p_old tickq.settings, p_new tickq.settings); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.settings_drift(p_old tickq.settings, p_new tickq.settings) FROM PUBLIC;


--
-- Name: FUNCTION simulate(p_hours numeric, p_durations jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulate(p_hours numeric, p_durations jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulate_events(p_until timestamp with time zone, p_durations jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulate_events(p_until timestamp with time zone, p_durations jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: PROCEDURE simulate_window(IN p_until timestamp with time zone, IN p_durations jsonb, IN p_steady boolean, IN p_stop_stale boolean, IN p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON PROCEDURE tickq.simulate_window(IN p_until timestamp with time zone, IN p_durations jsonb, IN p_steady boolean, IN p_stop_stale boolean, IN p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulated_hold(p_kind tickq.job_kind, p_durations jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulated_hold(p_kind tickq.job_kind, p_durations jsonb) FROM PUBLIC;


--
-- Name: FUNCTION simulation_arm(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_arm(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_best_copy(OUT c integer, OUT steps integer, p_states jsonb[], p_digests text[], p_n integer, p_count integer, p_grid timestamp with time zone, p_len interval, p_shifts interval[], p_rows_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_best_copy(OUT c integer, OUT steps integer, p_states jsonb[], p_digests text[], p_n integer, p_count integer, p_grid timestamp with time zone, p_len interval, p_shifts interval[], p_rows_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_breaks(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_breaks(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_copy(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_state jsonb, p_was jsonb, p_ended jsonb, p_going jsonb, p_first bigint, p_end bigint, p_next bigint, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_copy(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_state jsonb, p_was jsonb, p_ended jsonb, p_going jsonb, p_first bigint, p_end bigint, p_next bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_copy_parts(INOUT p_states jsonb[], INOUT p_digests text[], INOUT p_ids jsonb[], INOUT p_firsts bigint[], p_n integer, p_c integer, p_steps integer); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_copy_parts(INOUT p_states jsonb[], INOUT p_digests text[], INOUT p_ids jsonb[], INOUT p_firsts bigint[], p_n integer, p_c integer, p_steps integer) FROM PUBLIC;


--
-- Name: FUNCTION simulation_copy_runs(p_until timestamp with time zone, p_shift interval, p_first bigint, p_end bigint, p_offset bigint, p_was jsonb, p_going jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_copy_runs(p_until timestamp with time zone, p_shift interval, p_first bigint, p_end bigint, p_offset bigint, p_was jsonb, p_going jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_copy_until(p_states jsonb[], p_fps text[], p_i integer, p_j integer, p_top integer, p_grid timestamp with time zone, p_len interval, p_shift interval, p_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_copy_until(p_states jsonb[], p_fps text[], p_i integer, p_j integer, p_top integer, p_grid timestamp with time zone, p_len interval, p_shift interval, p_shifts interval[], p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_day_rules(p_kind tickq.job_kind); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_day_rules(p_kind tickq.job_kind) FROM PUBLIC;


--
-- Name: FUNCTION simulation_events(p_until timestamp with time zone, p_holds jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_events(p_until timestamp with time zone, p_holds jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_fold(p_worst jsonb, p_more jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_fold(p_worst jsonb, p_more jsonb) FROM PUBLIC;


--
-- Name: FUNCTION simulation_holds(p_durations jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_holds(p_durations jsonb) FROM PUBLIC;


--
-- Name: FUNCTION simulation_mark(OUT state jsonb, OUT digest text, OUT ids jsonb, OUT first_id bigint, OUT idle_until timestamp with time zone, p_at timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_mark(OUT state jsonb, OUT digest text, OUT ids jsonb, OUT first_id bigint, OUT idle_until timestamp with time zone, p_at timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_merge(p_worst jsonb, p_window integer, p_until timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_merge(p_worst jsonb, p_window integer, p_until timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_next_due(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_next_due() FROM PUBLIC;


--
-- Name: FUNCTION simulation_parts(p_until timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_parts(p_until timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_remap(p_ids jsonb, p_first bigint, p_offset bigint, p_going jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_remap(p_ids jsonb, p_first bigint, p_offset bigint, p_going jsonb) FROM PUBLIC;


--
-- Name: FUNCTION simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_repeats_until(p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval, p_zones text[], p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_backs timestamp with time zone[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_replay_window(p_hours numeric, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_replay_window(p_hours numeric, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_report(p_until timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_report(p_until timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_restore(p_at timestamp with time zone, p_state jsonb, p_ids jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_restore(p_at timestamp with time zone, p_state jsonb, p_ids jsonb) FROM PUBLIC;


--
-- Name: FUNCTION simulation_running(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_running() FROM PUBLIC;


--
-- Name: FUNCTION simulation_session(); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_session() FROM PUBLIC;


--
-- Name: FUNCTION simulation_stale(p_since bigint, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_stale(p_since bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_start(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_start(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_state(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_state(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_walk_until(p_kind tickq.job_kind, p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_walk_until(p_kind tickq.job_kind, p_from timestamp with time zone, p_until timestamp with time zone, p_shift interval) FROM PUBLIC;


--
-- Name: FUNCTION simulation_window_breaks(OUT shifts interval[], OUT rows_shifts interval[], OUT zones text[], OUT firsts timestamp with time zone[], OUT lasts timestamp with time zone[], OUT backs timestamp with time zone[], p_until timestamp with time zone, p_len interval, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_window_breaks(OUT shifts interval[], OUT rows_shifts interval[], OUT zones text[], OUT firsts timestamp with time zone[], OUT lasts timestamp with time zone[], OUT backs timestamp with time zone[], p_until timestamp with time zone, p_len interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_windows(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_windows(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION simulation_worst(p_worst jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.simulation_worst(p_worst jsonb) FROM PUBLIC;


--
-- Name: FUNCTION slot_holders_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slot_holders_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION slot_occupancy_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slot_occupancy_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION slot_seconds(p_entry jsonb, p_timezone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slot_seconds(p_entry jsonb, p_timezone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slots_between(p_every interval, p_offset interval, p_at_times time without time zone[], p_on_days smallint[], p_days smallint[], p_months smallint[], p_cron text, p_timezone text, p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION slots_left(p_slots integer); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.slots_left(p_slots integer) FROM PUBLIC;


--
-- Name: FUNCTION spread_offsets(p_durations jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.spread_offsets(p_durations jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION spread_times(p_durations jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.spread_times(p_durations jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION stale_due_at(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.stale_due_at(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION start_run(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.start_run(p_run_id bigint, p_dispatcher text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_agents(p_agents jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_agents(p_agents jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_dispatcher(p_registry jsonb, p_settings tickq.settings, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_dispatcher(p_registry jsonb, p_settings tickq.settings, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_kind(p_name text, p_entry jsonb, p_timezone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_kind(p_name text, p_entry jsonb, p_timezone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_kinds(p_kinds jsonb, p_timezone text, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_kinds(p_kinds jsonb, p_timezone text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_pools(p_pools jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_pools(p_pools jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_queue_registry(p_registry jsonb, p_kinds jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_queue_registry(p_registry jsonb, p_kinds jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_registry(p_registry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_registry(p_registry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION sync_slots(p_slots integer); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.sync_slots(p_slots integer) FROM PUBLIC;


--
-- Name: FUNCTION take_alerts(p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.take_alerts(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION tick_lateness(p_registry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.tick_lateness(p_registry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION tick_on_time(p_registry jsonb, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.tick_on_time(p_registry jsonb, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION ticks_held(p_kind tickq.job_kind, p_durations jsonb, p_tick interval); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.ticks_held(p_kind tickq.job_kind, p_durations jsonb, p_tick interval) FROM PUBLIC;


--
-- Name: FUNCTION unknown_zone(p_value jsonb); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.unknown_zone(p_value jsonb) FROM PUBLIC;


--
-- Name: FUNCTION upcoming_at(p_hours numeric, p_limit integer, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.upcoming_at(p_hours numeric, p_limit integer, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION weekday_name(p_day smallint); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.weekday_name(p_day smallint) FROM PUBLIC;


--
-- Name: FUNCTION weight_problems(p_registry jsonb, p_slots integer); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.weight_problems(p_registry jsonb, p_slots integer) FROM PUBLIC;


--
-- Name: FUNCTION window_runs(p_since timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.window_runs(p_since timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION write_kind(p_kind tickq.job_kind, p_reschedule boolean, p_new_command boolean, p_now timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.write_kind(p_kind tickq.job_kind, p_reschedule boolean, p_new_command boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION zone_steady(p_zone text, p_from timestamp with time zone, p_until timestamp with time zone); Type: ACL; Schema: tickq; Owner: -
--

REVOKE ALL ON FUNCTION tickq.zone_steady(p_zone text, p_from timestamp with time zone, p_until timestamp with time zone) FROM PUBLIC;


--
-- PostgreSQL database dump complete
--


