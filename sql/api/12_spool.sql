-- What a dispatcher keeps on its own host and reports late, and what the database keeps of the
-- registry's secrets.

CREATE OR REPLACE FUNCTION tickq.env_digests(
    p_kind text,
    p_env jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- Env values are often secrets: the mirror keeps a digest of each, enough for drift to see a
    -- change. The kind and name go into the digest, so equal values do not look equal. Values
    -- already in digest form (tickq.registry.env_digest computed them) are kept as they are.
    SELECT jsonb_object_agg(e.name, CASE
        WHEN e.value #>> '{}' ~ '^sha256:[0-9a-f]{64}$' THEN e.value
        ELSE to_jsonb('sha256:' || encode(sha256(convert_to(
            p_kind || ':' || e.name || '=' || (e.value #>> '{}'), 'UTF8')), 'hex'))
    END)
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_env) = 'object' THEN p_env END) AS e (name, value)
$$;
COMMENT ON FUNCTION tickq.env_digests(text, jsonb, timestamptz) IS
'A kind''s env table with each value replaced by "sha256:" and the hex digest of '
'"kind:NAME=value" (null for no env): the database never keeps an env value itself.';
