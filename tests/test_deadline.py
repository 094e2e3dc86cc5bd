"""The deadline watchdog without MPI: it must not cost the training it guards."""

import time

from dgbdt.distributed.deadline import Watchdog


def test_the_watchdog_sleeps_between_back_to_back_collectives():
    # Voting-parallel runs collectives back to back: the watchdog checks a few
    # times a second however often collectives start and end (re-checking at
    # once when one ended meanwhile could spin on the GIL).
    watch = Watchdog(0, 2)
    calls = []
    limit = watch._limit
    watch._limit = lambda: calls.append(1) or limit()
    watch.start()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        watch.enter("allreduce")
        time.sleep(0.0002)  # in the collective, the GIL released
        watch.leave()
    assert len(calls) <= 12, f"{len(calls)} checks in 1 s"  # a few per second
