"""`tickq legacy import FILE...`: read each old file by its kind, print (or, with --write,
append) the kinds that replace its jobs, say in one line each what is left as it is, and with
--write comment the moved lines of line-based files behind their markers.

With --write (or --database-url) the queue judges the kinds first (registry_problems: import and
sync never disagree) and says which kinds' slots the registry's tick would run late, with the
tick that keeps them on time; a registry the import creates gets that tick."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

from tickq.cli.legacy import OldFiles, read_text, write_file
from tickq.db.api import legacy, session
from tickq.db.api import registry as registry_api
from tickq.db.errors import EXIT_CONFIG, EXIT_OK, InvalidInput
from tickq.legacy import clock, importing, oldfile
from tickq.legacy.kindtoml import toml_string
from tickq.legacy.oldjob import OldJob
from tickq.legacy.parity import label
from tickq.registry import RegistryError
from tickq.registry.durations import format_duration
from tickq.registry.parse import parse_registry


def _chains(args: argparse.Namespace) -> list[importing.Chain]:
    for name, first, last in args.chain:
        if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
            raise InvalidInput(f"--chain {name} {first} {last}: FROM-LINE and TO-LINE must be "
                               "line numbers, FROM-LINE <= TO-LINE")
    return [importing.Chain(name, int(first), int(last)) for name, first, last in args.chain]


def _registry(path: Path) -> tuple[str, dict[str, Any]]:
    text = read_text(path) if path.exists() else ""
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"{path}: invalid TOML: {e}") from None


def _legacy_lines(doc: dict[str, Any]) -> dict[str, str]:
    """The registry's legacy lines, each with the kind (or KIND/STEP) that has it."""
    found: dict[str, str] = {}
    for name, kind in (doc.get("kinds") or {}).items():
        if isinstance(kind, dict) and isinstance(kind.get("legacy"), str):
            found.setdefault(kind["legacy"], name)
        for step in kind.get("steps") or [] if isinstance(kind, dict) else []:
            if isinstance(step, dict) and isinstance(step.get("legacy"), str):
                found.setdefault(step["legacy"], f"{name}/{step.get('name')}")
    return found


def _new_zone(files: OldFiles) -> str:
    """The zone a new registry takes: its jobs' one zone, else the machine's."""
    zones = {j.schedule.get("timezone") for j in files.items() if isinstance(j, OldJob)}
    zones.discard(None)
    return str(zones.pop()) if len(zones) == 1 else clock.host_zone()


def _options(args: argparse.Namespace, doc: dict[str, Any], zone: str,
             registry_path: Path) -> importing.Options:
    kinds = doc.get("kinds") if isinstance(doc.get("kinds"), dict) else {}
    return importing.Options(
        taken=list(kinds), legacy=_legacy_lines(doc), chains=_chains(args),
        irreversible=args.irreversible, every=args.every, timeout=args.timeout,
        base=registry_path.absolute().parent.resolve(), timezone=zone)


