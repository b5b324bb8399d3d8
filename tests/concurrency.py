"""Running one test's call from several threads at once (the thread-safety tests)."""
from __future__ import annotations

import threading


def run_in_threads(call, count: int) -> list:
    """``call(i)`` for i in range(count), each in its own thread, all started before any is
    joined; their results in order. The first exception a thread raised is raised here."""
    got, errors = [None] * count, []

    def run(i):
        try:
            got[i] = call(i)
        except Exception as exc:                          # noqa: BLE001 - raised below
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return got
