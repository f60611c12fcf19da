from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.event_type import EventType
from ...models.event_type_update import EventTypeUpdate
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    event_type_id: str,
    *,
    body: EventTypeUpdate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/event-types/{event_type_id}".format(
            event_type_id=quote(str(event_type_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EventType | Problem | None:
    if response.status_code == 200:
        response_200 = EventType.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EventType | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    event_type_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUpdate,
) -> Response[EventType | Problem]:
    """Update an event type's description or schema

    Args:
        event_type_id (str):
        body (EventTypeUpdate): The fields to change; absent fields keep their value. `schema:
            null` removes the
            schema (payloads are then no longer validated).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventType | Problem]
    """

    kwargs = _get_kwargs(
        event_type_id=event_type_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    event_type_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUpdate,
) -> EventType | Problem | None:
    """Update an event type's description or schema

    Args:
        event_type_id (str):
        body (EventTypeUpdate): The fields to change; absent fields keep their value. `schema:
            null` removes the
            schema (payloads are then no longer validated).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventType | Problem
    """

    return sync_detailed(
        event_type_id=event_type_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    event_type_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUpdate,
) -> Response[EventType | Problem]:
    """Update an event type's description or schema

    Args:
        event_type_id (str):
        body (EventTypeUpdate): The fields to change; absent fields keep their value. `schema:
            null` removes the
            schema (payloads are then no longer validated).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventType | Problem]
    """

    kwargs = _get_kwargs(
        event_type_id=event_type_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    event_type_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUpdate,
) -> EventType | Problem | None:
    """Update an event type's description or schema

    Args:
        event_type_id (str):
        body (EventTypeUpdate): The fields to change; absent fields keep their value. `schema:
            null` removes the
            schema (payloads are then no longer validated).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventType | Problem
    """

    return (
        await asyncio_detailed(
            event_type_id=event_type_id,
            client=client,
            body=body,
        )
    ).parsed
