"""`tickq check --suggest`: each kind of fix that makes the worst case pass, the smallest of each.

"Passes" here is stricter than the check: every wait stays below stale_after, so the queue does
not even warn. The kinds of fix, each run through the same worst-case simulation as the check
before it is offered, so that a user whose times are fixed by the business can take slots, and
one short of slots can move times:
- offsets for `every` kinds: each movable kind (a cadence slower than the tick) placed, in turn,
  at the offset (whole ticks) where its runs meet the fewest others over the window's period,
  keeping its own offset when that is as good (tickq.spread_offsets); then kinds given their own
  offset back while the proposal still passes;
- later `at` times for calendar kinds (tickq.spread_times: a month-end pile-up spread over the
  night); offered alone, and with the offsets when neither passes alone;
- more slots: the fewest that pass, searched up from the registry's own;
- with weights and pools: a larger pool for each pool a starved kind waited for (the smallest
  that passes), a lower weight for a starved heavy kind;
- when none of these passes, the lane whose timeouts hold the slots while others starve, with
  how far they must shrink.
A proposal that fails is known as soon as a kind first waits stale_after (the simulation stops
there: simulate.evaluate's stop_stale), so only those that pass are simulated to their end; the
check's own worst case is not simulated again."""

from __future__ import annotations

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
    """Each field a fix that passes on its own (offsets and times: together when `together`)."""
    offsets: dict[str, int] = field(default_factory=dict)  # kind -> seconds, the changed ones
    pools: dict[str, int] = field(default_factory=dict)  # pool -> slots that pass
    weights: dict[str, int] = field(default_factory=dict)  # kind -> a lower weight that passes
    times: dict[str, list[str]] = field(default_factory=dict)  # kind -> "at" times, changed ones
    slots: int | None = None  # slots that pass without other changes
    lane: str | None = None  # the lane whose timeouts hold the slots
    timeout_share: float | None = None  # ...and the share of them that passes (e.g. 0.5)
    tried: list[str] = field(default_factory=list)  # what was simulated and failed
    together: bool = False  # the offsets and the times pass only together


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
    leaves the queue warning about stale kinds at every burst while the check stays green. The
    simulation stops at the first such wait (it fails there)."""
    result = simulate.evaluate(conn, registry, durations, stop_stale=True)
    return not simulate.stale_wait(result.kinds, registry.settings.stale_after)


def spread_offsets(
    conn: Connection, registry: Registry, durations: dict[str, float] | None
) -> dict[str, int]:
    """Greedy offsets that flatten the load of the first window's period (tickq.spread_offsets);
    only the changed ones, seconds by kind."""
    api.load(conn, registry)
    return api.spread_offsets(conn, durations)


def fewer_offsets(conn: Scratches, registry: Registry, durations: dict[str, float] | None,
                  offsets: dict[str, int], times: dict[str, list[str]]) -> dict[str, int]:
    """`offsets` (which pass with `times`) less those whose kinds can have their own offset back
    while the proposal still passes (at most MOST_REVERTS simulations, latest offsets first)."""
    for name in sorted(offsets, key=lambda n: (-offsets[n], n))[:MOST_REVERTS]:
        fewer = {k: v for k, v in offsets.items() if k != name}
        if passes(conn, with_times(with_offsets(registry, fewer), times), durations):
            offsets = fewer
    return offsets


def moves(
    conn: Scratches, registry: Registry, durations: dict[str, float] | None
) -> tuple[dict[str, int], dict[str, list[str]], bool]:
    """Offsets for the cadences and later "at" times for the calendar kinds (a month-end
    pile-up: tickq.spread_times), each flattening the first window's load: each alone when it
    passes alone (the offsets made fewer), else both together when that passes; and whether
    they go together. Empty when nothing passes."""
    offsets = spread_offsets(conn.conn, registry, durations)
    times = api.spread_times(conn.conn, durations)
    alone_offsets = bool(offsets) and passes(conn, with_offsets(registry, offsets), durations)
    alone_times = bool(times) and passes(conn, with_times(registry, times), durations)
    if alone_offsets or alone_times:
        return (fewer_offsets(conn, registry, durations, offsets, {}) if alone_offsets else {},
                times if alone_times else {}, False)
    if offsets and times and passes(
            conn, with_times(with_offsets(registry, offsets), times), durations):
        return fewer_offsets(conn, registry, durations, offsets, times), times, True
    return {}, {}, False


def fewest_slots(conn: Scratches, registry: Registry,
                 durations: dict[str, float] | None) -> tuple[int | None, int]:
    """The fewest slots that pass without other changes (None when even a slot for every kind
    and housekeeping does not), and the most searched. Searched from the registry's own slots
    up: 1, 2, 4, 8, ... more until one passes, then halving the gap, and a gap of 4 or fewer
    walked up from below. A count that fails is known at its first stale wait where one that
    passes is simulated whole, so the search spends few passing counts: the answer is usually
    a slot or two more, which 1 and 2 more reach with one passing simulation, and a gap walked
    up costs one more at most. Where more slots never fail what fewer pass (what halving the
    gap assumes), the answer is the fewest that pass, as any such search finds (bench/README.md,
    tests_py/test_suggest_search.py)."""
    own, high = registry.settings.slots, len(registry.kinds) + 1
    if high <= own:
        return None, high
    passed: dict[int, bool] = {}
    low, step = own, 1
    while own + step < high:
        passed[own + step] = passes(conn, with_slots(registry, own + step), durations)
        if passed[own + step]:
            high = own + step
            break
        low, step = own + step, step * 2
    while high - low > 1:
        middle = low + 1 if high - low <= 4 else (low + high) // 2
        passed[middle] = passes(conn, with_slots(registry, middle), durations)
        if passed[middle]:
            high = middle
        else:
            low = middle
    if high not in passed:  # the search's upper end, taken to pass but not simulated
        passed[high] = passes(conn, with_slots(registry, high), durations)
    return (high if passed[high] else None), high


def lane_timeouts(conn: Scratches, registry: Registry, durations: dict[str, float] | None,
                  result: simulate.WorstCase) -> tuple[str | None, float | None]:
    """The lane whose runs held the slots while kinds starved, and the share of its timeouts
    (75%, 50%, 25%) that passes, if any."""
    lanes = {name: kind.priority for name, kind in registry.kinds.items()}
    holders = Counter(lanes[b] for k in result.starved for b in k.behind or () if b in lanes)
    if not holders:
        return None, None
    lane = holders.most_common(1)[0][0]
    for share in (0.75, 0.5, 0.25):
        if passes(conn, with_lane_timeouts(registry, lane, share), durations):
            return lane, share
    return lane, None


def suggest(
    conn: Scratches, registry: Registry, durations: dict[str, float] | None,
    checked: simulate.WorstCase | None = None,
) -> Suggestion:
    """Each kind of fix that passes, the smallest of each, every proposal simulated in the
    scratch databases of `conn` (the check's own: its agents stay, the registry is synced again
    for each) once: `checked` is the check's own worst case of `registry` (simulated here when
    not given)."""
    tried: list[str] = []
    offsets, times, together = moves(conn, registry, durations)
    if not (offsets or times):
        tried.append("offsets and calendar times")
    result = checked or simulate.evaluate(conn, registry, durations)
    starved = [k.kind for k in result.starved]
    pools = larger_pools(conn, registry, durations, starved)
    weights = lower_weights(conn, registry, durations, starved)
    slots, most = fewest_slots(conn, registry, durations)
    if slots is None:
        tried.append(f"up to {most} slots")
    lane = share = None
    if not (offsets or times or pools or weights or slots):
        lane, share = lane_timeouts(conn, registry, durations, result)
        if lane and share is None:
            tried.append(f"the {lane} lane's timeouts at a quarter")
    return Suggestion(offsets=offsets, times=times, together=together, pools=pools,
                      weights=weights, slots=slots, lane=lane, timeout_share=share, tried=tried)


def _move_lines(suggestion: Suggestion) -> list[str]:
    """The offsets and times fixes: one or two entries, or one for both together."""
    offsets = [f'\n[kinds.{name}]\noffset = "{format_duration(s) if s else "0s"}"'
               for name, s in sorted(suggestion.offsets.items())]
    times = [f"\n[kinds.{name}]\nat = [" + ", ".join(f'"{t}"' for t in at) + "]"
             for name, at in sorted(suggestion.times.items())]
    if suggestion.together:
        return ["  - spread the cadences with offsets and move the calendars' times later, both;"
                " in each kind's table, set:", *offsets, *times]
    lines = []
    if offsets:
        lines += ["  - spread the cadences with offsets; in each kind's table, set:", *offsets]
    if times:
        lines += ["  - move the calendars' times later; in each kind's table, set:", *times]
    return lines


def render(suggestion: Suggestion) -> str:
    """Every fix found, each enough on its own, as lines to set; or what was tried."""
    lines = _move_lines(suggestion)
    if suggestion.slots:
        lines += ["  - more slots; set:", f"\n[settings]\nslots = {suggestion.slots}"]
    for name, slots in sorted(suggestion.pools.items()):
        lines += ["  - a larger pool; set:", f"\n[pools.{name}]\nslots = {slots}"]
    if suggestion.weights:
        lines.append("  - a lower weight; in each kind's table, set:")
        lines += [f"\n[kinds.{name}]\nweight = {weight}"
                  for name, weight in sorted(suggestion.weights.items())]
    if suggestion.lane and suggestion.timeout_share:
        lines.append(f"  - shrink the {suggestion.lane} lane's timeouts to "
                     f"{suggestion.timeout_share:.0%} of what they are")
    if not lines:
        return ("\nno fix tried makes every kind wait less than stale_after ("
                + "; ".join(suggestion.tried) + ")")
    return "\n".join(["", "suggested fixes (each checked by the same worst-case simulation; any "
                       "one of them is enough):", "", *lines])
