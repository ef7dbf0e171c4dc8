"""The status page, `serve`, `history` and `upcoming` on a queue built by real ticks, looked at
in a real headless Chromium (Debian's `chromium`; `make test` installs it).

The queue holds an ok kind, a failing one, one killed at its timeout, a failure that succeeded
on its retry, a kind that waited past stale_after, and a kind whose output is hostile HTML: a
script that would retitle the page, and an image and a stylesheet from a local server that counts
requests. The page must show all of it and run or fetch none of it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from headless_browser import Beacon, Dom, browse
from processes import tickq

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "test-output"  # screenshots for people to look at (not committed)


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    b = Beacon()
    yield b
    b.close()


REGISTRY = """\
[settings]
slots = 3
retry_base = "1s"

[kinds.fine]
command = ["sh", "-c", "echo fine"]
every = "1h"
timeout = "10s"
priority = "high"

[kinds.broken]
command = ["sh", "-c", "echo boom; exit 3"]
every = "1h"
timeout = "10s"

[kinds.slow]
command = ["sleep", "30"]
every = "1h"
timeout = "1s"

[kinds.flaky]
command = ["sh", "-c", "[ -e flaky.flag ] && echo second try || { touch flaky.flag; exit 1; }"]
every = "1h"
timeout = "10s"
retries = 1

[kinds.late]
command = ["sh", "-c", "echo late"]
every = "1h"
timeout = "10s"
priority = "low"

