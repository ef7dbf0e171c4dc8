"""`tickq check` and `tickq simulate`: print what the capacity and worst-case SQL decided.

The verdicts come from the database (tickq.capacity_verdict_at, tickq.simulation_worst); this
module reads the registry, runs the drivers in tickq.check and prints their answers in tables
that fit 100 columns.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from tickq.check import capacity, simulate
from tickq.cli import common
from tickq.cli.text import table
from tickq.db.api import registry as registry_api
from tickq.db.api import schedule, session
from tickq.db.api.check import CapacityReport, KindWait, Window
from tickq.db.contract import LANES
from tickq.db.errors import EXIT_NO, EXIT_OK, InvalidInput
from tickq.registry import Registry
from tickq.registry.durations import format_duration, human_duration


def _queue_facts(args: argparse.Namespace, registry: Registry) -> capacity.QueueFacts:
    """What the check needs of the queue, only read there (its history, its agents): any role
    that may read the queue will do (sql/roles.sql's dispatcher or reader). The queue's schema
    is migrated first where the role may; on timeouts the registry may only shorten until the
    registry is judged (in a scratch database)."""
    timeouts = registry_api.provisional_timeouts(registry.settings)
    with session.connect(common.url(args), timeouts) as conn:
        session.migrate(conn)
        return capacity.queue_facts(conn, registry, observed=args.durations == "observed")


# ---------------------------------------------------------------- commands


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 when the slot shares fit the slots less the margin and no kind waits past
    stale_after in the worst case, else 1."""
    from tickq.host import programs

    with contextlib.ExitStack() as stack:
        # Scratch databases for the check and its proposals (tickq.db.scratch: on the server
        # TICKQ_SCRATCH_URL names, else the embedded one; usually kept ones put back), taken
        # while the registry is read and the queue is asked; the registry is synced into the
        # first meanwhile, which judges its values (a refused registry waits for no more than
        # that), and at the same time into the one aside, where the capacity is judged (and
        # what it left there is copied beside the first: tickq.db.api.scratches).
        sim = stack.enter_context(simulate.scratch(session.scratch_server(), aside=True))
        registry = common.registry(args)
        sim.preload(registry)
        facts = _queue_facts(args, registry)
        sim.preloaded(registry)
        # The worst case runs in the scratch databases while the capacity is judged in the one
        # aside (a check waits for the longer, not both). The thread ends before its databases
        # are dropped (its pool closes first).
        beside = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="tickq-worst"))
        # Without --suggest the databases beside the first are not used again.
        worst = beside.submit(simulate.evaluate, sim, registry, facts.durations, facts.agents,
                              last=not args.suggest)
        stack.callback(sim.cancel_until, worst)  # a failure or ^C here stops it at once
        report = capacity.check(sim.aside_synced(registry), registry, facts)
        warnings = schedule.schedule_warnings(sim.aside(), registry)
        _print_capacity(report)
        for warning in warnings:  # said, never a failure: cron's rule is what the user wrote
            print(f"tickq: warning: {warning}", file=sys.stderr)
        unstartable = programs.problems(registry)
        for problem in unstartable:
            print(f"tickq: {problem}", file=sys.stderr)
        lacking = common.agents_cannot_run(registry)
        if lacking:  # the agents' runs fail until it is installed; the kinds are not concerned
            print(f"tickq: warning: {lacking}", file=sys.stderr)
        result = worst.result()
        _print_worst_case(result, registry, args.durations)
        if args.suggest and result.starved:
            from tickq.check import suggest

            print(suggest.render(suggest.suggest(sim, registry, facts.durations, result)))
    fits = report.verdict.fits
    return EXIT_OK if fits and not result.starved and not unstartable else EXIT_NO


def cmd_simulate(args: argparse.Namespace) -> int:
    """Exit 1 when any kind waits longer than stale_after in the simulated hours."""
    if args.hours is not None and not 0 < args.hours < 24 * 366:
        raise InvalidInput(f"--hours must be more than 0 and less than {24 * 366} (366 days), "
                           f"got {args.hours:g}")
    registry = common.registry(args)
    facts = _queue_facts(args, registry)
    server = session.scratch_server()
    started = time.monotonic()
    result = simulate.replay(server, registry, args.hours, facts.durations, facts.agents,
                             at=args.at)
    elapsed = time.monotonic() - started
    window = result.windows[0]
    print(f"simulated {utc(window.starts_at)} to {utc(window.ends_at)}"
          + ("" if args.hours else f" (every schedule once: {human(window.period)})"))
    print(table(["kind", "lane", "runs", "longest wait", "starved", "worst wait began"],
                 wait_rows(result)))
    starving = sorted({k.lane for k in result.starved}, key=LANES.index)
    stale = human(dt.timedelta(seconds=registry.settings.stale_after))
    skipped = any(k.longest_wait is None or k.longest_wait.total_seconds()
                  <= registry.settings.stale_after for k in result.starved)
    verdict = (f"starving lanes: {', '.join(starving)} (waited longer than {stale}"
               + (", or skipped slots past a catch_up)" if skipped else ")")
               if starving else f"no kind waited longer than {stale}")
    print(f"\n{float(window.hours):g} simulated hours with {args.durations} durations in "
          f"{elapsed:.1f}s: {verdict}")
    return EXIT_NO if starving else EXIT_OK


