"""How a Hookline client authenticates: the one hand-written module of this package (the rest
is generated from docs/openapi.json by `make clients` and must not be edited).

* `bearer_client(url, key)`: a tenant principal's key, or `hookline dev`'s HOOKLINE_API_KEY.
* `sigv4_client(url, region=...)`: a deployment behind API Gateway's IAM authorisation; every
  request is signed with AWS Signature Version 4 for `execute-api` by botocore (install the
  `sigv4` extra), with credentials from the usual chain unless given.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx

from .client import AuthenticatedClient, Client

SERVICE = "execute-api"


def bearer_client(base_url: str, key: str, **options: Any) -> AuthenticatedClient:
    """A client that sends `Authorization: Bearer <key>`."""
    return AuthenticatedClient(base_url=base_url, token=key, **options)


class SigV4Auth(httpx.Auth):
    """httpx authentication that signs each request (method, URL, headers, body) with SigV4."""

    requires_request_body = True

    def __init__(self, region: str, credentials: Any = None, service: str = SERVICE) -> None:
        from botocore.session import Session

        self.region = region
        self.service = service
        self.credentials = credentials or Session().get_credentials()
        if self.credentials is None:
            raise ValueError("no AWS credentials found (environment, profile, SSO or role)")

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Sign the request as it is about to be sent."""
        from botocore.auth import SigV4Auth as BotocoreSigV4
        from botocore.awsrequest import AWSRequest

        # Only what API Gateway needs signed: a proxy or the transport may change the rest.
        headers = {"host": request.headers["host"]}
        if "content-type" in request.headers:
            headers["content-type"] = request.headers["content-type"]
        signed = AWSRequest(method=request.method, url=str(request.url), data=request.content, headers=headers)
        credentials = self.credentials.get_frozen_credentials()
        BotocoreSigV4(credentials, self.service, self.region).add_auth(signed)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in signed.headers:
                request.headers[name] = signed.headers[name]
        yield request


def sigv4_client(base_url: str, *, region: str, credentials: Any = None, **options: Any) -> Client:
    """A client whose requests are signed with SigV4 for API Gateway (`execute-api`)."""
    httpx_args = {**options.pop("httpx_args", {}), "auth": SigV4Auth(region, credentials)}
    return Client(base_url=base_url, httpx_args=httpx_args, **options)
