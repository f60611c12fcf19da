from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.health_hour import HealthHour
    from ..models.health_period import HealthPeriod
    from ..models.thresholds import Thresholds


T = TypeVar("T", bound="EndpointHealth")


@_attrs_define
class EndpointHealth:
    """An endpoint's state and its last hour and day.

    Attributes:
        disabled_reason (None | str):
        endpoint_id (str):
        hourly (list[HealthHour]):
        last_day (HealthPeriod): An endpoint's attempts over one period.
        last_hour (HealthPeriod): An endpoint's attempts over one period.
        state (str): healthy, failing or disabled
        state_since (None | str):
        thresholds (Thresholds): When an endpoint counts as failing: N consecutive failed attempts, or an error rate
            over a window (with enough attempts in it).
    """

    disabled_reason: None | str
    endpoint_id: str
    hourly: list[HealthHour]
    last_day: HealthPeriod
    last_hour: HealthPeriod
    state: str
    state_since: None | str
    thresholds: Thresholds
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        disabled_reason: None | str
        disabled_reason = self.disabled_reason

        endpoint_id = self.endpoint_id

        hourly = []
        for hourly_item_data in self.hourly:
            hourly_item = hourly_item_data.to_dict()
            hourly.append(hourly_item)

        last_day = self.last_day.to_dict()

        last_hour = self.last_hour.to_dict()

        state = self.state

        state_since: None | str
        state_since = self.state_since

        thresholds = self.thresholds.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "disabled_reason": disabled_reason,
                "endpoint_id": endpoint_id,
                "hourly": hourly,
                "last_day": last_day,
                "last_hour": last_hour,
                "state": state,
                "state_since": state_since,
                "thresholds": thresholds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.health_hour import HealthHour  # noqa: PLC0415
        from ..models.health_period import HealthPeriod  # noqa: PLC0415
        from ..models.thresholds import Thresholds  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_disabled_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason"))

        endpoint_id = d.pop("endpoint_id")

        hourly = []
        _hourly = d.pop("hourly")
        for hourly_item_data in _hourly:
            hourly_item = HealthHour.from_dict(hourly_item_data)

            hourly.append(hourly_item)

        last_day = HealthPeriod.from_dict(d.pop("last_day"))

        last_hour = HealthPeriod.from_dict(d.pop("last_hour"))

        state = d.pop("state")

        def _parse_state_since(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        state_since = _parse_state_since(d.pop("state_since"))

        thresholds = Thresholds.from_dict(d.pop("thresholds"))

        endpoint_health = cls(
            disabled_reason=disabled_reason,
            endpoint_id=endpoint_id,
            hourly=hourly,
            last_day=last_day,
            last_hour=last_hour,
            state=state,
            state_since=state_since,
            thresholds=thresholds,
        )

        endpoint_health.additional_properties = d
        return endpoint_health

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
