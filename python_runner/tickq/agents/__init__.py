"""User-built agents: the runner of one agent run (runner.py) and the chat-completions client
it calls the model with (client.py). The SQL is sql/api/09_agents.sql; the commands are
tickq/agents_cli.py."""