[kinds.hostile]
command = ["sh", "-c", "cat payload.html; exit 1"]
every = "1h"
timeout = "10s"
priority = "low"
"""

PAYLOAD = (
    '<script>document.title="PWNED";document.documentElement.setAttribute("data-pwned","1")'
    '</script>\n<img src="http://127.0.0.1:{port}/img.png" onerror="document.title=\'PWNED\'">\n'
    '<link rel="stylesheet" href="http://127.0.0.1:{port}/style.css">\n'
    '&lt;b&gt;not bold&lt;/b&gt; &amp; "quotes" \'single\'\n'
)
KINDS = {"fine", "broken", "slow", "flaky", "late", "hostile", "tickq.housekeeping"}


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str, template_db: str,
          beacon: Beacon) -> Iterator[dict[str, Any]]:
    """A queue after real ticks, shared by the tests of this file (they only read it). Each kind
    runs hourly at the minute half an hour from now and is made due at once: nothing falls due
    again while the module runs (with `every = "1h"` an hour turning between the two ticks ran
    flaky a third time, on schedule)."""
    from tickq import db

    folder = tmp_path_factory.mktemp("page")
    minute = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=30)).minute
    (folder / "registry.toml").write_text(
        REGISTRY.replace('every = "1h"', f'cron = "{minute} * * * *"'))
    (folder / "payload.html").write_text(PAYLOAD.format(port=beacon.port))
    name = f"t_page_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    registry = str(folder / "registry.toml")
    sync = tickq("sync", "--registry", registry, "--database-url", url)
    assert sync.returncode == 0, sync.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        # `late` has waited 40 minutes when the tick claims it: past the 15-minute stale_after.
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - CASE name WHEN 'late' THEN "
                     "interval '40 minutes' ELSE interval '1 second' END "
                     "WHERE name NOT LIKE 'tickq.%'")
    first = tickq("tick", "--registry", registry, "--database-url", url)
    assert first.returncode == 0, first.stderr + first.stdout
    with psycopg.connect(url, autocommit=True) as conn:  # flaky's retry: due now, not waited for
        conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'flaky'"
                     " AND next_trigger = 'retry'")
    second = tickq("tick", "--registry", registry, "--database-url", url)
    assert second.returncode == 0, second.stderr + second.stdout
    with psycopg.connect(url, autocommit=True) as conn:
        (soonest,) = conn.execute("SELECT min(due_at) - now() FROM tickq.job_kind "
                                  "WHERE name NOT LIKE 'tickq.%'").fetchone()
    assert soonest > dt.timedelta(minutes=25), "no kind falls due again while the tests read"
    try:
        yield {"url": url, "registry": registry, "folder": folder}
    finally:
        db.drop_database(pg_server_url, name)


@pytest.fixture(scope="module")
def page(queue: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
         beacon: Beacon) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("page")
    html = folder / "status.html"
    result = tickq("report", "--html", str(html), "--database-url", queue["url"])
    assert result.returncode == 0, result.stderr
    dumped = browse(html, folder / "profile", "--dump-dom")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / "status-page.png"
    shot.unlink(missing_ok=True)
    browse(html, folder / "profile2", f"--screenshot={shot}", "--window-size=1200,1600")
    return {"file": html, "source": html.read_text(), "dom": Dom(dumped.stdout),
            "screenshot": shot}


# ---------------------------------------------------------------- the page in a browser


def test_one_timeline_row_per_kind_grouped_by_lane(page: dict[str, Any]) -> None:
    rows = page["dom"].find("g", class_="kind-row")
    assert {r["data-kind"] for r in rows} == KINDS
    assert len(rows) == len(KINDS)
    lanes = {r["data-kind"]: r["data-lane"] for r in rows}
    assert lanes["fine"] == "high" and lanes["late"] == "low" and lanes["broken"] == "normal"


def test_bars_carry_each_runs_outcome(page: dict[str, Any]) -> None:
    source = page["source"]

    def outcomes(kind: str) -> set[str]:
        row = re.search(rf'<g class="kind-row" data-kind="{re.escape(kind)}".*?</g>', source, re.S)
        assert row, kind
        return set(re.findall(r'<rect class="bar (\w+)"', row.group(0)))

    assert outcomes("fine") == {"ok"}
    assert outcomes("broken") == {"failed"}
    assert outcomes("slow") == {"timeout"}
    assert outcomes("flaky") == {"failed", "ok"}  # the failure and the retry that succeeded
    bars = page["dom"].find("rect", class_="bar")
    assert len(bars) >= 7
    assert all(float(b["width"]) >= 2 for b in bars), "every bar is visible"


def test_the_stale_wait_is_marked(page: dict[str, Any]) -> None:
    source = page["source"]
    late = re.search(r'<g class="kind-row" data-kind="late".*?</g>', source, re.S).group(0)
    fine = re.search(r'<g class="kind-row" data-kind="fine".*?</g>', source, re.S).group(0)
    assert 'class="stale-marker"' in late and 'class="wait"' in late
    assert "stale-marker" not in fine


def test_the_slot_plot_never_rises_above_the_limit(page: dict[str, Any]) -> None:
    dom = page["dom"]
    (plot,) = dom.find("svg", id="slot-plot")
    (limit,) = dom.find("line", class_="limit")
    (path,) = dom.find("path", class_="occupancy")
    ys = [float(y) for y in re.findall(r"(?:M[\d.]+,|V)([\d.]+)", path["d"])]
    assert ys, path["d"]
    assert min(ys) >= float(limit["y1"]), "a y above the limit line means more slots than allowed"
    assert 1 <= int(plot["data-peak"]) <= int(plot["data-limit"]) == 3


def test_job_output_is_text_and_nothing_runs_or_loads(page: dict[str, Any], beacon: Beacon) -> None:
    dom = page["dom"]
    assert dom.title.startswith("tickq:"), f"a script ran: title is {dom.title!r}"
    assert not [a for _t, a in dom.elements if "data-pwned" in a]
    assert not dom.find("script") and not dom.find("img") and not dom.find("link")
    tails = "\n".join(dom.pre_text)
    assert '<script>document.title="PWNED"' in tails, "the output is shown as text"
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp;" in tails, "entities in output stay as written"
    assert beacon.requests == [], "the page fetched something"
    assert not re.search(r'(src|href)="(https?:)?//', page["source"]), "no remote reference"


def test_a_screenshot_is_kept_for_people(page: dict[str, Any]) -> None:
    shot: Path = page["screenshot"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


# ---------------------------------------------------------------- serve


def _listening_address(port: int) -> str:
    """The local address the socket on `port` listens on, from /proc/net/tcp."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, _remote, state = line.split()[1:4]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":  # LISTEN
            return socket.inet_ntoa(bytes.fromhex(address)[::-1])
    raise AssertionError(f"nothing listens on port {port}")


