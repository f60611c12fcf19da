from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.restore_state import RestoreState, check_restore_state

if TYPE_CHECKING:
    from ..models.restore_request import RestoreRequest
    from ..models.restore_result_type_0 import RestoreResultType0


T = TypeVar("T", bound="Restore")


@_attrs_define
class Restore:
    """A restore and how it stands. `result` holds the counts once it has finished
    (`archived`, `restored`, `skipped` — already in the ledger), or `error` if it failed.

        Attributes:
            audit_id (int | None):
            created_at (datetime.datetime):
            finished_at (datetime.datetime | None):
            id (str):
            reason (str):
            request (RestoreRequest):
            requested_by (str):
            result (None | RestoreResultType0):
            started_at (datetime.datetime | None):
            state (RestoreState):
            tenant_id (str):
    """

    audit_id: int | None
    created_at: datetime.datetime
    finished_at: datetime.datetime | None
    id: str
    reason: str
    request: RestoreRequest
    requested_by: str
    result: None | RestoreResultType0
    started_at: datetime.datetime | None
    state: RestoreState
    tenant_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.restore_result_type_0 import RestoreResultType0  # noqa: PLC0415

        audit_id: int | None
        audit_id = self.audit_id

        created_at = self.created_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = self.id

        reason = self.reason

        request = self.request.to_dict()

        requested_by = self.requested_by

        result: dict[str, Any] | None
        if isinstance(self.result, RestoreResultType0):
            result = self.result.to_dict()
        else:
            result = self.result

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        state: str = self.state

        tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "audit_id": audit_id,
                "created_at": created_at,
                "finished_at": finished_at,
                "id": id,
                "reason": reason,
                "request": request,
                "requested_by": requested_by,
                "result": result,
                "started_at": started_at,
                "state": state,
                "tenant_id": tenant_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.restore_request import RestoreRequest  # noqa: PLC0415
        from ..models.restore_result_type_0 import RestoreResultType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_audit_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        audit_id = _parse_audit_id(d.pop("audit_id"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        id = d.pop("id")

        reason = d.pop("reason")

        request = RestoreRequest.from_dict(d.pop("request"))

        requested_by = d.pop("requested_by")

        def _parse_result(data: object) -> None | RestoreResultType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = RestoreResultType0.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RestoreResultType0, data)

        result = _parse_result(d.pop("result"))

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        state = check_restore_state(d.pop("state"))

        tenant_id = d.pop("tenant_id")

        restore = cls(
            audit_id=audit_id,
            created_at=created_at,
            finished_at=finished_at,
            id=id,
            reason=reason,
            request=request,
            requested_by=requested_by,
            result=result,
            started_at=started_at,
            state=state,
            tenant_id=tenant_id,
        )

        restore.additional_properties = d
        return restore

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
