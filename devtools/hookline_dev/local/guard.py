"""What the dev front checks before `/v1` reaches the management API function.

On AWS, `/v1` takes only SigV4-signed requests, which no web page can make. The dev front
listens on loopback, where any page the developer visits can send it requests: a form or a
`fetch(..., {mode: "no-cors"})` to `http://127.0.0.1:8080/v1/...` (CSRF), or a page on a name
the attacker re-points at 127.0.0.1 (DNS rebinding), which the browser then treats as that
page's own origin. So, for every `/v1` request (decision 0030):

* the `Host` must be the address or name the front listens on (`127.0.0.1:PORT`,
  `localhost:PORT`): a rebound name arrives with the attacker's host name (403);
* an `Origin`, when there is one, must be the front's own (403): browsers send it on every
  cross-origin request and on every non-GET one, and a page cannot forge it;
* a state-changing request (POST, PUT, PATCH, DELETE) with a body, or with any content type,
  must be JSON (415): a JSON content type is not one a page may send cross-origin without a
  CORS preflight, which the front never grants (it sends no `Access-Control-Allow-*` header);
* the caller needs a key (`Authorization: Bearer <key>`, checked by the API function: the
  stack's operator key, or a tenant's key) unless the browser says the request is
  same-origin (`Origin` is the front's own, or `Sec-Fetch-Site: same-origin`): then the front
  adds the operator key itself, as a page served by the stack would be its operator's.

`/in/{source_id}` is not checked: providers post cross-origin by nature, and the signature is
the auth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

LOOPBACK_NAMES = ("127.0.0.1", "localhost")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Refused(Exception):
    """The front refuses the request itself (no function runs)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ApiGuard:
    """The checks for one front: the port it listens on, and the operator key it adds to
    same-origin requests (None: it adds none)."""

    port: int
    operator_key: str | None = None

    @property
    def origins(self) -> frozenset[str]:
        """The front's own origins, as a browser writes them."""
        found = {f"http://{name}:{self.port}" for name in LOOPBACK_NAMES}
        if self.port == 80:
            found |= {f"http://{name}" for name in LOOPBACK_NAMES}
        return frozenset(found)

    def screen(
        self, method: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> list[tuple[str, str]]:
        """The request's headers as the API function gets them; raises `Refused`."""
        self._check_host(_values(headers, "host"))
        origins = _values(headers, "origin")
        if any(origin.lower() not in self.origins for origin in origins):
            raise Refused(403, "cross-origin requests to /v1 are refused")
        if method.upper() in STATE_CHANGING:
            _check_json(_values(headers, "content-type"), body)
        forwarded = list(headers)
        if self.operator_key and not _values(headers, "authorization"):
            fetch_site = _values(headers, "sec-fetch-site")
            if origins or fetch_site == ["same-origin"]:
                forwarded.append(("Authorization", f"Bearer {self.operator_key}"))
        return forwarded

    def _check_host(self, hosts: list[str]) -> None:
        if len(hosts) != 1:
            raise Refused(403, "a request to /v1 needs one Host header")
        name, colon, port = hosts[0].strip().lower().rpartition(":")
        if not colon or not port.isdigit():
            name, port = hosts[0].strip().lower(), "80"
        if name not in LOOPBACK_NAMES or int(port) != self.port:
            raise Refused(
                403, f"Host must be 127.0.0.1:{self.port} or localhost:{self.port} for /v1"
            )


def _check_json(content_types: list[str], body: bytes) -> None:
    if not content_types and not body:
        return  # e.g. POST /v1/endpoints/{id}/test: no body, nothing a form could carry
    if len(content_types) != 1 or not is_json_media_type(content_types[0]):
        raise Refused(415, "a /v1 request body must be JSON (Content-Type: application/json)")


def is_json_media_type(content_type: str) -> bool:
    """`application/json` or `application/<anything>+json`, with any parameters."""
    media = content_type.partition(";")[0].strip().lower()
    kind, _, subtype = media.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def _values(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name]