def _serve(url: str, *extra: str) -> tuple[subprocess.Popen[str], int]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "serve", "--port", "0", "--database-url", url, *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"http://([\d.]+):(\d+)/", line)
    assert match, line + proc.stderr.read() if proc.poll() is not None else line
    return proc, int(match.group(2))


def test_serve_answers_the_page_and_nothing_else_on_loopback(queue: dict[str, Any]) -> None:
    proc, port = _serve(queue["url"])
    try:
        assert _listening_address(port) == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:
            assert response.status == 200
            body = response.read().decode()
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        assert 'class="kind-row" data-kind="fine"' in body
        for path, method, status in (("/nope", "GET", 404), ("/../etc/passwd", "GET", 404),
                                     ("/", "POST", 405), ("/", "DELETE", 405)):
            request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == status, (path, method)
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_listens_beyond_loopback_only_when_told(queue: dict[str, Any]) -> None:
    proc, port = _serve(queue["url"], "--host", "0.0.0.0")
    try:
        assert _listening_address(port) == "0.0.0.0"
    finally:
        proc.terminate()
        proc.wait(10)


# ---------------------------------------------------------------- history and upcoming


def test_history_lists_a_kinds_runs_and_one_runs_whole_tail(queue: dict[str, Any]) -> None:
    url = queue["url"]
    listed = tickq("history", "flaky", "--json", "--database-url", url)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [(r["outcome"], r["run_trigger"], r["attempt"]) for r in runs] == [
        ("ok", "retry", 2), ("failed", "schedule", 1)]
    table = tickq("history", "late", "--database-url", url)
    assert re.search(r"schedule\s+1\s+\S+ \S+\s+40m", table.stdout), table.stdout

    hostile = json.loads(tickq("history", "hostile", "--json", "--database-url", url).stdout)
    one = tickq("history", "--run", str(hostile[0]["run_id"]), "--database-url", url)
    assert one.returncode == 0 and "<script>document.title=\"PWNED\"" in one.stdout

    unknown = tickq("history", "fien", "--database-url", url)
    assert unknown.returncode == 1 and 'no kind "fien"' in unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_upcoming_lists_what_falls_due_in_order(queue: dict[str, Any]) -> None:
    result = tickq("upcoming", "--hours", "3", "--json", "--database-url", queue["url"])
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    times = [r["due_at"] for r in rows]
    assert times == sorted(times)
    assert {r["kind"] for r in rows} >= {"fine", "broken", "late"}
    with psycopg.connect(queue["url"]) as conn:
        (fine_due,) = conn.execute(
            "SELECT due_at FROM tickq.job_kind WHERE name = 'fine'").fetchone()
    assert min(r["due_at"] for r in rows if r["kind"] == "fine") == fine_due.isoformat()
    bad = tickq("upcoming", "--hours", "0", "--database-url", queue["url"])
    assert bad.returncode == 2 and "hours must be more than 0" in bad.stderr


def test_a_tick_rewrites_the_page_when_the_registry_asks(queue: dict[str, Any],
                                                          tmp_path: Path) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(Path(queue["registry"]).read_text().replace(
        'retry_base = "1s"', 'retry_base = "1s"\nreport_html = "out/status.html"'))
    (tmp_path / "out").mkdir()
    (tmp_path / "payload.html").write_text("x")
    result = tickq("tick", "--registry", str(registry), "--database-url", queue["url"])
    assert result.returncode == 0, result.stderr
    assert "report.written" in result.stdout
    assert 'class="kind-row"' in (tmp_path / "out" / "status.html").read_text()


def test_the_header_names_each_hosts_last_tick(page: dict[str, Any]) -> None:
    source = page["source"]
    host = socket.gethostname()
    row = re.search(rf"<tr><td>{re.escape(host)}</td><td>([^<]+)</td><td>([^<]+)</td>"
                    r'<td class="num">(\d+)</td></tr>', source)
    assert row, source[source.index('<table id="dispatchers">'):][:600]
    assert row.group(1) != "-" and row.group(2) != "-", "a tick and a claim were recorded"
    assert int(row.group(3)) >= 7, "every run of both ticks is counted for the host"
    assert re.search(r'id="paused-count"><b>0</b>', source)
    assert re.search(r'id="unarmed-count"><b>0</b>', source)
