"""The chain's decision at each step (tickq.dispatch.chain.before_step and after_step), as a
table: pure functions of what happened, checked without processes or a database. The runs of
real chains through `tickq tick` are tests_py/test_chain.py."""

from __future__ import annotations

import pytest

from tickq.dispatch.chain import Verdict, after_step, before_step
from tickq.host.process import RunResult
from tickq.registry.model import Step

STEP = Step(name="load", command=("./load",), timeout=60)
LENIENT = STEP._replace(continue_on_failure=True)
CHAIN_TIMEOUT = 300
STOPPED = "[tickq: chain stopped at step 2 load; later steps not started]\n"

# (what happened before step 2, the verdict): first is where the database says the chain
# starts, cancel a cancel's note, left the seconds the chain has left.
BEFORE = {
    "runs": (dict(first=1, cancel=None, shutting_down=False, left=100.0), Verdict(run=True)),
    "resumed after an ok step of an earlier try": (
        dict(first=3, cancel=None, shutting_down=False, left=100.0),
        Verdict(note="[tickq: step 2 load: ended ok in an earlier try; resumed after it]\n")),
    "a resumed step is skipped even when the chain's time is up": (
        dict(first=3, cancel="cancelled by ann", shutting_down=True, left=0.0),
        Verdict(note="[tickq: step 2 load: ended ok in an earlier try; resumed after it]\n")),
    "cancelled": (
        dict(first=1, cancel="cancelled by ann: wrong day", shutting_down=False, left=100.0),
        Verdict(end="cancelled", note="[tickq: cancelled by ann: wrong day before step 2 load; "
                                      "later steps not started]\n")),
    "a cancel is said before a shutdown": (
        dict(first=1, cancel="cancelled by ann", shutting_down=True, left=100.0),
        Verdict(end="cancelled",
                note="[tickq: cancelled by ann before step 2 load; later steps not started]\n")),
    "shutting down": (
        dict(first=1, cancel=None, shutting_down=True, left=100.0),
        Verdict(end="interrupted", note="[tickq: interrupted by dispatcher shutdown before step "
                                        "2 load; later steps not started]\n")),
    "the chain's time is up": (
        dict(first=1, cancel=None, shutting_down=False, left=0.0),
        Verdict(end="timeout", note="[tickq: chain timed out after 300s before step 2 load; "
                                    "later steps not started]\n")),
}


@pytest.mark.parametrize("case", list(BEFORE))
def test_before_a_step(case: str) -> None:
    happened, expected = BEFORE[case]
    assert before_step(2, STEP, chain_timeout=CHAIN_TIMEOUT, **happened) == expected


def result(outcome: str, exit_code: int | None) -> RunResult:
    return RunResult(outcome, exit_code, "out\n", 1.0, 4242)  # type: ignore[arg-type]


# (step, its result, whether it was recorded, what the chain had left when it started, the
# steps of the chain, the verdict) for step 2.
AFTER = {
    "ok goes on": (STEP, result("ok", 0), True, 100.0, 3, Verdict()),
    "ok but not recorded stops, failed with the step's exit code": (
        STEP, result("ok", 0), False, 100.0, 3,
        Verdict(end="failed", exit_code=0, note="[tickq: this step's result could not be "
                                                "recorded; later steps not started]\n")),
    "a failure stops": (STEP, result("failed", 3), True, 100.0, 3,
                        Verdict(end="failed", exit_code=3, note=STOPPED)),
    "a failure of the last step ends it, with nothing more to say": (
        STEP, result("failed", 3), True, 100.0, 2, Verdict(end="failed", exit_code=3)),
    "a failure goes on when the step allows it": (LENIENT, result("failed", 3), True, 100.0, 3,
                                                  Verdict()),
    "its own timeout goes on when the step allows it": (
        LENIENT, result("timeout", -15), True, 100.0, 3, Verdict()),
    "its own timeout stops": (STEP, result("timeout", -15), True, 100.0, 3,
                              Verdict(end="timeout", exit_code=-15, note=STOPPED)),
    "the chain's timeout stops even a step that may fail": (
        LENIENT, result("timeout", -15), True, 30.0, 3,
        Verdict(end="timeout", exit_code=-15,
                note="[tickq: chain timed out after 300s in step 2 load]\n" + STOPPED)),
    "the chain's timeout in the last step": (
        STEP, result("timeout", -15), True, 30.0, 2,
        Verdict(end="timeout", exit_code=-15,
                note="[tickq: chain timed out after 300s in step 2 load]\n")),
    "a shutdown ends it without a word": (
        LENIENT, result("interrupted", -15), True, 100.0, 3,
        Verdict(end="interrupted", exit_code=-15)),
    "a cancel ends it, saying where": (LENIENT, result("cancelled", -15), True, 100.0, 3,
                                       Verdict(end="cancelled", exit_code=-15, note=STOPPED)),
    "a cancel of the last step": (STEP, result("cancelled", -15), True, 100.0, 2,
                                  Verdict(end="cancelled", exit_code=-15)),
}


@pytest.mark.parametrize("case", list(AFTER))
def test_after_a_step(case: str) -> None:
    step, ran, recorded, left, steps, expected = AFTER[case]
    assert after_step(2, step, steps, ran, recorded=recorded, left=left,
                      chain_timeout=CHAIN_TIMEOUT) == expected
