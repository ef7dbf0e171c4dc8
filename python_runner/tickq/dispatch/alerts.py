"""Alerts: the events due now (each taken once across dispatchers, kept in SQL) go to the
registry's alert command, one thread each, the event as JSON on its stdin, and to its alert_url
as a webhook (the event as JSON with a `text` field, which Slack- and Mattermost-style incoming
webhooks show as is), delivered as check-ins are (dispatch/pings.py)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tickq.db.api import tick as api
from tickq.db.connect import Link
from tickq.db.errors import DatabaseUnavailable
from tickq.dispatch.context import Context
from tickq.dispatch.pings import tail_body
from tickq.host.process import Command, Watch, run_command


def send_alerts(ctx: Context, link: Link) -> list[threading.Thread]:
    """Take the alert events due now and start the alert command for each; the threads."""
    command, url = ctx.registry.settings.alert_command, ctx.registry.settings.alert_url
    if not command and not url:
        return []
    try:
        alerts = link.call(api.take_alerts)
    except DatabaseUnavailable as exc:
        ctx.log.error("alert.unavailable", error=str(exc))
        return []
    threads = []
    for a in alerts:
        doc = {
            "alert_id": a.alert_id, "kind": a.kind, "event": a.event, "condition": a.condition,
            "failure_streak": a.failure_streak, "last_outcome": a.last_outcome,
            "output_tail": a.output_tail, "dispatcher": ctx.name,
        }
        ctx.log.warning("alert.raised" if a.event != "recovered" else "alert.recovered",
                        kind=a.kind, condition=a.condition, failure_streak=a.failure_streak)
        if url and ctx.pinger is not None:
            ctx.pinger.send(url, body=webhook_body(doc), content_type="application/json",
                            what="alert", kind=a.kind)
        if command:
            thread = threading.Thread(target=_alert, args=(ctx, command, doc), daemon=True)
            thread.start()
            threads.append(thread)
    return threads


def webhook_body(doc: dict[str, Any]) -> bytes:
    """The alert as a webhook's JSON: the event's fields and a `text` line people read."""
    what = {
        "failing": f"failed {doc['failure_streak']} time(s) in a row, last outcome "
                   f"{doc['last_outcome']}",
        "stale": "is due and unclaimed past stale_after",
    }[doc["condition"]]
    text = (f"tickq: {doc['kind']} recovered ({doc['condition']})" if doc["event"] == "recovered"
            else f"tickq: {doc['kind']} {what}")
    tail = tail_body(doc["output_tail"] or "").decode()
    return json.dumps({**doc, "output_tail": tail, "text": text}).encode()


def _alert(ctx: Context, command: tuple[str, ...], doc: dict[str, Any]) -> None:
    from tickq.host import programs  # here: a tick that raises no alert resolves no program

    result = run_command(
        Command(programs.resolve(command, ctx.folder).argv, ctx.folder,
                stdin=json.dumps(doc).encode()),
        Watch(ctx.registry.settings.alert_timeout, grace=2.0, ledger=ctx.ledger,
              labels={"kind": doc["kind"], "alert_id": doc["alert_id"], "dispatcher": ctx.name}),
    )
    fields = {"kind": doc["kind"], "alert_event": doc["event"], "outcome": result.outcome}
    if result.outcome == "ok":
        ctx.log.event("alert.sent", **fields)
    else:
        ctx.log.error("alert.failed", **fields, exit_code=result.exit_code,
                      output_tail=result.output_tail[-1000:])


def join_alerts(ctx: Context, threads: list[threading.Thread]) -> None:
    """Wait for alert programs, each already bounded by its own timeout."""
    deadline = time.monotonic() + ctx.registry.settings.alert_timeout + 5.0
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