def _print_capacity(report: CapacityReport) -> None:
    print(table(
        ["kind", "lane", "schedule", "runs/tick", "expected", "from", "slot share"],
        [[k.kind, k.lane, k.schedule, f"{k.runs_per_tick:.4f}", human(k.expected_duration),
          k.duration_source, f"{k.slot_share:.4f}"] for k in report.kinds],
        width=100, shrink=(0, 2),  # kind and schedule are cut to fit 100 columns
    ))
    print()
    print(table(
        ["lane", "kinds", "runs/tick", "slot share"],
        [[row.lane, str(row.kinds), f"{row.runs_per_tick:.4f}", f"{row.slot_share:.4f}"]
         for row in report.lanes],
    ))
    v = report.verdict
    print(f"\ncapacity {'fits' if v.fits else 'DOES NOT FIT'}: total slot share {v.slot_share:.2f} "
          f"against {v.budget:.2f} ({v.slots} slots less a {float(v.margin):.0%} margin);\n"
          f"{v.runs_per_tick:.2f} runs asked per tick")
    if v.worst_lane:
        print(f"the {v.worst_lane} lane takes the most ({v.worst_lane_share:.2f} slots): slow its "
              "cadences, shorten its timeouts, or add slots", file=sys.stderr)


def _print_worst_case(result: simulate.WorstCase, registry: Registry, durations: str) -> None:
    held = "timeout" if durations == "timeout" else "observed p95, else its timeout"
    print(f"\nworst case, every run taking its {held}:")
    for window in result.windows:
        first, *more = describe(window)
        print(f"  simulated {first}")
        for line in more:
            print(f"    {line}")
    print(table(["kind", "lane", "runs", "longest wait", "starved", "worst wait began"],
                 wait_rows(result), width=100, shrink=(0,)))
    stale = registry.settings.stale_after
    if result.starved:
        print(f"\nworst case STARVES {len(result.starved)} kind(s):")
        for line in starved_lines(result, stale, registry=registry):
            print(f"  {line}")
    else:
        print("\nworst case fits: no kind waits longer than stale_after "
              f"{human(dt.timedelta(seconds=stale))}")


# ---------------------------------------------------------------- text for people


def human(value: dt.timedelta | float | None) -> str:
    """A duration as the registry writes it ("5m", "1h30m"); under a second, "0s"."""
    return human_duration(value, tenths=False)


def utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe(window: Window) -> list[str]:
    """Which window was covered and why, in short lines (check's output fits 100 columns)."""
    what = (f"the month end of {window.month_end:%B %Y} (a {window.month_end.day}-day month)"
            if window.month_end else "every schedule once")
    lines = [f"{utc(window.starts_at)} to {utc(window.ends_at)}: {what} ({human(window.period)}),",
             "opened the longest timeout early and closed stale_after late"]
    if window.dst_zone:
        lines.append(f"holds a daylight-saving change of {window.dst_zone}")
    return lines


def wait_rows(result: simulate.WorstCase) -> list[list[str]]:
    """kind, lane, runs, longest wait (or "not due in window"), starved, from."""
    return [
        [k.kind, k.lane, str(k.runs),
         "not due in window" if k.longest_wait is None else human(k.longest_wait),
         "STARVED" if k.starved else "-",
         utc(k.worst_due_at) if k.worst_due_at else "-"]
        for k in result.kinds
    ]


def waited_for(kind: str, behind: list[str], registry: Registry | None) -> str:
    """What a starved kind needed beyond one free slot: a pool the kinds it waited behind held
    (named, with its slots), its weight in slots at once."""
    own = registry.kinds.get(kind) if registry is not None else None
    if own is None or registry is None:
        return ""
    needs = []
    for pool in own.pools:
        holders = [b for b in behind if b in registry.kinds and pool in registry.kinds[b].pools]
        if holders:
            needs.append(f'pool "{pool}" (slots = {registry.pools.get(pool)}) held by '
                         + ", ".join(holders[:3]) + (" and more" if len(holders) > 3 else ""))
    if own.weight > 1:
        needs.append(f"weight {own.weight}: {own.weight} of the {registry.settings.slots} slots "
                     "free at once")
    return "; needs " + "; ".join(needs) if needs else ""


def month_end(k: KindWait, windows: list[Window]) -> str:
    """", at the month end of ..." when the kind's worst wait began at one: in a month-end
    window, or on the last or first day of a month in the kind's zone (the database's
    KindWait.month_end)."""
    window = windows[k.in_window - 1] if 0 < k.in_window <= len(windows) else None
    ending = window.month_end if window and window.month_end else k.month_end
    return f", at the month end of {ending:%B %Y} ({ending.day} days)" if ending else ""


def starved_lines(result: simulate.WorstCase, stale_after: int, most: int = 6,
                  registry: Registry | None = None) -> list[str]:
    """One line per starved kind: the worst wait, when it began (and the month end it is at),
    what it waited behind, and the pool or weight it needed."""
    lines = []
    for k in sorted(result.starved, key=lambda k: (-(k.longest_wait or dt.timedelta()), k.kind)):
        behind = k.behind or []
        also = f" and {len(behind) - most} more" if len(behind) > most else ""
        wait = k.longest_wait or dt.timedelta()
        # Starved within stale_after: the full queue made it skip slots past its catch_up.
        why = (f"longer than stale_after {format_duration(stale_after)}"
               if wait.total_seconds() > stale_after else "and skips slots past its catch_up")
        at = month_end(k, result.windows)
        lines.append(f"{k.kind} ({k.lane}) waits {human(wait)}, {why}: "
                     f"due {utc(k.worst_due_at)}{at}"
                     if k.worst_due_at else f"{k.kind} ({k.lane}) starved")
        if behind:
            lines[-1] += f", behind {', '.join(behind[:most])}{also}"
        lines[-1] += waited_for(k.kind, behind, registry)
    return lines
