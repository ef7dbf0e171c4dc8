"""`tickq check --suggest`: the smallest change that makes the worst case pass.

"Passes" here is stricter than the check: every wait stays below stale_after, so the queue does
not even warn. First offsets for `every` kinds: each movable kind (a cadence slower than the
tick) is placed, in turn, at the offset (whole ticks) where its runs meet the fewest others over
the window's period, keeping its own offset when that is as good (tickq.spread_offsets, which
leaves the cadences' and calendars' alignment to tickq.next_slot), and later "at" times for the
calendar kinds the same way (tickq.spread_times: a month-end pile-up spread over the night);
then kinds get their own offset or times back while the proposal still passes. When none pass,
the number of slots that does, and the lane whose timeouts hold the slots while others starve,
with how far they must shrink. With weights and pools, when no offsets pass: first a larger pool
for each pool a starved kind waited for (the smallest that passes), then a lower weight for a
starved heavy kind. Every proposal is run through the same worst-case simulation as the check
before it is printed; one that fails is not offered."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType

from tickq.check import simulate
from tickq.db.api import check as api
from tickq.db.api.check import Connection, Scratches
from tickq.registry import Registry
from tickq.registry.durations import format_duration

MOST_REVERTS = 12  # simulations spent on making an offset proposal smaller


@dataclass(frozen=True)
class Suggestion:
    offsets: dict[str, int] = field(default_factory=dict)  # kind -> seconds, the changed ones
    pools: dict[str, int] = field(default_factory=dict)  # pool -> slots that pass
    weights: dict[str, int] = field(default_factory=dict)  # kind -> a lower weight that passes
    times: dict[str, list[str]] = field(default_factory=dict)  # kind -> "at" times, changed ones
    slots: int | None = None  # slots that pass without other changes
    lane: str | None = None  # the lane whose timeouts hold the slots
    timeout_share: float | None = None  # ...and the share of them that passes (e.g. 0.5)
    tried: list[str] = field(default_factory=list)  # what was simulated and failed


def with_offsets(registry: Registry, offsets: dict[str, int]) -> Registry:
    kinds = {name: kind._replace(offset=offsets.get(name, kind.offset))
             for name, kind in registry.kinds.items()}
    return registry._replace(kinds=MappingProxyType(kinds))


def with_times(registry: Registry, times: dict[str, list[str]]) -> Registry:
    kinds = {name: kind._replace(at=tuple(times[name])) if name in times else kind
             for name, kind in registry.kinds.items()}
    return registry._replace(kinds=MappingProxyType(kinds))


def with_slots(registry: Registry, slots: int) -> Registry:
    return registry._replace(settings=registry.settings._replace(slots=slots))


def with_lane_timeouts(registry: Registry, lane: str, share: float) -> Registry:
    kinds = {name: kind._replace(timeout=max(1, int(kind.timeout * share)))
             if kind.priority == lane else kind for name, kind in registry.kinds.items()}
    return registry._replace(kinds=MappingProxyType(kinds))


def with_pools(registry: Registry, pools: dict[str, int]) -> Registry:
    return registry._replace(pools=MappingProxyType({**registry.pools, **pools}))


def with_weights(registry: Registry, weights: dict[str, int]) -> Registry:
    kinds = {name: kind._replace(weight=weights.get(name, kind.weight))
             for name, kind in registry.kinds.items()}
    return registry._replace(kinds=MappingProxyType(kinds))


def larger_pools(conn: Scratches, registry: Registry, durations: dict[str, float] | None,
                 starved: list[str]) -> dict[str, int]:
    """The smallest slots for the pools the starved kinds name that pass (each pool raised in
    turn, up to one slot per kind naming it), or nothing when none does."""
    wanted = sorted({p for name in starved if name in registry.kinds
                     for p in registry.kinds[name].pools if p in registry.pools})
    if not wanted:
        return {}
    naming = Counter(p for kind in registry.kinds.values() for p in kind.pools)
    found = {p: registry.pools[p] or 1 for p in wanted}
    for pool in wanted:
        while found[pool] < naming[pool]:
            found[pool] += 1
            if passes(conn, with_pools(registry, found), durations):
                return {p: n for p, n in found.items() if n != registry.pools[p]}
    return {}


def lower_weights(conn: Scratches, registry: Registry, durations: dict[str, float] | None,
                  starved: list[str]) -> dict[str, int]:
    """The highest weights below their own, for the starved heavy kinds, that pass (all lowered
    by one at a time), or nothing when even weight 1 does not."""
    heavy = {n: registry.kinds[n].weight for n in starved
             if n in registry.kinds and registry.kinds[n].weight > 1}
    while heavy and any(w > 1 for w in heavy.values()):
        heavy = {n: max(1, w - 1) for n, w in heavy.items()}
        if passes(conn, with_weights(registry, heavy), durations):
            return heavy
    return {}


def passes(conn: Scratches, registry: Registry,
           durations: dict[str, float] | None) -> bool:
    """The check passes with room: no kind waits as long as stale_after, so a proposal never
    leaves the queue warning about stale kinds at every burst while the check stays green."""
    limit = dt.timedelta(seconds=registry.settings.stale_after)
    result = simulate.evaluate(conn, registry, durations)
    # (starved: also a slot skipped past its catch_up, however short the wait)
    return all(not k.starved and (k.longest_wait is None or k.longest_wait < limit)
               for k in result.kinds)


def spread_offsets(
    conn: Connection, registry: Registry, durations: dict[str, float] | None
) -> dict[str, int]:
    """Greedy offsets that flatten the load of the first window's period (tickq.spread_offsets);
    only the changed ones, seconds by kind."""
    api.load(conn, registry)
    return api.spread_offsets(conn, durations)


def spread(
    conn: Scratches, registry: Registry, durations: dict[str, float] | None
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Offsets for the cadences and later "at" times for the calendar kinds (a month-end
    pile-up: tickq.spread_times), each flattening the first window's load; then, while the
    proposal still passes, cadences given back their own offset (at most MOST_REVERTS
    simulations; a time is moved only where its own is worse already). Empty when the proposal
    does not pass."""
    offsets = spread_offsets(conn.conn, registry, durations)
    times = api.spread_times(conn.conn, durations)
    if not (offsets or times) or not passes(
            conn, with_times(with_offsets(registry, offsets), times), durations):
        return {}, {}
    for name in sorted(offsets, key=lambda n: (-offsets[n], n))[:MOST_REVERTS]:
        fewer = {k: v for k, v in offsets.items() if k != name}
        if passes(conn, with_times(with_offsets(registry, fewer), times), durations):
            offsets = fewer
    return offsets, times


