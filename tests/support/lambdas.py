"""Invoking handlers in-process with real API Gateway REST event shapes."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hookline_dev.local.apigw import LocalContext, build_rest_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass
class HttpResult:
    """What the caller of the API would see."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class ApiClient:
    """Sends requests to a handler as API Gateway would."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | list[tuple[str, str]] | None = None,
        body: bytes = b"",
        base64_body: bool = True,
        identity_arn: str | None = None,
    ) -> HttpResult:
        event = build_rest_event(
            method, path, headers or {}, body, base64_body=base64_body, identity_arn=identity_arn
        )
        response = self.handler(event, LocalContext(function_name="receiver"))
        raw = response.get("body") or ""
        data = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
        merged = dict(response.get("headers") or {})
        for k, values in (response.get("multiValueHeaders") or {}).items():
            merged[k] = values[-1]
        return HttpResult(response["statusCode"], merged, data)

    def post(self, path: str, **kwargs: Any) -> HttpResult:
        return self.request("POST", path, **kwargs)
