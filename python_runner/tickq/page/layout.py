"""Where things go on the status page: times to x, values to y, rows to lanes. Numbers only;
every piece of text is placed by the template, which escapes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

LABEL_WIDTH = 230  # kind names left of the timeline
PLOT_WIDTH = 900
ROW_HEIGHT = 18
LANE_HEIGHT = 22
AXIS_HEIGHT = 22
SLOT_PLOT_HEIGHT = 120
POOL_PLOT_HEIGHT = 36  # each pool's own plot, under the global one on the same time axis
MIN_BAR = 2.0  # px: a run of 0.1 s stays visible (sql/api/13_page.sql merges what would touch)
CHAR_WIDTH = 6.2  # px of an 11 px label character, to keep labels apart
MARK_LABEL_HALF_WIDTH = 17  # px: half of "23:00"
MAX_MARKS = 12
# Bars the timeline draws one by one, each with its own hover text. Past this (a thousand kinds
# running every hour hold 24,000), each kind's bars of one outcome are one shape with the same
# bars in it, at the same places and lengths, and one hover text counting them: the picture is
# the same, the page a tenth of the size (bench/page_speed.py).
DETAILED_BARS = 2000
MARK_STEPS = [timedelta(seconds=s) for s in (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)]


@dataclass(frozen=True)
class Frame:
    """The window the page covers, left edge to right edge."""

    start: datetime
    end: datetime

    def x(self, when: datetime) -> float:
        span = (self.end - self.start).total_seconds() or 1.0
        offset = (min(max(when, self.start), self.end) - self.start).total_seconds()
        return round(LABEL_WIDTH + offset / span * PLOT_WIDTH, 2)

    @property
    def step(self) -> timedelta:
        """The axis step: the shortest of MARK_STEPS that leaves at most MAX_MARKS marks."""
        span = (self.end - self.start).total_seconds()
        return next((s for s in MARK_STEPS if span / s.total_seconds() <= MAX_MARKS),
                    MARK_STEPS[-1])

    def marks(self, tz: tzinfo) -> list[tuple[float, datetime, bool]]:
        """An x for each whole step of the reader's clock (`tz`) in the window, and whether its
        label fits: a label never runs past either edge of the timeline."""
        step = self.step
        local = self.start.astimezone(tz)
        midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
        since = (local - midnight).total_seconds()
        t = midnight + step * (int(since // step.total_seconds()) + 1)
        half = MARK_LABEL_HALF_WIDTH * (1.5 if step < timedelta(minutes=1) else 1)
        marks = []
        while t < self.end:
            x = self.x(t)
            marks.append((x, t, LABEL_WIDTH + half <= x <= LABEL_WIDTH + PLOT_WIDTH + 10 - half))
            t += step
        return marks


@dataclass
class Row:
    kind: str
    lane: str
    y: float
    bars: list[dict[str, Any]] = field(default_factory=list)
    waits: list[dict[str, Any]] = field(default_factory=list)
    stale_marks: list[dict[str, Any]] = field(default_factory=list)
    shapes: list[dict[str, Any]] = field(default_factory=list)  # a summarised timeline's
    marks: dict[str, Any] = field(default_factory=dict)  # its closed waits and stale marks


@dataclass(frozen=True)
class Timeline:
    frame: Frame
    lanes: list[tuple[str, float]]  # lane name and the y of its heading
    rows: list[Row]
    height: float
    width: float = LABEL_WIDTH + PLOT_WIDTH + 10
    summarised: bool = False  # more than DETAILED_BARS bars: drawn as shapes (summarise)
    bars: int = 0


def timeline(
    frame: Frame, kinds: list[dict[str, Any]], bars: list[dict[str, Any]],
    waiting: list[dict[str, Any]], stale_after: timedelta, lane_order: tuple[str, ...],
) -> Timeline:
    """One row per kind, grouped by lane; a bar per run (or per runs too close to draw apart,
    labelled with their count), a thin line for each wait before it, and a marker where a wait
    went stale."""
    by_lane: dict[str, list[str]] = {lane: [] for lane in lane_order}
    for k in kinds:
        by_lane.setdefault(k["priority"], []).append(k["kind"])
    rows: dict[str, Row] = {}
    lanes: list[tuple[str, float]] = []
    y = AXIS_HEIGHT
    for lane, names in by_lane.items():
        if not names:
            continue
        lanes.append((lane, y))
        y += LANE_HEIGHT
        for name in sorted(names):
            rows[name] = Row(name, lane, y)
            y += ROW_HEIGHT
    for bar in bars:
        row = rows.get(bar["kind"])
        if row is None:  # a kind that left the registry since
            continue
        x0, x1 = frame.x(bar["bar_start"]), frame.x(bar["bar_end"])
        row.bars.append({**bar, "x": x0, "w": max(MIN_BAR, round(x1 - x0, 2)), "label": None})
        # A wait shorter than a pixel (a claim at the next tick) has nothing to show: drawn,
        # it would double the page of a queue of a thousand kinds.
        if bar["wait_start"] is not None and x0 - frame.x(bar["wait_start"]) >= 1:
            row.waits.append({"x0": frame.x(bar["wait_start"]), "x1": x0,
                              "wait": bar["longest_wait"], "open": False})
        if bar["stale_at"] is not None and frame.start <= bar["stale_at"] <= frame.end:
            row.stale_marks.append({"x": frame.x(bar["stale_at"]), "at": bar["stale_at"]})
    for w in waiting:
        row = rows.get(w["kind"])
        if row is None:
            continue
        row.waits.append({"x0": frame.x(w["due_at"]), "x1": frame.x(frame.end),
                          "wait": w["waiting"], "open": True})
        stale_at = w["due_at"] + stale_after
        if w["stale"] and frame.start <= stale_at <= frame.end:
            row.stale_marks.append({"x": frame.x(stale_at), "at": stale_at})
    for row in rows.values():
        _label_merged(row.bars)
    many = len(bars) > DETAILED_BARS
    if many:
        for row in rows.values():
            row.shapes, row.marks = summarise(row), summarise_marks(row)
    return Timeline(frame, lanes, list(rows.values()), y + 4, summarised=many, bars=len(bars))


def summarise(row: Row) -> list[dict[str, Any]]:
    """A row's bars as one shape per outcome (and per merged or not, merged ones outlined):
    an SVG path of the same rectangles, with what its hover text says of them, the runs it
    holds, the first start, last end, longest run and longest wait."""
    groups: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for bar in row.bars:
        groups.setdefault((bar["outcome"], bar["runs"] > 1), []).append(bar)
    top = round(row.y + 3, 2)
    return [{
        "outcome": outcome, "merged": merged, "bars": len(group),
        "runs": sum(b["runs"] for b in group),
        "d": _rects(group, top),
        "first": min(b["bar_start"] for b in group), "last": max(b["bar_end"] for b in group),
        "longest_run": max(b["longest_run"] for b in group),
        "longest_wait": max((b["longest_wait"] for b in group if b["longest_wait"]), default=None),
    } for (outcome, merged), group in groups.items()]


def _label_merged(bars: list[dict[str, Any]]) -> None:
    """Where each merged bar's "N runs" goes: right of the bar if it fits before the next bar
    and the plot's end, else left of it after the previous bar, else nowhere (its title still
    says it)."""
    right_end = LABEL_WIDTH + PLOT_WIDTH
    for i, bar in enumerate(bars):
        if bar["runs"] < 2:
            continue
        width = CHAR_WIDTH * len(f"{bar['runs']} runs")
        after = bar["x"] + bar["w"] + 2
        until = bars[i + 1]["x"] if i + 1 < len(bars) else right_end
        before = bars[i - 1]["x"] + bars[i - 1]["w"] if i else LABEL_WIDTH
        if after + width <= until:
            bar["label"] = {"x": round(after, 2), "anchor": "start"}
        elif bar["x"] - 2 - width >= before:
            bar["label"] = {"x": round(bar["x"] - 2, 2), "anchor": "end"}


def _rects(bars: list[dict[str, Any]], top: float) -> str:
    """SVG path data of the bars' rectangles: the first placed, each next one moved from the
    last one's corner (a closed subpath ends where it began), so a bar costs ~16 characters."""
    parts, last = [], None
    for b in bars:
        w = f"{b['w']:g}"
        move = f"M{b['x']:g} {top:g}" if last is None else f"m{round(b['x'] - last, 2):g} 0"
        parts.append(f"{move}h{w}v12h-{w}z")
        last = b["x"]
    return "".join(parts)


