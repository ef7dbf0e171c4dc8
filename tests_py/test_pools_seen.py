"""Weights and pools seen everywhere, on a queue where a real tick holds runs: `tickq status`
(the slots and each pool, who holds them), `tickq explain` naming the full pool and its holder
or the weight that does not fit, `tickq history` (a run's weight and pools), the metrics (per
pool gauges, promtool-clean) and the status page (a plot per pool under the global one, measured
in a real Chromium; bounded however many pools the registry has)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from browser import Browser
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
slots = 4

[pools.salesforce]
slots = 1

[pools.smb]
slots = 2

[kinds.sf_sync]
command = ["sleep", "300"]
every = "1h"
timeout = "10m"
pools = ["salesforce"]
priority = "urgent"

[kinds.ingest]
command = ["sleep", "300"]
every = "1h"
timeout = "10m"
weight = 2
pools = ["smb"]
priority = "urgent"

[kinds.sf_push]
command = ["sh", "-c", "echo push"]
every = "1h"
timeout = "10s"
pools = ["salesforce"]

[kinds.wide]
command = ["sh", "-c", "echo wide"]
every = "1h"
timeout = "10s"
weight = 2

[kinds.light]
command = ["sh", "-c", "echo light"]
every = "1h"
timeout = "10s"
"""


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    found["PYTHONPATH"] = str(REPO / "python_runner")
    return found


def tickq(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=kw.pop("env", env()),
                          capture_output=True, text=True, timeout=120, **kw)


def leased(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {k for (k,) in conn.execute(
            "SELECT name FROM tickq.job_kind WHERE run_id IS NOT NULL").fetchall()}


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
         template_db: str) -> Iterator[dict[str, Any]]:
    """A real tick holding ingest (weight 2, pool smb) and sf_sync (pool salesforce, of one
    slot): 3 of the 4 slots held. Then sf_push (pool salesforce) and wide (weight 2) fall due:
    neither can be claimed, one for the full pool, the other for its weight."""
    from tickq import db

    folder = tmp_path_factory.mktemp("pools_seen")
    registry = folder / "registry.toml"
    registry.write_text(REGISTRY)
    name = f"t_pools_seen_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    sync = tickq("sync", "--registry", str(registry), "--database-url", url)
    assert sync.returncode == 0, sync.stderr + sync.stdout
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = CASE WHEN name IN ('sf_sync', 'ingest') "
                     "THEN now() - interval '1 minute' ELSE now() + interval '1 hour' END")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry),
         "--database-url", url], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 60
        while leased(url) != {"sf_sync", "ingest"}:
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.poll(), leased(url))
            time.sleep(0.1)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute' "
                         "WHERE name IN ('sf_push', 'wide')")
        yield {"url": url, "folder": folder, "registry": registry,
               "dispatcher": f"{socket.gethostname()}:{proc.pid}"}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        db.drop_database(pg_server_url, name)


def run_ids(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("SELECT kind, id FROM tickq.job_run "
                                 "WHERE outcome = 'running'").fetchall())


