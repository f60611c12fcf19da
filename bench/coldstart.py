"""Cold starts: how long a fresh interpreter takes to import each handler, as Lambda's init
does, against a bare `import json, psycopg` interpreter in the same run.

Each handler is imported in `--runs` (7) fresh interpreters, taking turns, timing only the
import statement inside the child; the table shows the median and the best, and the number
of modules loaded. The packages the layer does not ship (the CLI's click, rich, pygments,
which httpx imports for its own command line when they are installed) are made unimportable
in the child, as they are on Lambda. Then the layer is built as `make synth` builds it (pip,
arm64 wheels) and its unzipped size printed, unless `--no-layer`.

Every module is imported from bytecode, as the layer ships it (compiled for the runtime's
Python: infra/components/layer.py): the children write and then read their .pyc files under a
temporary `PYTHONPYCACHEPREFIX`, after one untimed round that compiles them. `--source`
times the hookline package and the handlers compiled from source on each import instead (a
layer built where no Python of the runtime's version was found; the other packages still
load their installed bytecode).

    .venv/bin/python bench/coldstart.py [--runs 7] [--no-layer] [--source]
        [--handlers receiver,deliver]

Targets (issue 24, docs/performance.md): receiver, fanout and deliver at most the baseline's
median + 100 ms, the others + 300 ms (the baseline measured in the same run, so a loaded
machine slows both); the layer within its budget (docs/performance.md). The `first span` rows
are tracing's cost (decision 0070): a hot handler imported untimed, then its first span timed,
which loads the OpenTelemetry SDK and exporter; no target (tracing is opt-in, and off the
import itself). The `first request` rows are what the receiver's and deliver's first request
builds before its work, after the import (the receiver's wiring, deliver's deliverer with its
HTTP client; no database or AWS call is made): Lambda's cold start includes the first request
(decision 0083).
This is a benchmark: it prints, never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

NOT_IN_LAYER = ("click", "rich", "pygments")
HOT = ("receiver", "fanout", "deliver")
OTHERS = ("reconcile", "replay", "api", "console", "migrate")
BASELINE = "json, psycopg"
FIRST_SPAN = (
    "from hookline.tracing import Tracing\n"
    "with Tracing('http://127.0.0.1:9/v1/traces', 0.0).root('receive', kind='server', "
    "attributes={}): pass"
)
# What a cold start's first request builds before its work, timed after the import (decision
# 0083): the receiver's wiring, deliver's deliverer. No database is reached (the pool connects
# in the background, here to a closed port) and no AWS call is made.
FIRST_REQUEST = {
    "receiver": "functions.receiver.handler.wiring()",
    "deliver": "functions.deliver.handler.current_deliverer()",
}
FIRST_REQUEST_ENV = (
    "import os\n"
    "os.environ.setdefault('DATABASE_URL', 'postgresql://127.0.0.1:9/none')\n"
    "os.environ.setdefault('AWS_DEFAULT_REGION', 'us-east-1')\n"
)
# Over the baseline's median, in the same run.
TARGET_MS = {**dict.fromkeys(HOT, 100), **dict.fromkeys(OTHERS, 300)}


def import_once(statement: str, setup: str = "", bytecode: str | None = None) -> tuple[float, int]:
    """Seconds one fresh interpreter spends on `statement`, and the modules it then holds;
    with `bytecode` (a folder), every module's .pyc is kept and read there."""
    code = (
        "import sys, time, json\n"
        f"sys.modules.update(dict.fromkeys({NOT_IN_LAYER!r}))\n"
        f"{setup}\n"
        "n = len(sys.modules); t = time.perf_counter()\n"
        f"{statement}\n"
        "print(json.dumps([time.perf_counter() - t, len(sys.modules) - n]))\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'layers' / 'core'}{os.pathsep}{ROOT}"}
    env.pop("HOOKLINE_OTLP_TRACES_ENDPOINT", None)
    if bytecode is None:  # the hookline package from source (the others' own .pyc are read)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    seconds, modules = json.loads(out.stdout)
    return float(seconds), int(modules)