def cmd_import(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    if (args.chain or args.irreversible) and len(paths) > 1:
        raise InvalidInput("--chain and --irreversible name lines of one FILE: give that FILE "
                           "alone")
    registry_path = Path(args.registry)
    if args.write:
        for path in paths:
            try:
                oldfile.write_target(path)
            except oldfile.OldFileRefused as e:
                raise InvalidInput(str(e)) from None
    registry_text, doc = _registry(registry_path)
    files = OldFiles(paths)
    new = args.write and not registry_path.exists()
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    zone = _new_zone(files) if new else str(settings.get("timezone", "UTC"))
    try:
        plan = importing.plan_import(files.items(), _options(args, doc, zone, registry_path))
    except importing.ImportRefused as e:
        raise InvalidInput(str(e)) from None
    header = _header(zone, len(plan.kinds)) if new and plan.kinds else ""
    if plan.kinds and (args.write or args.database_url):
        plan, header = _judged(args, plan, registry_path, registry_text, header)
    _say_left(plan, files)
    if not plan.kinds and not plan.already:
        if not files.unread:
            print(f"{', '.join(map(str, paths))}: no job to move", file=sys.stderr)
        return EXIT_CONFIG if files.unread else EXIT_OK
    addition = (f"# Moved from {', '.join(p.name for p in paths)} by `tickq legacy import`; "
                "`legacy` is the old line.\n\n" + plan.registry_text()) if plan.kinds else ""
    if not args.write:
        sys.stdout.write(header + addition)
        print(f"# {len(plan.kinds)} kind(s); nothing written (add --write to append them to "
              f"{registry_path} and comment the old lines)", file=sys.stderr)
    else:
        _write(plan, files, registry_path, registry_text, header + addition)
    return EXIT_CONFIG if files.unread else EXIT_OK


def _header(zone: str, kinds: int) -> str:
    """A new registry's settings: the jobs' zone, and a slot for each kind and one for tickq's
    housekeeping (cron started every job on time whatever else ran; so does that)."""
    slots = (f"slots = {kinds + 1}   # one a kind and one for housekeeping: none waits for "
             "another, as under cron\n") if kinds + 1 > 3 else ""
    return f"[settings]\ntimezone = {toml_string(zone)}\n{slots}\n"


def _say_left(plan: importing.ImportPlan, files: OldFiles) -> None:
    for line in files.unread:
        print(f"tickq: {line}", file=sys.stderr)
    for refusal in sorted(plan.skipped, key=lambda r: (str(r.source), r.lines or (0, 0))):
        print(f"{refusal.source}:{refusal.where}: left as it is: {refusal.reason}",
              file=sys.stderr)
    for job, target in plan.already:
        print(f"{job.source}:{job.where}: already in the registry as {label(target)} (its "
              "legacy line): not added again", file=sys.stderr)


def _judged(args: argparse.Namespace, plan: importing.ImportPlan, registry_path: Path,
            registry_text: str, header: str) -> tuple[importing.ImportPlan, str]:
    """`plan` without the kinds the queue's own rules (registry_problems) would refuse, and the
    header a new registry gets (with the tick that keeps its slots on time)."""
    base = registry_path.absolute().parent
    with session.open_queue(session.url(args.database_url)) as conn:

        def judge(text: str) -> list[str]:
            try:
                found = registry_api.problems_of(conn, parse_registry(header + text,
                                                                      registry_path, base))
            except RegistryError as e:
                found = e.problems
            return [f"{p.key}: {p.message}" if p.key else p.message for p in found]

        try:
            plan = importing.vetted(plan, registry_text, judge)
        except importing.ImportRefused as e:
            raise InvalidInput(str(e)) from None
        if not plan.kinds:
            return plan, header
        text = header + importing.joined(registry_text, plan.registry_text())
        late = legacy.tick_precision(conn, parse_registry(text, registry_path, base))
    return plan, _precision(late, header, registry_path)


def _precision(late: list[dict[str, Any]], header: str, registry_path: Path) -> str:
    """Say which kinds the tick runs late; a new registry's header with the tick that does not.
    The rule is SQL's (tickq.tick_lateness): this only prints it."""
    def said(interval: Any) -> str:
        return format_duration(int(interval.total_seconds()))

    for row in late:
        shape = "%H:%M" if row["slot_time"].second == 0 else "%H:%M:%S"
        print(f"tickq: kind {row['kind']!r}: its slots fall between ticks: "
              f"{row['slot_time']:{shape}} ({row['timezone']}) runs at "
              f"{row['runs_time']:{shape}}, {said(row['late_by'])} late with tick = "
              f"\"{said(row['tick'])}\"", file=sys.stderr)
    if not late or late[0]["on_time"] is None:
        return header
    tick = said(late[0]["on_time"])
    if header:
        print(f'tickq: the new registry gets tick = "{tick}", which keeps every slot on time',
              file=sys.stderr)
        return header.replace("\n\n", f'\ntick = "{tick}"   # keeps every slot on time\n\n', 1)
    print(f'tickq: tick = "{tick}" in [settings] of {registry_path} keeps every slot on time',
          file=sys.stderr)
    return header


def _write(plan: importing.ImportPlan, files: OldFiles, registry_path: Path,
           registry_text: str, addition: str) -> None:
    new_registry = importing.joined(registry_text, addition) if addition else registry_text
    try:
        tomllib.loads(new_registry)
    except tomllib.TOMLDecodeError as e:  # a bug here must not leave a registry tickq refuses
        raise InvalidInput(f"the kinds would make {registry_path} invalid TOML: {e}") from None
    # The old files first: if the registry cannot be written, put them back, so that a failure
    # never leaves both the old line and its kind running.
    written: list[tuple[Path, str]] = []
    try:
        for path, text in files.texts.items():
            changed = importing.apply_import(plan, path, text)
            if changed != text:
                write_file(oldfile.write_target(path), changed)
                written.append((path, text))
        if new_registry != registry_text:
            write_file(registry_path, new_registry)
    except OSError:
        for path, text in written:
            write_file(path, text)
        raise
    for kind in plan.kinds:
        where = ", ".join(f"{job.source}:{job.where}" for job, _ in kind.jobs)
        print(f"{kind.name}: {where} -> {registry_path}")
    for job, target in plan.already:
        if job.lines is not None:
            print(f"{target}: {job.source}:{job.where} marked as moved to it")