def test_status_shows_the_slots_and_each_pool_with_who_holds_them(held: dict[str, Any]) -> None:
    ids = run_ids(held["url"])
    text = tickq("status", "--database-url", held["url"], env={**env(), "COLUMNS": "200"})
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    slots = next(line for line in lines if line.startswith("slots: "))
    assert slots.startswith("slots: 3 of 4 held by "), slots
    assert f"ingest (run {ids['ingest']}, weight 2)" in slots
    assert f"sf_sync (run {ids['sf_sync']})" in slots
    assert (f"pool salesforce: 1 of 1 held by sf_sync (run {ids['sf_sync']}); FULL; "
            "1 kind(s) due and waiting") in lines, lines
    assert f"pool smb: 1 of 2 held by ingest (run {ids['ingest']})" in lines, lines
    header = next(line for line in lines if line.startswith("kind "))
    assert header.split()[-1] == "takes"
    ingest = next(line for line in lines if line.startswith("ingest "))
    assert ingest.rstrip().endswith("2 + smb"), ingest

    doc = json.loads(tickq("status", "--json", "--database-url", held["url"]).stdout)
    assert (doc["slots"]["slots"], doc["slots"]["busy"], doc["slots"]["free"]) == (4, 3, 1)
    assert {p["pool"]: (p["slots"], p["busy"], p["waiting"]) for p in doc["pools"]} == {
        "salesforce": (1, 1, 1), "smb": (2, 1, 0)}
    kinds = {k["kind"]: (k["weight"], k["pools"]) for k in doc["kinds"]}
    assert kinds["ingest"] == (2, ["smb"]) and kinds["light"] == (1, [])

    narrow = tickq("status", "--database-url", held["url"], env={**env(), "COLUMNS": "80"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80, narrow.stdout


def test_explain_names_the_full_pool_and_who_holds_it(held: dict[str, Any]) -> None:
    ids = run_ids(held["url"])
    doc = json.loads(tickq("explain", "sf_push", "--json", "--database-url", held["url"]).stdout)
    assert doc["state"] == "waiting" and doc["pools"] == ["salesforce"]
    assert doc["queue"]["waits_for"] == [{"what": "pool", "pool": "salesforce", "slots": 1}]
    text = tickq("explain", "sf_push", "--database-url", held["url"]).stdout
    assert "  pool salesforce: 0 of 1 free: full" in text, text
    assert (f"    held by run {ids['sf_sync']} of sf_sync on {held['dispatcher']} since "
            in text), text
    assert "it waits for pool salesforce: all 1 of its slot(s) are held" in text, text
    assert "a slot is free for it" not in text


def test_explain_names_a_weight_that_does_not_fit_the_free_slots(held: dict[str, Any]) -> None:
    ids = run_ids(held["url"])
    doc = json.loads(tickq("explain", "wide", "--json", "--database-url", held["url"]).stdout)
    assert doc["queue"]["waits_for"] == [
        {"what": "slots", "weight": 2, "free": 1, "slots": 4}], doc["queue"]
    assert {h["kind"]: h["weight"] for h in doc["queue"]["holders"]} == {"ingest": 2,
                                                                         "sf_sync": 1}
    text = tickq("explain", "wide", "--database-url", held["url"]).stdout
    assert "  slots: 1 of 4 free; each run of it takes 2" in text, text
    assert f"    held by run {ids['ingest']} of ingest (weight 2) on " in text, text
    assert "it waits for 2 free slots (its weight); 1 of 4 are free" in text, text
    assert "takes: 2 of the global slots per run" in text
    running = tickq("explain", "ingest", "--database-url", held["url"]).stdout
    assert "takes: 2 of the global slots per run and a slot of pool smb" in running, running


def test_history_shows_a_runs_weight_and_pools(held: dict[str, Any]) -> None:
    ids = run_ids(held["url"])
    rows = json.loads(tickq("history", "ingest", "--json", "--database-url", held["url"]).stdout)
    assert [(r["run_id"], r["weight"], r["pools"]) for r in rows] == [(ids["ingest"], 2, ["smb"])]
    table = tickq("history", "ingest", "--database-url", held["url"]).stdout.splitlines()
    assert table[0].split()[-2:] == ["weight", "pools"], table
    assert table[2].split()[-2:] == ["2", "smb"], table
    one = tickq("history", "--run", str(ids["sf_sync"]), "--database-url", held["url"]).stdout
    assert re.search(r"^weight +1$", one, re.M) and re.search(r"^pools +salesforce$", one, re.M)


def test_metrics_have_each_pools_slots_and_pass_promtool(held: dict[str, Any]) -> None:
    text = tickq("metrics", "--database-url", held["url"]).stdout
    found = {(s.name, frozenset(s.labels.items())): s.value
             for f in text_string_to_metric_families(text) for s in f.samples}

    def pool(name: str, which: str) -> float:
        return found[(name, frozenset({("pool", which)}))]

    assert (pool("tickq_pool_slots", "salesforce"), pool("tickq_pool_slots_used", "salesforce"),
            pool("tickq_pool_slots_free", "salesforce"),
            pool("tickq_pool_kinds_waiting", "salesforce")) == (1, 1, 0, 1)
    assert (pool("tickq_pool_slots", "smb"), pool("tickq_pool_slots_used", "smb")) == (2, 1)
    assert found[("tickq_slots_used", frozenset())] == 3  # ingest's weight and sf_sync
    assert found[("tickq_kind_weight", frozenset({("kind", "ingest")}))] == 2
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run `make test`"
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0 and not (checked.stdout + checked.stderr).strip(), (
        checked.stdout + checked.stderr)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium"), 1280, 900)
    yield b
    b.close()


PLOTS = """[...document.querySelectorAll('svg.pool-plot, #slot-plot')].map(s => {
    const limit = s.querySelector('line.limit'), path = s.querySelector('path.occupancy');
    return {pool: s.dataset.pool || null, limit: +s.dataset.limit, peak: +s.dataset.peak,
            x1: +limit.getAttribute('x1'), x2: +limit.getAttribute('x2'),
            limit_y: +limit.getAttribute('y1'), d: path.getAttribute('d'),
            right: s.getBoundingClientRect().right}; })"""


def test_the_page_plots_each_pool_under_the_global_slots(held: dict[str, Any],
                                                         browser: Browser) -> None:
    page = held["folder"] / "status.html"
    made = tickq("report", "--html", str(page), "--hours", "0.1", "--database-url", held["url"])
    assert made.returncode == 0, made.stderr
    browser.open(page)
    plots = browser.value(PLOTS)
    assert [p["pool"] for p in plots] == [None, "salesforce", "smb"], plots  # full one first
    for p in plots:
        assert (p["x1"], p["x2"]) == (plots[0]["x1"], plots[0]["x2"]), "one time axis"
        ys = [float(y) for y in re.findall(r"(?:M[\d.]+,|V)([\d.]+)", p["d"])]
        assert ys and min(ys) >= p["limit_y"], f"{p['pool']} drawn above its limit"
        assert p["right"] <= 1280
    assert [(p["limit"], p["peak"]) for p in plots] == [(4, 3), (1, 1), (2, 1)], plots
    rows = browser.value("[...document.querySelectorAll('#pools tr.pool')].map(r => "
                         "[r.dataset.pool, r.classList.contains('full'), r.innerText])")
    assert [(r[0], r[1]) for r in rows] == [("salesforce", True), ("smb", False)], rows
    assert "sf_sync (run " in rows[0][2] and "ingest (run " in rows[1][2]
    tile = browser.value("document.getElementById('pools-full').innerText")
    assert re.match(r"1/2\s*pools full", tile), tile
    assert browser.value("document.documentElement.scrollWidth") <= 1280


def test_the_page_stays_bounded_however_many_pools(
    tmp_path: Path, pg_server_url: str, template_db: str, browser: Browser,
) -> None:
    """60 pools: 8 plots, 50 table rows and a line that counts the rest."""
    from tickq import db

    pools = "".join(f"\n[pools.p{n:02d}]\nslots = 1\n" for n in range(60))
    kinds = "".join(f'\n[kinds.k{n:02d}]\ncommand = ["true"]\nevery = "1d"\ntimeout = "10s"\n'
                    f'pools = ["p{n:02d}"]\n' for n in range(60))
    registry = tmp_path / "registry.toml"
    registry.write_text("[settings]\nslots = 3\n" + pools + kinds)
    name = f"t_pools_many_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        sync = tickq("sync", "--registry", str(registry), "--database-url", url)
        assert sync.returncode == 0, sync.stderr + sync.stdout
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE tickq.job_kind SET due_at = now() + interval '1 hour'")
        page = tmp_path / "status.html"
        assert tickq("report", "--html", str(page), "--database-url", url).returncode == 0
        browser.open(page)
        assert browser.value("document.querySelectorAll('svg.pool-plot').length") == 8
        assert browser.value("document.querySelectorAll('#pools tr.pool').length") == 50
        more = browser.value("document.getElementById('pools-more').innerText")
        assert more.startswith("10 more pools"), more
        status = tickq("status", "--database-url", url).stdout.splitlines()
        assert not [line for line in status if line.startswith("pool ")], status
        assert "60 more pool(s), none held or waited on" in "\n".join(status)
    finally:
        db.drop_database(pg_server_url, name)


def test_explain_names_capacity_held_for_a_stale_kind(held: dict[str, Any]) -> None:
    """wide (weight 2) has waited past stale_after and still does not fit the one free slot:
    the claim holds its weight, so light, which would fit, waits for it (and is not claimed)."""
    with psycopg.connect(held["url"], autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '20 minutes' "
                     "WHERE name = 'wide'")
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute' "
                     "WHERE name = 'light'")
    doc = json.loads(tickq("explain", "light", "--json", "--database-url", held["url"]).stdout)
    assert doc["queue"]["waits_for"] == [
        {"what": "held", "kind": "wide", "weight": 2, "pools": []}], doc["queue"]
    text = tickq("explain", "light", "--database-url", held["url"]).stdout
    assert ("it waits for wide, ahead of it and due past half of stale_after: the claim holds "
            "2 slots for it until it fits") in text, text
    assert "a slot is free for it" not in text
    assert "light" not in leased(held["url"])
