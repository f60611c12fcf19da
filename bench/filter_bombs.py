"""The content-filter and transformer bombs of issue 23, timed (decision 0060).

Each case evaluates one tenant-supplied filter or transformer on one event the way the
fan-out and the deliverer do (`event_document`, then `matches` or `render`), with no
validation at save in between, and prints how long it took and what came of it. A case
still running after `--cap` seconds is stopped (SIGALRM) and shown as `> cap`.

    .venv/bin/python bench/filter_bombs.py                    # this checkout
    PYTHONPATH=/path/to/old/layers/core .venv/bin/python bench/filter_bombs.py   # another

The same inputs are the tests in tests/unit/test_filter_bombs.py.
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from collections.abc import Callable
from typing import Any

from hookline.patterns import event_document, matches
from hookline.transformers import render


class _Stopped(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Stopped


def cases() -> list[tuple[str, Callable[[], Any]]]:
    """(name, the evaluation) of each bomb."""
    star_bomb = {"payload": {"s": [{"wildcard": "*a*a*a*a*a*a*b"}]}}
    mib = json.dumps({"log": "error " * (1024 * 1024 // 6)}).encode()
    numbers = json.dumps({"ids": list(range(10**6, 10**6 + 31_000))}).encode()  # ~250 KB
    many = {"payload": {"ids": list(range(836))}}
    deep = b"[" * 3000 + b"]" * 3000
    event = json.dumps({"a": "x" * 30_000}).encode()
    amplifier = {"InputPathsMap": {"a": "$.payload.a"}, "InputTemplate": "<a>" * 2730}

    def doc(payload: bytes) -> dict[str, Any]:
        return event_document("t", "ten_1", "src_1", payload)

    text_filter = {"payload": {"log": [{"wildcard": "*error*timeout*"}]}}
    absent_filter = {"payload": {"x": [{"exists": False}]}}
    a100 = b'{"s": "' + b"a" * 100 + b'"}'
    a80 = b'{"s": "' + b"a" * 80 + b'"}'
    return [
        ("*a*a*a*a*a*a*b vs 100 a", lambda: matches(star_bomb, doc(a100))),
        ("*a*a*a*a*a*a*b vs 80 a", lambda: matches(star_bomb, doc(a80))),
        ("*error*timeout* vs 1 MiB", lambda: matches(text_filter, doc(mib))),
        ("836 numbers vs 250 KB array", lambda: matches(many, doc(numbers))),
        ("filter on a 3,000-deep body", lambda: matches(absent_filter, doc(deep))),
        ("<a> x 2,730 over 30 KB", lambda: len(render(amplifier, doc(event)).body)),
    ]


def main() -> None:
    """Print one row per bomb."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=20, help="seconds before a case is stopped")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    print(f"| {'bomb':<30} | {'time':>10} | outcome")
    print(f"|{'-' * 32}|{'-' * 12}:|---------")
    for name, run in cases():
        began = time.perf_counter()
        signal.alarm(args.cap)
        try:
            outcome = repr(run())
        except _Stopped:
            outcome = "still running, stopped"
        except BaseException as err:
            outcome = f"{type(err).__name__}: {str(err)[:70]}"
        finally:
            signal.alarm(0)
        took = time.perf_counter() - began
        shown = f"> {args.cap} s" if outcome.startswith("still") else f"{took * 1000:.1f} ms"
        print(f"| {name:<30} | {shown:>10} | {outcome}")


if __name__ == "__main__":
    main()