def suggest(
    conn: Scratches, registry: Registry, durations: dict[str, float] | None,
    checked: simulate.WorstCase | None = None,
) -> Suggestion:
    """The smallest change that passes, each proposal simulated in the scratch databases of
    `conn` (the check's own: its agents stay, the registry is synced again for each) once:
    `checked` is the check's own worst case of `registry` (simulated here when not given), and
    a number of slots the search simulated is not simulated again. (A story's registry of 45
    kinds in 2 slots: 12 simulations, 3 of them again, 17.5 s; bench/README.md.)"""
    tried: list[str] = []
    offsets, times = spread(conn, registry, durations)
    if offsets or times:
        return Suggestion(offsets=offsets, times=times)
    tried.append("offsets and calendar times")
    result = checked or simulate.evaluate(conn, registry, durations)
    starved = [k.kind for k in result.starved]
    pools = larger_pools(conn, registry, durations, starved)
    if pools:
        return Suggestion(pools=pools, tried=tried)
    weights = lower_weights(conn, registry, durations, starved)
    if weights:
        return Suggestion(weights=weights, tried=tried)
    # No offsets pass: how many slots do, and which lane's timeouts hold the slots.
    slots, searched = fewest_slots(conn, registry, durations)
    if slots is None:
        tried.append(f"up to {searched} slots")
    lane, share = lane_to_shrink(conn, registry, durations, result)
    if lane and share is None:
        tried.append(f"the {lane} lane's timeouts at a quarter")
    return Suggestion(slots=slots, lane=lane, timeout_share=share, tried=tried)


