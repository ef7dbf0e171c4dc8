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


@dataclass(frozen=True)
class Timeline:
    frame: Frame
    lanes: list[tuple[str, float]]  # lane name and the y of its heading
    rows: list[Row]
    height: float
    width: float = LABEL_WIDTH + PLOT_WIDTH + 10


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
    return Timeline(frame, lanes, list(rows.values()), y + 4)


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
