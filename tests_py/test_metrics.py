"""Prometheus metrics on a queue built by real ticks: `tickq metrics` parsed by prometheus_client's
own parser and checked by promtool (Debian's `prometheus` package; `make test` installs it), the
shipped alert rules unit-tested by `promtool test rules`, `serve`'s /metrics, and the tick's
metrics_file, replaced whole.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import tickq
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "examples" / "prometheus" / "tickq.rules.yml"

REGISTRY = """\
[settings]
slots = 3
retry_base = "1s"

[kinds.fine]
command = ["sh", "-c", "echo fine"]
every = "1h"
timeout = "10s"

[kinds.broken]
command = ["sh", "-c", "echo boom; exit 3"]
every = "1h"
timeout = "10s"

[kinds.slow]
command = ["sleep", "30"]
every = "1h"
timeout = "1s"

[kinds.behind]
command = ["sh", "-c", "echo caught up"]
every = "1h"
timeout = "10s"

[kinds.late]
command = ["sh", "-c", "echo late"]
every = "1h"
timeout = "10s"
"""


def promtool() -> str:
    path = shutil.which("promtool")
    # No skip: the format and the rules are only proven by Prometheus's own tool.
    assert path, "promtool is not installed: run `make test` (scripts/promtool.sh installs it)"
    return path


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the exposition text, by name and labels, as Prometheus's parser reads it."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict[Any, float], name: str, **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
          template_db: str) -> Iterator[dict[str, Any]]:
    """A queue after a real tick: an ok kind, a failing one, one killed at its timeout, one that
    caught up three missed slots in one run, and one left due past stale_after."""
    from tickq import db

    folder = tmp_path_factory.mktemp("metrics")
    (folder / "registry.toml").write_text(REGISTRY)
    name = f"t_metrics_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    registry = str(folder / "registry.toml")
    sync = tickq("sync", "--registry", registry, "--database-url", url)
    assert sync.returncode == 0, sync.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = date_trunc('hour', now()) "
                     "- interval '3 hours' WHERE name = 'behind'")
    tick = tickq("tick", "--registry", registry, "--database-url", url)
    assert tick.returncode == 0, tick.stderr + tick.stdout
    with psycopg.connect(url, autocommit=True) as conn:
        # `late` has waited 40 minutes, unclaimed: past the 15-minute stale_after.
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '40 minutes' "
                     "WHERE name = 'late'")
    yield {"url": url, "registry": registry, "folder": folder}
    db.drop_database(pg_server_url, name)


def _metrics(url: str) -> str:
    result = tickq("metrics", "--database-url", url)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_metrics_say_what_the_ticks_did(queue: dict[str, Any]) -> None:
    found = samples(_metrics(queue["url"]))
    assert value(found, "tickq_runs_total", kind="fine", outcome="ok") == 1
    assert value(found, "tickq_runs_total", kind="fine", outcome="failed") == 0
    assert value(found, "tickq_runs_total", kind="broken", outcome="failed") == 1
    assert value(found, "tickq_runs_total", kind="slow", outcome="timeout") == 1
    assert value(found, "tickq_kind_failure_streak", kind="broken") == 1
    assert value(found, "tickq_kind_failure_streak", kind="fine") == 0
    assert value(found, "tickq_merged_slots_total", kind="behind") >= 2
    assert value(found, "tickq_merged_slots_total", kind="fine") == 0
    assert value(found, "tickq_kind_stale", kind="late") == 1
    assert value(found, "tickq_kind_stale", kind="fine") == 0
    assert value(found, "tickq_kind_lateness_seconds", kind="late") >= 40 * 60
    assert value(found, "tickq_kind_lateness_seconds", kind="fine") == 0
    assert ("tickq_last_success_timestamp_seconds", frozenset({("kind", "fine")})) in found
    assert ("tickq_last_success_timestamp_seconds", frozenset({("kind", "broken")})) not in found
    # the histogram: slow was killed at 1s, so it is over the 1s bound and under 5s
    assert value(found, "tickq_run_duration_seconds_bucket", kind="slow", le="1") == 0
    assert value(found, "tickq_run_duration_seconds_bucket", kind="slow", le="5") == 1
    assert value(found, "tickq_run_duration_seconds_count", kind="slow") == 1
    assert value(found, "tickq_run_duration_seconds_sum", kind="slow") >= 1
    assert (value(found, "tickq_slots"), value(found, "tickq_slots_used"),
            value(found, "tickq_slots_free")) == (3, 0, 3)
    hosts = [dict(labels)["host"] for name, labels in found
             if name == "tickq_last_tick_timestamp_seconds"]
    assert len(hosts) == 1 and hosts[0]
    assert value(found, "tickq_tick_seconds") == 300 and value(found, "tickq_alert_after") == 3


def test_promtool_finds_nothing_to_lint(queue: dict[str, Any]) -> None:
    checked = subprocess.run([promtool(), "check", "metrics"], input=_metrics(queue["url"]),
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), (
        checked.stdout + checked.stderr)


def test_pruned_runs_stay_counted(queue: dict[str, Any], pg_server_url: str,
                                  template_db: str) -> None:
    """Housekeeping deletes old runs; a counter that fell would read as a reset."""
    from tickq import db

    name = f"t_metrics_prune_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        registry = queue["folder"] / "prune.toml"
        registry.write_text(REGISTRY.replace('retry_base = "1s"',
                                             'retry_base = "1s"\nkeep_runs = 1\nretention = "1s"'))
        for _ in range(2):
            assert tickq("run", "fine", "--registry", str(registry), "--database-url", url
                         ).returncode == 0
        assert tickq("run", "broken", "--registry", str(registry), "--database-url", url
                     ).returncode == 1
        before = samples(_metrics(url))
        with psycopg.connect(url, autocommit=True) as conn:
            (pruned,) = conn.execute("SELECT runs_pruned FROM tickq.housekeeping("
                                     "p_now => now() + interval '1 hour')").fetchone()
            (left,) = conn.execute("SELECT count(*) FROM tickq.job_run "
                                   "WHERE kind = 'fine'").fetchone()
        assert pruned >= 1 and left == 1
        after = samples(_metrics(url))
        counters = {k: v for k, v in before.items()
                    if k[0].startswith(("tickq_runs_total", "tickq_run_duration_seconds",
                                        "tickq_merged_slots_total",
                                        "tickq_last_success_timestamp_seconds"))}
        assert counters and {k: after[k] for k in counters} == counters
    finally:
        db.drop_database(pg_server_url, name)


RULE_TESTS = """\
rule_files:
  - {rules}
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # host a ticked every 5 minutes until minute 10, then never again
      - series: 'tickq_last_tick_timestamp_seconds{{host="a"}}'
        values: '0 0 0 0 0 300 300 300 300 300 600+0x40'
      - series: 'tickq_tick_seconds'
        values: '300+0x50'
      - series: 'tickq_alert_after'
        values: '3+0x50'
      - series: 'tickq_kind_stale{{kind="late"}}'
        values: '0 0 1+0x48'
      - series: 'tickq_kind_stale{{kind="fine"}}'
        values: '0+0x50'
      - series: 'tickq_kind_failure_streak{{kind="broken"}}'
        values: '1 2 3+0x48'
      - series: 'tickq_kind_failure_streak{{kind="fine"}}'
        values: '0+0x50'
      - series: 'tickq_slots_free'
        values: '0+0x70'
      # pool sf full throughout, two kinds waiting on it from minute 2; smb never full
      - series: 'tickq_pool_slots_free{{pool="sf"}}'
        values: '0+0x50'
      - series: 'tickq_pool_kinds_waiting{{pool="sf"}}'
        values: '0 0 2+0x48'
      - series: 'tickq_pool_slots_free{{pool="smb"}}'
        values: '1+0x50'
      - series: 'tickq_pool_kinds_waiting{{pool="smb"}}'
        values: '3+0x50'
    alert_rule_test:
      # at minute 20 the last tick (minute 10) is 10 minutes old: under 3 ticks (15 minutes)
      - eval_time: 20m
        alertname: TickqNoTick
        exp_alerts: []
      - eval_time: 26m
        alertname: TickqNoTick
        exp_alerts:
          - exp_labels: {{severity: critical}}
            exp_annotations:
              summary: "tickq: no tick from any host for 16m 0s"
              description: "{no_tick}"
      - eval_time: 1m
        alertname: TickqKindStale
        exp_alerts: []
      - eval_time: 5m
        alertname: TickqKindStale
        exp_alerts:
          - exp_labels: {{severity: warning, kind: late}}
            exp_annotations:
              summary: "tickq: late is stale"
              description: "Due and unclaimed past stale_after. `tickq explain late` says why."
      - eval_time: 1m
        alertname: TickqKindFailing
        exp_alerts: []
      - eval_time: 5m
        alertname: TickqKindFailing
        exp_alerts:
          - exp_labels: {{severity: warning, kind: broken}}
            exp_annotations:
              summary: "tickq: broken failed 3 times in a row"
              description: "`tickq history broken` shows its runs and their output."
      - eval_time: 50m
        alertname: TickqSlotsSaturated
        exp_alerts: []
      - eval_time: 61m
        alertname: TickqSlotsSaturated
        exp_alerts:
          - exp_labels: {{severity: warning}}
            exp_annotations:
              summary: "tickq: every slot has been held for an hour"
              description: "`tickq status` shows the runs holding them; `tickq check` the capacity."
      - eval_time: 30m
        alertname: TickqMetricsAbsent
        exp_alerts: []
      - eval_time: 25m
        alertname: TickqPoolSaturated
        exp_alerts: []
      - eval_time: 35m
        alertname: TickqPoolSaturated
        exp_alerts:
          - exp_labels: {{severity: warning, pool: sf}}
            exp_annotations:
              summary: "tickq: pool sf full for 30 minutes, 2 kind(s) waiting"
              description: "`tickq status` names the runs holding it; `tickq check` sizes it."
