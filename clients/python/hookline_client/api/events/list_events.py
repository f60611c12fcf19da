import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.event_page import EventPage
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    tenant_id: None | str | Unset = UNSET,
    type_: None | str | Unset = UNSET,
    source_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    cursor: None | str | Unset = UNSET,
    limit: int | Unset = 50,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_tenant_id: None | str | Unset
    if isinstance(tenant_id, Unset):
        json_tenant_id = UNSET
    else:
        json_tenant_id = tenant_id
    params["tenant_id"] = json_tenant_id

    json_type_: None | str | Unset
    if isinstance(type_, Unset):
        json_type_ = UNSET
    else:
        json_type_ = type_
    params["type"] = json_type_

    json_source_id: None | str | Unset
    if isinstance(source_id, Unset):
        json_source_id = UNSET
    else:
        json_source_id = source_id
    params["source_id"] = json_source_id

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    elif isinstance(since, datetime.datetime):
        json_since = since.isoformat()
    else:
        json_since = since
    params["since"] = json_since

    json_until: None | str | Unset
    if isinstance(until, Unset):
        json_until = UNSET
    elif isinstance(until, datetime.datetime):
        json_until = until.isoformat()
    else:
        json_until = until
    params["until"] = json_until

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EventPage | Problem | None:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EventPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    tenant_id: None | str | Unset = UNSET,
    type_: None | str | Unset = UNSET,
    source_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    cursor: None | str | Unset = UNSET,
    limit: int | Unset = 50,
) -> Response[EventPage | Problem]:
    """List events

    Args:
        tenant_id (None | str | Unset):
        type_ (None | str | Unset):
        source_id (None | str | Unset):
        since (datetime.datetime | None | Unset): from this instant (inclusive)
        until (datetime.datetime | None | Unset): up to this instant (exclusive)
        cursor (None | str | Unset): next_cursor of a page
        limit (int | Unset): page size Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventPage | Problem]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        type_=type_,
        source_id=source_id,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    tenant_id: None | str | Unset = UNSET,
    type_: None | str | Unset = UNSET,
    source_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    cursor: None | str | Unset = UNSET,
    limit: int | Unset = 50,
) -> EventPage | Problem | None:
    """List events

    Args:
        tenant_id (None | str | Unset):
        type_ (None | str | Unset):
        source_id (None | str | Unset):
        since (datetime.datetime | None | Unset): from this instant (inclusive)
        until (datetime.datetime | None | Unset): up to this instant (exclusive)
        cursor (None | str | Unset): next_cursor of a page
        limit (int | Unset): page size Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventPage | Problem
    """

    return sync_detailed(
        client=client,
        tenant_id=tenant_id,
        type_=type_,
        source_id=source_id,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    tenant_id: None | str | Unset = UNSET,
    type_: None | str | Unset = UNSET,
    source_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    cursor: None | str | Unset = UNSET,
    limit: int | Unset = 50,
) -> Response[EventPage | Problem]:
    """List events

    Args:
        tenant_id (None | str | Unset):
        type_ (None | str | Unset):
        source_id (None | str | Unset):
        since (datetime.datetime | None | Unset): from this instant (inclusive)
        until (datetime.datetime | None | Unset): up to this instant (exclusive)
        cursor (None | str | Unset): next_cursor of a page
        limit (int | Unset): page size Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventPage | Problem]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        type_=type_,
        source_id=source_id,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    tenant_id: None | str | Unset = UNSET,
    type_: None | str | Unset = UNSET,
    source_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    cursor: None | str | Unset = UNSET,
    limit: int | Unset = 50,
) -> EventPage | Problem | None:
    """List events

    Args:
        tenant_id (None | str | Unset):
        type_ (None | str | Unset):
        source_id (None | str | Unset):
        since (datetime.datetime | None | Unset): from this instant (inclusive)
        until (datetime.datetime | None | Unset): up to this instant (exclusive)
        cursor (None | str | Unset): next_cursor of a page
        limit (int | Unset): page size Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventPage | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            tenant_id=tenant_id,
            type_=type_,
            source_id=source_id,
            since=since,
            until=until,
            cursor=cursor,
            limit=limit,
        )
    ).parsed
