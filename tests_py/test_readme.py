"""The README's examples run: its registry loads and syncs, its SQL runs, and the table columns
it names exist."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from tickq import db
from tickq.registry import load_registry

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_the_registry_example_loads_and_syncs(tmp_path: Path, conn: psycopg.Connection) -> None:
    # The first block is the whole registry; the later ones (chains, agents) add sections to it.
    main, *more = blocks("toml")
    path = tmp_path / "registry.toml"
    path.write_text(main)
    (tmp_path / "jobs").mkdir()  # its cwd

    registry = load_registry(path)

    assert sorted(registry.kinds) == ["board_pack", "month_end_close", "office_hours",
                                      "send_scheduled_email", "weekly_ingest"]
    conn.execute(db.load_query("sync_registry"),
                 {"registry": Jsonb(registry.to_sync_json()), "now": None})
    assert conn.execute("SELECT count(*) FROM tickq.job_kind").fetchone() == (6,)

    path.write_text("\n".join([main, *more]))
    registry = load_registry(path)
    assert {"payout", "core"} <= set(registry.kinds) and registry.agents is not None
    conn.execute(db.load_query("sync_registry"),
                 {"registry": Jsonb(registry.to_sync_json()), "now": None})


def test_the_sql_examples_run(conn: psycopg.Connection) -> None:
    [text] = blocks("sql")
    statements = [s for s in text.split(";") if s.strip().replace("\n", "")
                  and not all(ln.startswith("--") for ln in s.strip().splitlines())]
    assert len(statements) == 3
    for statement in statements:
        conn.execute(statement).fetchall()


def test_the_columns_it_names_exist(conn: psycopg.Connection) -> None:
    columns = {
        table: {name for (name,) in conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = 'tickq' AND table_name = %s", (table,)).fetchall()}
        for table in ("job_kind", "job_run")
    }
    named: dict[str, set[str]] = {"job_kind": set(), "job_run": set()}
    prose = " ".join(README.split())
    for table in named:
        # "`tickq.job_run` (a row per run: `id`, `kind`, ...)": every backticked word inside.
        match = re.search(rf"`tickq\.{table}` \(a row per [a-z]+: (.*?)\)[,.]", prose)
        assert match, table
        named[table] |= set(re.findall(r"`([a-z_]+)`", match.group(1)))
        named[table] |= set(re.findall(rf"\b{table}\.([a-z_]+)", README))
    for table, names in named.items():
        assert names, table
        assert names <= columns[table], f"README names {sorted(names - columns[table])}"
