"""The `hookline` command: manage Hookline from a terminal.

Resource commands (tenants, sources, endpoints, events, event types, deliveries, replays,
status) are requests to the management API: run in this process against DATABASE_URL by
default, or sent to a deployed API with `--api URL` (SigV4) — docs/decisions/0017. Every
command prints a readable table, or the API's JSON with `--json`. Exit codes: 0 done, 1 a
refused request (the reason on stderr), 3 the database or the API is unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from importlib import import_module
from pkgutil import iter_modules
from typing import Any

from hookline import __version__
from hookline.db import Database, resolve_conninfo
from hookline.errors import BadRequest, DatabaseUnavailable, HooklineError
from hookline.settings import Settings
from hookline_dev import commands
from hookline_dev.apiclient import ApiClient, ApiError, HttpApi, InProcessApi
from hookline_dev.terminal import Listing, Outcome

Command = Callable[[argparse.Namespace, "Runtime"], Any]


class Runtime:
    """What commands need, built lazily so `--help` works without a database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._db: Database | None = None
        self._client: ApiClient | None = None

    @property
    def conninfo(self) -> str:
        """The database connection string."""
        try:
            return resolve_conninfo(self.settings)
        except RuntimeError as err:
            raise BadRequest(str(err)) from err

    @property
    def db(self) -> Database:
        """A small pool, opened on first use."""
        if self._db is None:
            self._db = Database(
                self.conninfo, max_size=2, timeout=self.settings.db_connect_timeout_seconds
            )
        return self._db

    def client(self, args: argparse.Namespace, principal: str | None = None) -> ApiClient:
        """The management API: over HTTP with `--api URL`, else in this process, as
        `principal` (default `cli:<os user>`)."""
        if self._client is None:
            url = getattr(args, "api", None)
            if url:
                key = getattr(args, "key", None) or self.settings.api_key
                transport: Any = HttpApi(url, region=self.settings.aws_region, key=key)
            else:
                transport = InProcessApi(principal)
            self._client = ApiClient(transport)
        return self._client

    def close(self) -> None:
        """Release the pool and the API client."""
        if self._db is not None:
            self._db.close()
        if self._client is not None:
            self._client.close()


def api_options() -> argparse.ArgumentParser:
    """`--api URL` and `--key`: the options of every command that is an API request."""
    options = argparse.ArgumentParser(add_help=False)
    group = options.add_argument_group("where the API is")
    group.add_argument(
        "--api",
        metavar="URL",
        default=os.environ.get("HOOKLINE_API_URL") or None,
        help="a deployed API's base URL, called with SigV4 (default: $HOOKLINE_API_URL; "
        "none: run the API in this process against DATABASE_URL, as an operator)",
    )
    group.add_argument(
        "--key", help="a bearer key instead of SigV4 (a `hookline dev` front; $HOOKLINE_API_KEY)"
    )
    return options


@lru_cache(maxsize=1)
def list_options() -> argparse.ArgumentParser:
    """`--limit`, `--cursor` and `--all`: the options of every list."""
    options = argparse.ArgumentParser(add_help=False)
    group = options.add_argument_group("paging")
    group.add_argument(
        "--limit", type=int, default=50, help="at most this many (default 50; with --all: a page)"
    )
    group.add_argument("--cursor", help="start after this page (a list's next_cursor)")
    group.add_argument("--all", action="store_true", help="every page, however many")
    return options


def listing(
    args: argparse.Namespace,
    rt: Runtime,
    path: str,
    query: dict[str, Any],
    columns: Sequence[str],
) -> Listing:
    """One list request, paged as `--limit/--cursor/--all` ask, shown with `columns`."""
    page = rt.client(args).page_through(
        path, query, limit=args.limit, cursor=args.cursor, everything=args.all
    )
    return Listing(page, columns)


def instant(value: str | None, flag: str) -> str | None:
    """An ISO 8601 time or a duration ago (`30m`, `6h`, `2d`) as the ISO time the API takes."""
    if value is None:
        return None
    from hookline.replay.request import parse_instant, utcnow

    return parse_instant(value, flag, utcnow()).isoformat()


def json_argument(text: str | None, flag: str) -> Any:
    """A JSON option's value, or a clear error."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadRequest(f"{flag} must be valid JSON") from err


def cmd_migrate(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.migrate import current_version, migrate

    applied = migrate(rt.conninfo, rt.settings.config)
    return {"applied": applied, "version": current_version(rt.conninfo)}


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    # `--json` before or after the command: a subcommand's own default would otherwise
    # overwrite the value given before it (argparse), so only the top level has a default.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON, not a table"
    )

    parser = argparse.ArgumentParser(prog="hookline", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--version", action="version", version=f"hookline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("migrate", parents=[common], help="apply database migrations").set_defaults(
        func=cmd_migrate
    )

    for module in iter_modules(commands.__path__):
        import_module(f"{commands.__name__}.{module.name}").register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit 0 on success, 1 on a refused request, 3 if the database (or the
    API) is unavailable."""
    args = build_parser().parse_args(argv)
    runtime = Runtime(Settings.from_env())
    try:
        result = args.func(args, runtime)
    except ApiError as err:
        print(f"error: {err.detail}", file=sys.stderr)
        return 3 if err.unavailable else 1
    except DatabaseUnavailable as err:
        print(f"error: {err}{_cause(err)}", file=sys.stderr)
        return 3
    except HooklineError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        runtime.close()
    code = 0
    if isinstance(result, Outcome):
        result, code = result.result, result.code
    print(render(result, as_json=args.json))
    return code


def _cause(err: Exception) -> str:
    """What the driver said, for the operator at the terminal: " (its class: its first line)"."""
    cause = err.__cause__
    first = str(cause).strip().splitlines()[:1] if cause is not None else []
    return f" ({type(cause).__name__}: {first[0][:300]})" if first else ""


def render(result: Any, *, as_json: bool) -> str:
    """JSON, or a plain table for lists of rows and key/value lines for one object."""
    if isinstance(result, Listing):
        if as_json:
            return render(result.page, as_json=True)
        text = table(result.page["items"], result.columns)
        if result.page.get("next_cursor"):
            text += f"\n(more: --all, or --cursor {result.page['next_cursor']})"
        return text
    if as_json:
        return json.dumps(result, default=_json_default, indent=2)
    if isinstance(result, list):
        return table(result)
    if isinstance(result, dict):
        width = max((len(k) for k in result), default=0)
        return "\n".join(f"{k.ljust(width)}  {_cell(v)}" for k, v in result.items())
    return str(result)


def table(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Rows as aligned columns (all of the first row's keys unless `columns` are named)."""
    if not rows:
        return "(none)"
    columns = list(columns or rows[0])
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=_json_default)
    return "" if value is None else str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":
    raise SystemExit(main())
