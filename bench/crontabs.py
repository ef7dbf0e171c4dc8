"""Crontab-shaped registries for the benches (what moving a real crontab gives: a one-minute
tick, minute lists and steps kept as cron strings, nightly, weekly and monthly lines). Not a
benchmark itself; `check_speed.py` and `result_digests.py` import it.

- `examples/crontab/registry.toml` is the hand-written one (15 kinds, UTC);
- `tests_py/data/crontab/`: it in Europe/Berlin (a clock change of its own), it crowded into 3
  slots (it starves; no offset helps a cron string), and `crons_100.toml` (below);
- `many_crons(folder, N)` writes N generated cron-string kinds of every shape.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "crontab" / "registry.toml"
TEST_DATA = REPO / "tests_py" / "data" / "crontab"


def test_registries() -> list[Path]:
    """The crontab-shaped registries the tests compare results on."""
    return sorted(TEST_DATA.glob("*.toml"))


def many_crons(folder: Path, count: int) -> Path:
    """`count` cron-string kinds, minutes spread, a one-minute tick, timeouts of 5 minutes and a
    slot for every seven kinds: four tenths twice an hour (`7,37 * * * *`), two tenths every 2,
    3, 4 or 6 hours, two tenths nightly, a twentieth weekly, a twentieth monthly, and a tenth four
    times an hour in office hours on weekdays (`3,18,33,48 9-17 * * 1-5`)."""
    lines = [f'[settings]\nslots = {max(4, count // 7)}\ntick = "1m"\nstale_after = "15m"\n']
    for i in range(count):
        share, minute, hour = i % 10, (i * 7) % 30, (i * 5) % 24
        cron = (f"{minute},{minute + 30} * * * *" if share <= 3
                else f"{minute} */{(2, 3, 4, 6)[i % 4]} * * *" if share <= 5
                else f"{minute} {hour} * * *" if share <= 7
                else f"{minute} {hour} * * {i % 7}" if share == 8 and (i // 10) % 2 == 0
                else f"{minute} {hour} {1 + i % 28} * *" if share == 8
                else ",".join(str(minute % 15 + q) for q in (0, 15, 30, 45)) + " 9-17 * * 1-5")
        priority = ("urgent", "high", "normal", "low")[i % 4]
        lines.append(f'[kinds.c{i:04d}]\ncommand = ["true"]\ncron = "{cron}"\ntimeout = "5m"\n'
                     f'priority = "{priority}"\n')
    path = folder / f"crons_{count}.toml"
    path.write_text("\n".join(lines))
    return path