def fewest_slots(conn: Scratches, registry: Registry,
                 durations: dict[str, float] | None) -> tuple[int | None, int]:
    """The fewest slots that pass (None when none does) and the most the search reached.

    A slot for every kind (and housekeeping) always passes: nothing ever waits. The search runs
    from the registry's own slots up: 1, 2, 4, ... more until one passes, then halves the gap.
    The answer is usually a slot or two more, and a count that fails costs a whole simulation (a
    starving queue never rests, so nothing is copied) where one that passes costs a third of
    that; halving from the top first simulated three passing counts far above it
    (bench/README.md). No count is simulated twice."""
    low, high = registry.settings.slots, len(registry.kinds) + 1
    if high <= low:
        return None, high
    passed: dict[int, bool] = {}

    def passing(slots: int) -> bool:
        if slots not in passed:
            passed[slots] = passes(conn, with_slots(registry, slots), durations)
        return passed[slots]

    step = 1
    while low + step < high:
        if passing(low + step):
            high = low + step
            break
        low, step = low + step, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if passing(middle):
            high = middle
        else:
            low = middle
    # (the search's upper end is taken to pass until it is simulated)
    return (high if passing(high) else None), high


def lane_to_shrink(conn: Scratches, registry: Registry, durations: dict[str, float] | None,
                   result: simulate.WorstCase) -> tuple[str | None, float | None]:
    """The lane whose kinds the starved ones waited behind most, and the largest share of its
    timeouts (75%, 50%, 25%) that passes (None when not even a quarter does)."""
    lane_of = {name: kind.priority for name, kind in registry.kinds.items()}
    holders = Counter(lane_of[b] for k in result.starved for b in k.behind if b in lane_of)
    if not holders:
        return None, None
    lane = holders.most_common(1)[0][0]
    for share in (0.75, 0.5, 0.25):
        if passes(conn, with_lane_timeouts(registry, lane, share), durations):
            return lane, share
    return lane, None


def render(suggestion: Suggestion) -> str:
    lines = ["", "suggested fix (checked by the same worst-case simulation):"]
    if suggestion.offsets or suggestion.times:
        lines.append("  spread the cadences with offsets and the calendars' times; in each kind's "
                     "table, set:")
        for name, offset in sorted(suggestion.offsets.items()):
            value = format_duration(offset) if offset else "0s"
            lines += ["", f"[kinds.{name}]", f'offset = "{value}"']
        for name, times in sorted(suggestion.times.items()):
            lines += ["", f"[kinds.{name}]", "at = [" + ", ".join(f'"{t}"' for t in times) + "]"]
        return "\n".join(lines)
    if suggestion.pools:
        lines.append("  no offsets make every kind wait less than stale_after;"
                     " a larger pool does:")
        for name, slots in sorted(suggestion.pools.items()):
            lines += ["", f"[pools.{name}]", f"slots = {slots}"]
        return "\n".join(lines)
    if suggestion.weights:
        lines.append("  no offsets make every kind wait less than stale_after;"
                     " a lower weight does:")
        for name, weight in sorted(suggestion.weights.items()):
            lines += ["", f"[kinds.{name}]", f"weight = {weight}"]
        return "\n".join(lines)
    lines.append("  no offsets make every kind wait less than stale_after; instead:")
    if suggestion.slots:
        lines.append(f"  - slots = {suggestion.slots} under [settings]")
    if suggestion.lane and suggestion.timeout_share:
        lines.append(f"  - or shrink the {suggestion.lane} lane's timeouts to "
                     f"{suggestion.timeout_share:.0%} of what they are")
    if not suggestion.slots and not suggestion.timeout_share:
        lines.append("  nothing tried passes (" + "; ".join(suggestion.tried) + ")")
    return "\n".join(lines)
