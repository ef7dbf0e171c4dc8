-- Whether a dispatcher's registry can run agents (it has an [agents] section), recorded by its
-- sync: claim_jobs leaves agent runs to the dispatchers that can run them, as the runner of a
-- registry without [agents] could only fail them. A row written before this column is taken to
-- be able to, as every dispatcher was until its next sync says otherwise.
ALTER TABLE tickq.dispatcher ADD COLUMN IF NOT EXISTS agents boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN tickq.dispatcher.agents IS
'Whether the registry this dispatcher last synced has an [agents] section: only then does '
'tickq.claim_jobs lease it agent runs (kinds agent.NAME).';
