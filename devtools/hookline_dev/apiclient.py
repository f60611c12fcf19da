"""The management API as the `hookline` command speaks it: one request in, JSON out.

Two transports, one code path (docs/decisions/0017-cli-speaks-the-api.md):

* `InProcessApi` (no `--api`): the request becomes the API Gateway proxy event AWS would
  build and the API's own routes (`hookline.api`) answer it in this process, on the database
  DATABASE_URL names, as an operator (a resolver built with a trusted caller: whoever holds
  the database URL can do anything anyway);
* `HttpApi` (`--api URL`): the request goes over HTTP to a deployed API, signed with SigV4
  (`execute-api`, credentials from the usual AWS chain), or with a bearer key for the
  `hookline dev` front.

Both give (status, JSON); `ApiClient` turns a problem answer into `ApiError`.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

from hookline.errors import BadRequest, HooklineError

MAX_PAGE = 200  # the API's largest page


class ApiError(HooklineError):
    """The API refused a request (its problem detail), or could not be reached."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail

    @property
    def unavailable(self) -> bool:
        """The database (or the API itself) is down: retry later."""
        return self.status in (502, 503, 504)


class Transport(Protocol):
    """Sends one request to the management API."""

    def send(
        self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """Status and body of the answer."""
        ...

    def close(self) -> None:
        """Release what the transport holds."""
        ...


def cli_principal() -> str:
    """Who the in-process API records as the caller: `cli:<os user>`."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"cli:{user}"


class InProcessApi:
    """The API's resolver, run here against the configured database as one trusted caller."""

    def __init__(self, principal: str | None = None) -> None:
        from hookline.api import build_app
        from hookline.api.edge import trusted
        from hookline.db import resolve_conninfo
        from hookline.management.access import OPERATOR, Caller
        from hookline.problems import per_thread
        from hookline.settings import get_settings

        try:
            resolve_conninfo(get_settings())
        except RuntimeError as err:
            raise BadRequest(
                "no database to run the API against: set DATABASE_URL (for the dev stack: "
                'eval "$(hookline dev --print-env)"), or send the command to a deployed API with '
                "--api URL"
            ) from err

        self.caller = Caller(principal or cli_principal(), OPERATOR)
        caller = trusted(self.caller)
        self._app = per_thread(lambda: build_app(caller))

    def send(
        self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """Resolve the request as API Gateway would hand it to the function."""
        import base64

        from hookline.api import serve
        from hookline_dev.local.apigw import LocalContext, build_rest_event

        event = build_rest_event(method, path, headers, body, query=query)
        with logs_to_stderr():
            context: Any = LocalContext(function_name="hookline-cli")
            answer = serve(self._app(), event, context)
        raw = answer.get("body") or ""
        data = base64.b64decode(raw) if answer.get("isBase64Encoded") else str(raw).encode()
        return int(answer["statusCode"]), data

    def close(self) -> None:
        """Let replays this process runs (locally, the API runs them in a thread) finish, then
        close the process-wide pool the handler opened and forget the settings it read."""
        from hookline.db import reset_database
        from hookline.replay import wait_for_local_replays

        while not wait_for_local_replays(timeout=60.0):
            print("waiting for the replay this process runs to finish...", file=sys.stderr)
        reset_database()


@contextlib.contextmanager
def logs_to_stderr() -> Iterator[None]:
    """Keep the API's Powertools log lines (stdout, INFO by default) out of the command's
    output: only warnings and errors, and on stderr."""
    from hookline.observability import logger

    handler = logger.registered_handler
    level = logger.log_level
    stream = handler.setStream(sys.stderr) if isinstance(handler, logging.StreamHandler) else None
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)
        if stream is not None and isinstance(handler, logging.StreamHandler):
            handler.setStream(stream)


class HttpApi:
    """A deployed API (SigV4) or a `hookline dev` front (`key`: a bearer key)."""

    def __init__(self, base_url: str, *, region: str, key: str | None = None) -> None:
        import httpx

        if urlsplit(base_url).scheme not in ("http", "https"):
            raise BadRequest("--api takes the API's base URL, e.g. https://abc.execute-api.../live")
        self.base_url = base_url.rstrip("/")
        self.region = region
        self.key = key
        self._http = httpx.Client(timeout=30)

    def send(
        self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """One HTTP request; a connection failure is a 503 (exit 3: retry later)."""
        import httpx

        url = self.base_url + path + (f"?{query}" if query else "")
        if self.key:
            headers = {**headers, "Authorization": f"Bearer {self.key}"}
        else:
            headers = signed_headers(method, url, body, self.region, headers)
        try:
            response = self._http.request(method, url, content=body, headers=headers)
        except httpx.HTTPError as err:
            raise ApiError(503, f"cannot reach the API at {self.base_url}: {err}") from err
        return response.status_code, response.content

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def signed_headers(
    method: str, url: str, body: bytes, region: str, headers: dict[str, str]
) -> dict[str, str]:
    """`headers` plus SigV4 for API Gateway (`execute-api`), with the default credentials."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    credentials = boto3.Session().get_credentials()
    if credentials is None:
        raise BadRequest("no AWS credentials found (the usual chain: env, profile, SSO, role)")
    request = AWSRequest(method=method, url=url, data=body, headers=headers)
    SigV4Auth(credentials, "execute-api", region).add_auth(request)
    return dict(request.headers.items())


@dataclass
class ApiClient:
    """JSON requests to the management API over one transport."""

    transport: Transport

    def request(
        self,
        method: str,
        path: str,
        *,
        data: Any = None,
        query: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """The answer's JSON; `ApiError` with the problem's detail for a 4xx or 5xx."""
        status, answer = self.exchange(
            method, path, data=data, query=query, idempotency_key=idempotency_key
        )
        if status >= 400:
            raise ApiError(status, problem_detail(status, answer))
        return answer

    def exchange(
        self,
        method: str,
        path: str,
        *,
        data: Any = None,
        query: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[int, Any]:
        """Status and JSON answer, whatever the status."""
        if not path.startswith("/v1/"):
            path = "/v1/" + path.lstrip("/")
        body = b"" if data is None else json.dumps(data).encode()
        headers = {"Content-Type": "application/json"} if body else {}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        status, raw = self.transport.send(method.upper(), path, urlencode(params), body, headers)
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = {"detail": raw[:500].decode("utf-8", "replace")}
        return status, answer

    def page_through(
        self,
        path: str,
        query: Mapping[str, Any] | None = None,
        *,
        limit: int = 50,
        cursor: str | None = None,
        everything: bool = False,
    ) -> dict[str, Any]:
        """Up to `limit` items (with `everything`, every item, `limit` a page), following
        `next_cursor`; in the API's page shape: `{"items": [...], "next_cursor": ...}`."""
        if limit < 1:
            raise BadRequest("--limit must be at least 1")
        items: list[Any] = []
        while True:
            wanted = min(MAX_PAGE, limit if everything else limit - len(items))
            page = self.request(
                "GET", path, query={**(query or {}), "limit": wanted, "cursor": cursor}
            )
            items += page["items"]
            cursor = page.get("next_cursor")
            if cursor is None or (not everything and len(items) >= limit):
                return {"items": items, "next_cursor": cursor}

    def close(self) -> None:
        """Release the transport."""
        self.transport.close()


def problem_detail(status: int, answer: Any) -> str:
    """One line from a problem answer (or API Gateway's own `{"message": ...}`)."""
    if isinstance(answer, dict):
        detail = answer.get("detail") or answer.get("message")
        if detail:
            return str(detail)
    return f"the API answered {status}"


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
