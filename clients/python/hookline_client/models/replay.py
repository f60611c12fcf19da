from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.replay_state import ReplayState, check_replay_state

if TYPE_CHECKING:
    from ..models.replay_request import ReplayRequest
    from ..models.replay_result_type_0 import ReplayResultType0


T = TypeVar("T", bound="Replay")


@_attrs_define
class Replay:
    """A replay and how far it is. `result` is the replay summary once it has finished
    (`error` says why when it failed). A replay larger than one run of the replay function
    continues in the next; `runs` counts them, `done`/`total` count across them.

        Attributes:
            audit_id (int | None):
            created_at (datetime.datetime):
            done (int):
            finished_at (datetime.datetime | None):
            heartbeat_at (datetime.datetime | None):
            id (str):
            reason (str):
            request (ReplayRequest):
            requested_by (str):
            result (None | ReplayResultType0):
            runs (int): runs of the replay function so far (0: not started)
            started_at (datetime.datetime | None):
            state (ReplayState):
            tenant_id (None | str):
            total (int | None):
    """

    audit_id: int | None
    created_at: datetime.datetime
    done: int
    finished_at: datetime.datetime | None
    heartbeat_at: datetime.datetime | None
    id: str
    reason: str
    request: ReplayRequest
    requested_by: str
    result: None | ReplayResultType0
    runs: int
    started_at: datetime.datetime | None
    state: ReplayState
    tenant_id: None | str
    total: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.replay_result_type_0 import ReplayResultType0  # noqa: PLC0415

        audit_id: int | None
        audit_id = self.audit_id

        created_at = self.created_at.isoformat()

        done = self.done

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        heartbeat_at: None | str
        if isinstance(self.heartbeat_at, datetime.datetime):
            heartbeat_at = self.heartbeat_at.isoformat()
        else:
            heartbeat_at = self.heartbeat_at

        id = self.id

        reason = self.reason

        request = self.request.to_dict()

        requested_by = self.requested_by

        result: dict[str, Any] | None
        if isinstance(self.result, ReplayResultType0):
            result = self.result.to_dict()
        else:
            result = self.result

        runs = self.runs

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        state: str = self.state

        tenant_id: None | str
        tenant_id = self.tenant_id

        total: int | None
        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "audit_id": audit_id,
                "created_at": created_at,
                "done": done,
                "finished_at": finished_at,
                "heartbeat_at": heartbeat_at,
                "id": id,
                "reason": reason,
                "request": request,
                "requested_by": requested_by,
                "result": result,
                "runs": runs,
                "started_at": started_at,
                "state": state,
                "tenant_id": tenant_id,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replay_request import ReplayRequest  # noqa: PLC0415
        from ..models.replay_result_type_0 import ReplayResultType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_audit_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        audit_id = _parse_audit_id(d.pop("audit_id"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        done = d.pop("done")

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

        def _parse_heartbeat_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                heartbeat_at_type_0 = datetime.datetime.fromisoformat(data)

                return heartbeat_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        heartbeat_at = _parse_heartbeat_at(d.pop("heartbeat_at"))

        id = d.pop("id")

        reason = d.pop("reason")

        request = ReplayRequest.from_dict(d.pop("request"))

        requested_by = d.pop("requested_by")

        def _parse_result(data: object) -> None | ReplayResultType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = ReplayResultType0.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReplayResultType0, data)

        result = _parse_result(d.pop("result"))

        runs = d.pop("runs")

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

        state = check_replay_state(d.pop("state"))

        def _parse_tenant_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id"))

        def _parse_total(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        total = _parse_total(d.pop("total"))

        replay = cls(
            audit_id=audit_id,
            created_at=created_at,
            done=done,
            finished_at=finished_at,
            heartbeat_at=heartbeat_at,
            id=id,
            reason=reason,
            request=request,
            requested_by=requested_by,
            result=result,
            runs=runs,
            started_at=started_at,
            state=state,
            tenant_id=tenant_id,
            total=total,
        )

        replay.additional_properties = d
        return replay

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
