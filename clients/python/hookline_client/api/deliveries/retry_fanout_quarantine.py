from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.quarantine_retried import QuarantineRetried
from ...models.quarantine_retry import QuarantineRetry
from ...types import Response


def _get_kwargs(
    *,
    body: QuarantineRetry,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/fanout-quarantine/retry",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | QuarantineRetried | None:
    if response.status_code == 200:
        response_200 = QuarantineRetried.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | QuarantineRetried]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: QuarantineRetry,
) -> Response[Problem | QuarantineRetried]:
    """Decide quarantined fan-out pairs again (audited)

    Args:
        body (QuarantineRetry): Which quarantined pairs to decide again: a tenant's (an operator
            may name one; none:
            every tenant's), only these events' when given, at most `limit`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | QuarantineRetried]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: QuarantineRetry,
) -> Problem | QuarantineRetried | None:
    """Decide quarantined fan-out pairs again (audited)

    Args:
        body (QuarantineRetry): Which quarantined pairs to decide again: a tenant's (an operator
            may name one; none:
            every tenant's), only these events' when given, at most `limit`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | QuarantineRetried
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: QuarantineRetry,
) -> Response[Problem | QuarantineRetried]:
    """Decide quarantined fan-out pairs again (audited)

    Args:
        body (QuarantineRetry): Which quarantined pairs to decide again: a tenant's (an operator
            may name one; none:
            every tenant's), only these events' when given, at most `limit`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | QuarantineRetried]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: QuarantineRetry,
) -> Problem | QuarantineRetried | None:
    """Decide quarantined fan-out pairs again (audited)

    Args:
        body (QuarantineRetry): Which quarantined pairs to decide again: a tenant's (an operator
            may name one; none:
            every tenant's), only these events' when given, at most `limit`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | QuarantineRetried
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
