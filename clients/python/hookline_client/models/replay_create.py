from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.replay_create_states_type_0_item import (
    ReplayCreateStatesType0Item,
    check_replay_create_states_type_0_item,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplayCreate")


@_attrs_define
class ReplayCreate:
    """A replay: exactly one selector (`delivery_ids`, `event_ids`, `endpoint_id` + `since`,
    `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
    Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester.

        Attributes:
            reason (str):
            delivery_ids (list[str] | None | Unset):
            dry_run (bool | Unset):  Default: False.
            endpoint_id (None | str | Unset):
            event_ids (list[str] | None | Unset):
            event_type (None | str | Unset):
            limit (int | None | Unset):
            max_per_second (float | None | Unset): deliveries per second (none: no limit)
            redrive_dlq (None | str | Unset):
            refanout (bool | Unset):  Default: False.
            since (None | str | Unset):
            states (list[ReplayCreateStatesType0Item] | None | Unset):
            tenant_id (None | str | Unset):
            until (None | str | Unset):
    """

    reason: str
    delivery_ids: list[str] | None | Unset = UNSET
    dry_run: bool | Unset = False
    endpoint_id: None | str | Unset = UNSET
    event_ids: list[str] | None | Unset = UNSET
    event_type: None | str | Unset = UNSET
    limit: int | None | Unset = UNSET
    max_per_second: float | None | Unset = UNSET
    redrive_dlq: None | str | Unset = UNSET
    refanout: bool | Unset = False
    since: None | str | Unset = UNSET
    states: list[ReplayCreateStatesType0Item] | None | Unset = UNSET
    tenant_id: None | str | Unset = UNSET
    until: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        delivery_ids: list[str] | None | Unset
        if isinstance(self.delivery_ids, Unset):
            delivery_ids = UNSET
        elif isinstance(self.delivery_ids, list):
            delivery_ids = self.delivery_ids

        else:
            delivery_ids = self.delivery_ids

        dry_run = self.dry_run

        endpoint_id: None | str | Unset
        if isinstance(self.endpoint_id, Unset):
            endpoint_id = UNSET
        else:
            endpoint_id = self.endpoint_id

        event_ids: list[str] | None | Unset
        if isinstance(self.event_ids, Unset):
            event_ids = UNSET
        elif isinstance(self.event_ids, list):
            event_ids = self.event_ids

        else:
            event_ids = self.event_ids

        event_type: None | str | Unset
        if isinstance(self.event_type, Unset):
            event_type = UNSET
        else:
            event_type = self.event_type

        limit: int | None | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        max_per_second: float | None | Unset
        if isinstance(self.max_per_second, Unset):
            max_per_second = UNSET
        else:
            max_per_second = self.max_per_second

        redrive_dlq: None | str | Unset
        if isinstance(self.redrive_dlq, Unset):
            redrive_dlq = UNSET
        else:
            redrive_dlq = self.redrive_dlq

        refanout = self.refanout

        since: None | str | Unset
        if isinstance(self.since, Unset):
            since = UNSET
        else:
            since = self.since

        states: list[str] | None | Unset
        if isinstance(self.states, Unset):
            states = UNSET
        elif isinstance(self.states, list):
            states = []
            for states_type_0_item_data in self.states:
                states_type_0_item: str = states_type_0_item_data
                states.append(states_type_0_item)

        else:
            states = self.states

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = self.tenant_id

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        else:
            until = self.until

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "reason": reason,
            }
        )
        if delivery_ids is not UNSET:
            field_dict["delivery_ids"] = delivery_ids
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if endpoint_id is not UNSET:
            field_dict["endpoint_id"] = endpoint_id
        if event_ids is not UNSET:
            field_dict["event_ids"] = event_ids
        if event_type is not UNSET:
            field_dict["event_type"] = event_type
        if limit is not UNSET:
            field_dict["limit"] = limit
        if max_per_second is not UNSET:
            field_dict["max_per_second"] = max_per_second
        if redrive_dlq is not UNSET:
            field_dict["redrive_dlq"] = redrive_dlq
        if refanout is not UNSET:
            field_dict["refanout"] = refanout
        if since is not UNSET:
            field_dict["since"] = since
        if states is not UNSET:
            field_dict["states"] = states
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = d.pop("reason")

        def _parse_delivery_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                delivery_ids_type_0 = cast(list[str], data)

                return delivery_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        delivery_ids = _parse_delivery_ids(d.pop("delivery_ids", UNSET))

        dry_run = d.pop("dry_run", UNSET)

        def _parse_endpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint_id = _parse_endpoint_id(d.pop("endpoint_id", UNSET))

        def _parse_event_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                event_ids_type_0 = cast(list[str], data)

                return event_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        event_ids = _parse_event_ids(d.pop("event_ids", UNSET))

        def _parse_event_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event_type = _parse_event_type(d.pop("event_type", UNSET))

        def _parse_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        def _parse_max_per_second(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_per_second = _parse_max_per_second(d.pop("max_per_second", UNSET))

        def _parse_redrive_dlq(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        redrive_dlq = _parse_redrive_dlq(d.pop("redrive_dlq", UNSET))

        refanout = d.pop("refanout", UNSET)

        def _parse_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        since = _parse_since(d.pop("since", UNSET))

        def _parse_states(data: object) -> list[ReplayCreateStatesType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                states_type_0 = []
                _states_type_0 = data
                for states_type_0_item_data in _states_type_0:
                    states_type_0_item = check_replay_create_states_type_0_item(states_type_0_item_data)

                    states_type_0.append(states_type_0_item)

                return states_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ReplayCreateStatesType0Item] | None | Unset, data)

        states = _parse_states(d.pop("states", UNSET))

        def _parse_tenant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        def _parse_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        until = _parse_until(d.pop("until", UNSET))

        replay_create = cls(
            reason=reason,
            delivery_ids=delivery_ids,
            dry_run=dry_run,
            endpoint_id=endpoint_id,
            event_ids=event_ids,
            event_type=event_type,
            limit=limit,
            max_per_second=max_per_second,
            redrive_dlq=redrive_dlq,
            refanout=refanout,
            since=since,
            states=states,
            tenant_id=tenant_id,
            until=until,
        )

        return replay_create