def main() -> None:
    """Print the cold-start table and the layer's size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-layer", action="store_true")
    parser.add_argument(
        "--source", action="store_true", help="compile hookline and the handlers on each import"
    )
    parser.add_argument(
        "--handlers",
        default=",".join((*HOT, *OTHERS)),
        help="comma-separated handlers to time (default: all); the baseline always runs",
    )
    args = parser.parse_args()
    handlers = [h for h in (*HOT, *OTHERS) if h in args.handlers.split(",")]
    rows = {"(baseline) " + BASELINE: f"import {BASELINE}"}
    rows |= {name: f"import functions.{name}.handler" for name in handlers}
    # Tracing on (decision 0070): after the import, what the first span loads and builds (the
    # SDK, the OTLP exporter and its thread); unsampled, so nothing is sent anywhere.
    setups = {f"{name}: first span": f"import functions.{name}.handler" for name in HOT}
    setups = {k: v for k, v in setups.items() if k.split(":")[0] in handlers}
    rows |= dict.fromkeys(setups, FIRST_SPAN)
    for name, statement in FIRST_REQUEST.items():
        if name in handlers:
            row = f"{name}: first request"
            setups[row] = FIRST_REQUEST_ENV + f"import functions.{name}.handler"
            rows[row] = statement
    times: dict[str, list[float]] = {name: [] for name in rows}
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="coldstart-pyc-") as folder:
        bytecode = None if args.source else folder
        if bytecode is not None:  # one untimed round compiles what the layer ships compiled
            for name, statement in rows.items():
                import_once(statement, setups.get(name, ""), bytecode)
        for _ in range(max(1, args.runs)):
            for name, statement in rows.items():  # take turns: the machine's load hits all
                seconds, counts[name] = import_once(statement, setups.get(name, ""), bytecode)
                times[name].append(seconds)
    how = "hookline compiled from source" if args.source else "from bytecode"
    print(f"cold start: import in a fresh interpreter ({how}), {args.runs} runs each, milliseconds")
    print(f"{'handler':<28}{'median':>8}{'best':>8}{'over baseline':>14}{'modules':>9}"
          f"{'target':>8}")  # fmt: skip
    baseline = statistics.median(times["(baseline) " + BASELINE]) * 1e3
    for name in rows:
        median, best = statistics.median(times[name]) * 1e3, min(times[name]) * 1e3
        target = TARGET_MS.get(name)
        over = median - baseline
        mark = (
            ""
            if target is None
            else f"{'+' + str(target):>8}{' ok' if over <= target else ' MISS'}"
        )
        # A first span's or request's row is its own time, after the import: no baseline.
        versus = f"{'—':>14}" if name in setups else f"{over:>+14.0f}"
        print(f"{name:<28}{median:>8.0f}{best:>8.0f}{versus}{counts[name]:>9}{mark}")
    if not args.no_layer:
        print_layer_size()


def print_layer_size() -> None:
    """Build the layer as `make synth` does and print its unzipped size, largest first."""
    from hookline.config import HooklineConfig
    from infra.components.layer import (
        MAX_LAYER_BYTES,
        PipLayerBundling,
        layer_size,
        runtime_dependencies,
    )

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        PipLayerBundling(HooklineConfig(), runtime_dependencies()).try_bundle(folder)
        total = layer_size(out)
        site = out / "python"
        sizes = sorted(
            ((layer_size(p) if p.is_dir() else p.stat().st_size, p.name) for p in site.iterdir()),
            reverse=True,
        )
        print(f"\nlayer unzipped: {total / 1e6:.1f} MB (budget {MAX_LAYER_BYTES / 1e6:.1f} MB)")
        for size, name in sizes[:8]:
            print(f"  {name:<32}{size / 1e6:>6.1f} MB")


if __name__ == "__main__":
    main()
