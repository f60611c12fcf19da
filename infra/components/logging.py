"""Log retention from the config, as the nearest CloudWatch Logs retention period."""

from __future__ import annotations

from aws_cdk import aws_logs as logs

_PERIODS: tuple[tuple[int, logs.RetentionDays], ...] = (
    (1, logs.RetentionDays.ONE_DAY),
    (3, logs.RetentionDays.THREE_DAYS),
    (5, logs.RetentionDays.FIVE_DAYS),
    (7, logs.RetentionDays.ONE_WEEK),
    (14, logs.RetentionDays.TWO_WEEKS),
    (30, logs.RetentionDays.ONE_MONTH),
    (60, logs.RetentionDays.TWO_MONTHS),
    (90, logs.RetentionDays.THREE_MONTHS),
    (180, logs.RetentionDays.SIX_MONTHS),
    (365, logs.RetentionDays.ONE_YEAR),
    (731, logs.RetentionDays.TWO_YEARS),
    (1827, logs.RetentionDays.FIVE_YEARS),
    (3653, logs.RetentionDays.TEN_YEARS),
)


def retention(days: int) -> logs.RetentionDays:
    """The smallest CloudWatch retention period that keeps logs at least `days` days."""
    for period, value in _PERIODS:
        if period >= days:
            return value
    return _PERIODS[-1][1]
