"""`tickq metrics` and `tickq explain`: what an outside watcher scrapes, and the one screen an
operator paged at night reads first."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from tickq.cli import common
from tickq.db.api import status
from tickq.db.errors import EXIT_OK
from tickq.registry.durations import coarse_duration, human_duration


def cmd_metrics(args: argparse.Namespace) -> int:
    """The queue as Prometheus metrics (text exposition format), computed by the database."""
    with common.open_queue(args) as conn:
        sys.stdout.write(status.metrics_text(conn))
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """Why KIND is or is not running now: the database decides the state, this prints it."""
    with common.open_queue(args) as conn:
        doc = status.explain_kind(conn, args.kind)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print("\n".join(explain_lines(doc)))
    return EXIT_OK


def _time(value: str | None) -> datetime | None:
    """An ISO time of the JSON, or None; PostgreSQL's 'infinity' (a due time an operator set so
    that a kind never runs) is None too: "-", never an error."""
    if value is None or value in ("infinity", "-infinity"):
        return None
    return datetime.fromisoformat(value)


def _at(value: str | None, now: datetime, zone: str = "UTC") -> str:
    """"2026-12-02 06:00:00 Europe/London (06:00:00 UTC, in 4h)"; UTC alone for UTC."""
    when = _time(value)
    if when is None:
        return "-"
    utc = f"{when.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
    seconds = (when - now).total_seconds()
    rel = ("now" if abs(seconds) < 1 else f"in {coarse_duration(seconds)}" if seconds > 0
           else f"{coarse_duration(-seconds)} ago")
    if zone == "UTC":
        return f"{utc} ({rel})"
    return f"{when.astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M:%S} {zone} ({utc}, {rel})"


def _state_lines(doc: dict[str, Any], now: datetime) -> list[str]:
    kind, state = doc["kind"], doc["state"]
    if state == "retired":
        return [f"retired: gone from the registry since {_at(doc['retired_at'], now)}; it runs "
                "again only when the registry names it again"]
    if state == "running":
        run = doc["run"]
        lines = [f"running: run {run['run_id']} ({run['trigger']}, attempt {run['attempt']}) on "
                 f"{run['dispatcher']} since {_at(run['started_at'] or run['claimed_at'], now)}",
                 f"  lease until {_at(run['leased_until'], now)}"]
        if run["lease_expired"]:
            lines.append("  its lease has run out: its dispatcher is likely gone; the next tick "
                         "marks the run lost and the kind due again")
        return lines
    if state == "disabled":
        return [f"disabled: the registry says enabled = false; `tickq run {kind}` still runs it "
                "by hand"]
    if state == "unarmed":
        return [f"unarmed: an irreversible kind no person has run yet; its schedule runs it only "
                f"after `tickq run {kind}` ends ok once (arming cannot be undone)"]
    if state == "paused":
        pause = doc["pause"]
        until = ("until resumed" if pause["until"] is None
                 else f"until {_at(pause['until'], now)}")
        lines = [f"paused by {pause['by'] or 'unknown'} {until}"
                 + (f": {pause['reason']}" if pause["reason"] else ""),
                 f"  `tickq resume {kind}` ends the pause"]
        if doc["next_due_at"]:
            lines.append(f"  then due {_at(doc['next_due_at'], now, doc['timezone'])}")
        return lines
    if state == "waiting":
        return _waiting_lines(doc, now)
    return [f"idle until its next slot: {_at(doc['next_due_at'], now, doc['timezone'])}"]


def _waiting_lines(doc: dict[str, Any], now: datetime) -> list[str]:
    queue, stale_after = doc["queue"], coarse_duration(doc["stale_after"])
    head = (f"STALE: due since {_at(doc['due_at'], now)}, unclaimed past stale_after "
            f"({stale_after})" if doc["stale"] else
            f"waiting: due since {_at(doc['due_at'], now)}, unclaimed (stale after "
            f"{stale_after})")
    lines = [head, f"  place {queue['place']} of {queue['due_kinds']} due kinds in claim order, "
             f"{queue['lane_place']} of {queue['lane_due']} in lane {doc['priority']}"]
    if queue["ahead"]:
        lines.append(f"  ahead of it: {', '.join(queue['ahead'])}")
    weight = queue["weight"]
    lines.append(f"  slots: {queue['slots_free']} of {queue['slots']} free"
                 + (f"; each run of it takes {weight}" if weight > 1 else ""))
    lines.extend(_held(queue["holders"], now))
    for p in queue["pools"]:
        lines.append(f"  pool {p['pool']}: {p['free']} of {p['slots']} free"
                     + ("" if p["free"] else ": full"))
        lines.extend(_held(p["holders"], now, weighted=False))
    lines.extend(_verdict(queue))
    return lines


def _held(holders: list[dict[str, Any]], now: datetime, weighted: bool = True) -> list[str]:
    return [f"    held by run {h['run_id']} of {h['kind']}"
            + (f" (weight {h['weight']})" if weighted and h.get("weight", 1) > 1 else "")
            + f" on {h['dispatcher']} since {_at(h['since'], now)}, lease until "
            f"{_at(h['leased_until'], now)}" for h in holders]


def _verdict(queue: dict[str, Any]) -> list[str]:
    """Why the next tick does or does not claim it: what it waits for (the database's
    waits_for), else the kinds ahead of it."""
    lines = []
    for w in queue["waits_for"]:
        if w["what"] == "pool":
            lines.append(f"  it waits for pool {w['pool']}: all {w['slots']} of its slot(s) "
                         "are held (by the runs above)")
        elif w["what"] == "held":
            what = ([f"{w['weight']} slots"] if w["weight"] else []) + [
                f"pool {p}" for p in w["pools"]]
            lines.append(f"  it waits for {w['kind']}, ahead of it and due past half of "
                         f"stale_after: the claim holds {' and '.join(what)} for it until it fits")
        else:
            lines.append(f"  it waits for {w['weight']} free slots (its weight); {w['free']} of "
                         f"{w['slots']} are free")
    if lines:
        return lines
    free, place, weight = queue["slots_free"], queue["place"], queue["weight"]
    if free and place <= free - weight + 1:
        lines.append("  a slot is free for it: the next tick claims it" if weight == 1 else
                     f"  its {weight} slots are free: the next tick claims it")
    elif free:
        lines.append(f"  the free slot(s) go to the {place - 1} kind(s) ahead of it first")
    return lines


def explain_lines(doc: dict[str, Any]) -> list[str]:
    """The one screen: the state first, then the schedule, the last run and the last tick."""
    now = datetime.fromisoformat(doc["now"])
    lines = [f"{doc['kind']}: {doc['state']}", *_state_lines(doc, now)]
    lines.append(f"schedule: {doc['schedule']}, lane {doc['priority']}, zone {doc['timezone']}"
                 + (f"; next run is a retry (attempt {doc['attempts'] + 1})"
                    if doc["trigger"] == "retry" else ""))
    if doc["weight"] != 1 or doc["pools"]:
        lines.append(f"takes: {doc['weight']} of the global slots per run"
                     + ("" if not doc["pools"] else f" and a slot of pool {doc['pools'][0]}"
                        if len(doc["pools"]) == 1
                        else f" and a slot of each of pools {', '.join(doc['pools'])}"))
    last = doc["last"]
    if last is None:
        lines.append("last run: none finished yet")
    else:
        code = "" if last["exit_code"] is None else f", exit {last['exit_code']}"
        took = "" if last["duration"] is None else f", took {human_duration(last['duration'])}"
        lines.append(f"last run: run {last['run_id']} ended {last['outcome']}{code}{took}, "
                     f"finished {_at(last['finished_at'], now)}")
    streak = doc["failure_streak"]
    lines.append(f"failure streak: {streak}" + (
        f" (alerted as failing from {doc['alert_after']})" if streak else ""))
    tick = doc["tick"]
    if tick["last_tick_at"] is None:
        lines.append("last tick: none recorded: is the timer installed? (`tickq systemd print`)")
    else:
        age = (now - datetime.fromisoformat(tick["last_tick_at"])).total_seconds()
        late = ("; more than two ticks ago: is the timer firing?"
                if age > 2 * tick["seconds"] else "")
        lines.append(f"last tick: {_at(tick['last_tick_at'], now)} on {tick['host']} (tick every "
                     f"{coarse_duration(tick['seconds'])}){late}")
    return lines
