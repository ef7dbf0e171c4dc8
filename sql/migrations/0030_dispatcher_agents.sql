-- Whether a dispatcher's registry can run agents (it has an [agents] section), recorded by its
-- sync: claim_jobs leaves agent runs to the dispatchers that can run them, as the runner of a
-- registry without [agents] could only fail them. A row written before this column is taken to
-- be able to, as every dispatcher was until its next sync says otherwise.
ALTER TABLE tickq.dispatcher ADD COLUMN IF NOT EXISTS agents boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN tickq.dispatcher.agents IS
'Whether the registry this dispatcher last synced has an [agents] section: only then does '
'tickq.claim_jobs lease it agent runs (kinds agent.NAME).';

-- A sync of the registry the queue last synced writes nothing (migration 0024), not even its
-- dispatcher's row: such a claimer's registry is the one the queue was last synced with, whose
-- answer the settings row keeps (the row claim_jobs reads anyway). NULL: not known (no sync
-- since this column came).
ALTER TABLE tickq.settings ADD COLUMN IF NOT EXISTS agents boolean;
COMMENT ON COLUMN tickq.settings.agents IS
'Whether the registry this queue was last synced with (in full) has an [agents] section: what '
'tickq.claim_jobs takes for a claimer without a tickq.dispatcher row of its own (its sync had '
'nothing to do, so its registry is that one). Written by tickq.sync_agents.';
