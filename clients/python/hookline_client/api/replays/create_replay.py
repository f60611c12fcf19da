from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.replay import Replay
from ...models.replay_create import ReplayCreate
from ...types import Response


def _get_kwargs(
    *,
    body: ReplayCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/replays",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | Replay | None:
    if response.status_code == 202:
        response_202 = Replay.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | Replay]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ReplayCreate,
) -> Response[Problem | Replay]:
    """Replay deliveries (runs in the background; GET its Location for progress)

    Args:
        body (ReplayCreate): A replay: exactly one selector (`delivery_ids`, `event_ids`,
            `endpoint_id` + `since`,
            `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
            Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Replay]
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
    body: ReplayCreate,
) -> Problem | Replay | None:
    """Replay deliveries (runs in the background; GET its Location for progress)

    Args:
        body (ReplayCreate): A replay: exactly one selector (`delivery_ids`, `event_ids`,
            `endpoint_id` + `since`,
            `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
            Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Replay
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ReplayCreate,
) -> Response[Problem | Replay]:
    """Replay deliveries (runs in the background; GET its Location for progress)

    Args:
        body (ReplayCreate): A replay: exactly one selector (`delivery_ids`, `event_ids`,
            `endpoint_id` + `since`,
            `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
            Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Replay]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ReplayCreate,
) -> Problem | Replay | None:
    """Replay deliveries (runs in the background; GET its Location for progress)

    Args:
        body (ReplayCreate): A replay: exactly one selector (`delivery_ids`, `event_ids`,
            `endpoint_id` + `since`,
            `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
            Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Replay
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