"""


def test_the_shipped_alert_rules_fire_when_they_should(tmp_path: Path) -> None:
    tool = promtool()
    checked = subprocess.run([tool, "check", "rules", str(RULES)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tests = tmp_path / "tickq.rules.test.yml"
    no_tick = ("No tick ended for more than three tick lengths. Look at the timer (`systemctl "
               "--user list-timers`, `launchctl list`, crontab) and run `tickq tick` by hand to "
               "see its error.\\n")
    tests.write_text(RULE_TESTS.format(rules=RULES, no_tick=no_tick))
    ran = subprocess.run([tool, "test", "rules", str(tests)], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0 and "SUCCESS" in ran.stdout, ran.stdout + ran.stderr


def test_the_rules_name_only_metrics_tickq_writes(queue: dict[str, Any]) -> None:
    text = _metrics(queue["url"])
    written = {f.name for f in text_string_to_metric_families(text)}
    named = set(re.findall(r"\btickq_[a-z_]+\b", RULES.read_text()))
    assert named and named <= written, named - written


def test_serve_answers_metrics_as_the_command_prints_them(db_url: str, tmp_path: Path) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY.split("[kinds.slow]")[0])  # fine and broken: nothing stays due
    assert tickq("tick", "--registry", str(registry), "--database-url", db_url).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "serve", "--port", "0", "--database-url", db_url],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:(\d+)/", line)
        assert match, line
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/metrics",
                                    timeout=30) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            served = response.read().decode()
    finally:
        proc.terminate()
        proc.wait(10)
    printed = _metrics(db_url)
    assert served == printed and "tickq_runs_total{" in printed


def test_a_tick_replaces_the_metrics_file_whole(db_url: str, tmp_path: Path) -> None:
    """Renamed over, never written in place: a reader that opened the old file still reads it
    whole, the new one is whole too, and nothing half-written is left beside them."""
    (tmp_path / "out").mkdir()
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY.split("[kinds.slow]")[0].replace(
        'retry_base = "1s"', 'retry_base = "1s"\nmetrics_file = "out/tickq.prom"'))
    target = tmp_path / "out" / "tickq.prom"
    first = tickq("tick", "--registry", str(registry), "--database-url", db_url)
    assert first.returncode == 0 and "metrics.written" in first.stdout, first.stderr
    with target.open() as old:
        assert tickq("run", "fine", "--registry", str(registry), "--database-url", db_url
                     ).returncode == 0
        second = tickq("tick", "--registry", str(registry), "--database-url", db_url)
        assert second.returncode == 0, second.stderr
        old_text = old.read()
    new_text = target.read_text()
    assert value(samples(old_text), "tickq_runs_total", kind="fine", outcome="ok") == 1
    assert value(samples(new_text), "tickq_runs_total", kind="fine", outcome="ok") == 2
    assert old_text.endswith("\n") and new_text.endswith("\n")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["tickq.prom"]
