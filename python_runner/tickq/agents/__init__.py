"""User-built agents: the runner of one agent run (runner.py, started as `python -m tickq.agents
ID`) and the chat-completions client it calls the model with (client.py). The SQL is
sql/api/09_agents.sql; the `tickq agent` commands are tickq/cli/agents.py."""