def summarise_marks(row: Row) -> dict[str, Any]:
    """A summarised row's closed waits as one path of the same lines and its stale marks as one
    path of the same triangles, each with what its hover text says (how many, the longest wait,
    the first time stale); open waits (one per kind at most) stay drawn one by one."""
    closed = [w for w in row.waits if not w["open"]]
    y = round(row.y + 9, 2)
    return {
        "waits": "".join(f"M{w['x0']:g} {y:g}H{w['x1']:g}" for w in closed),
        "wait_count": len(closed),
        "longest_wait": max((w["wait"] for w in closed), default=None),
        "open": [w for w in row.waits if w["open"]],
        "stale": "".join(f"M{m['x']:g} {round(row.y + 1, 2):g}l4 7h-8z" for m in row.stale_marks),
        "stale_count": len(row.stale_marks),
        "first_stale": min((m["at"] for m in row.stale_marks), default=None),
    }


@dataclass(frozen=True)
class SlotPlot:
    path: str
    limit_y: float
    limit: int
    peak: int
    height: float
    ticks: list[tuple[int, float]]  # value and its y, for the axis
    width: float = LABEL_WIDTH + PLOT_WIDTH + 10


def slot_plot(frame: Frame, steps: list[dict[str, Any]], limit: int,
              plot_height: int = SLOT_PLOT_HEIGHT, axis: int = AXIS_HEIGHT) -> SlotPlot:
    """Slots held over the window as a step line, against the limit."""
    peak = max((s["in_use"] for s in steps), default=0)
    top = max(limit, peak) + 0.5
    base = axis + plot_height

    def y(value: float) -> float:
        return round(base - value / top * plot_height, 2)

    parts: list[str] = []
    for i, step in enumerate(steps):
        x = frame.x(step["step_start"])
        parts.append(f"M{x},{y(step['in_use'])}" if i == 0 else f"H{x}V{y(step['in_use'])}")
    if parts:
        parts.append(f"H{frame.x(frame.end)}")
    every = max(1, -(-max(limit, peak) // 5))
    ticks = [(v, y(v)) for v in range(0, max(limit, peak) + 1, every)]
    return SlotPlot(" ".join(parts), y(limit), limit, peak, base + 6, ticks)


def pool_plots(frame: Frame, pools: list[dict[str, Any]]) -> list[tuple[dict[str, Any], SlotPlot]]:
    """A small plot per pool the database chose to draw (its `drawn` ones, a bounded few),
    each against the pool's own limit: the global plot's time axis, no axis of its own."""
    return [(p, slot_plot(frame, p["steps"], p["slots"], POOL_PLOT_HEIGHT, 6))
            for p in pools if p["drawn"]]
