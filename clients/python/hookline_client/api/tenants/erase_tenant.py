from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.tenant_erased import TenantErased
from ...types import UNSET, Response, Unset


def _get_kwargs(
    tenant_id: str,
    *,
    erase: bool | Unset = False,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["erase"] = erase

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/tenants/{tenant_id}".format(
            tenant_id=quote(str(tenant_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | TenantErased | None:
    if response.status_code == 200:
        response_200 = TenantErased.from_dict(response.json())

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
) -> Response[Problem | TenantErased]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    erase: bool | Unset = False,
) -> Response[Problem | TenantErased]:
    """Erase a tenant's events, deliveries, secrets and archive (operators; erase=true)

    Args:
        tenant_id (str):
        erase (bool | Unset): must be true: erasure is for good Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TenantErased]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        erase=erase,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    erase: bool | Unset = False,
) -> Problem | TenantErased | None:
    """Erase a tenant's events, deliveries, secrets and archive (operators; erase=true)

    Args:
        tenant_id (str):
        erase (bool | Unset): must be true: erasure is for good Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TenantErased
    """

    return sync_detailed(
        tenant_id=tenant_id,
        client=client,
        erase=erase,
    ).parsed


async def asyncio_detailed(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    erase: bool | Unset = False,
) -> Response[Problem | TenantErased]:
    """Erase a tenant's events, deliveries, secrets and archive (operators; erase=true)

    Args:
        tenant_id (str):
        erase (bool | Unset): must be true: erasure is for good Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TenantErased]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        erase=erase,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    erase: bool | Unset = False,
) -> Problem | TenantErased | None:
    """Erase a tenant's events, deliveries, secrets and archive (operators; erase=true)

    Args:
        tenant_id (str):
        erase (bool | Unset): must be true: erasure is for good Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TenantErased
    """

    return (
        await asyncio_detailed(
            tenant_id=tenant_id,
            client=client,
            erase=erase,
        )
    ).parsed
