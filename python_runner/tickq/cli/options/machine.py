"""This machine's commands: the embedded server (`server`), the timers (`launchd`, `systemd`,
`cron`), `roles`, `completion`."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    server = add("server", "server:cmd_server", "the embedded PostgreSQL (in $TICKQ_DATA_DIR "
                 "or the user data folder): is it running (exit 0) or not (exit 1); stop it "
                 "(the next command that needs it starts it again)")
    server.add_argument("action", choices=("status", "stop"))
    for name, actions, text in (
        ("launchd", ("print", "install", "uninstall"),
         "the macOS launchd agent that runs `tickq tick` every tick"),
        ("systemd", ("print", "install", "uninstall"),
         "the systemd user timer that runs `tickq tick` every tick (Linux)"),
        ("cron", ("print",), "a crontab line that runs `tickq tick` every tick"),
    ):
        p = add(name, f"timers:cmd_{name}", text)
        p.add_argument("action", choices=actions)
        p.add_argument("--name", help="timer name (default: the project, else the folder's name)")
        if name == "systemd":
            p.add_argument("--system", action="store_true", help="in /etc/systemd/system")
            p.add_argument("--run-as", metavar="USER", help="with --system: User= (default: you, "
                           "under sudo the one who ran it; root only when named)")
    text = "print sql/roles.sql: the owner, dispatcher and reader roles of a tickq database"
    roles = sub.add_parser("roles", help=text, description=text)
    roles.add_argument("action", choices=("print",))
    for role in ("owner", "dispatcher", "reader"):
        roles.add_argument(f"--{role}", default=f"tickq_{role}", help=f"the {role} role's name")
    roles.set_defaults(func="roles:cmd_roles")
    completion = add("completion", "completion:cmd_completion",
                     "print a shell completion script: source <(tickq completion bash)")
    completion.add_argument("shell", choices=("bash", "zsh", "kinds"),
                            help="bash or zsh; kinds lists the registry's kind names")
