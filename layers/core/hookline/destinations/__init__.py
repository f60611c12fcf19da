"""Destination kinds of an endpoint (docs/decisions/0046): an https URL, or a target in the
customer's own AWS account — an SQS queue (standard or FIFO), an SNS topic, an EventBridge
bus, a Kinesis stream, an S3 bucket or a Lambda function (decision 0057) — reached by
assuming the role they grant (`role_arn`) with their tenant's ExternalId.

This module checks what is saved (`check_destination`) and that no destination names
Hookline's own resources (`OwnResources`, decision 0061: checked at save and again at send);
`senders` sends one message of a kind; `credentials` caches the assumed roles' credentials."""

from __future__ import annotations

import re
from typing import Any

from hookline.destination_kinds import HTTPS as HTTPS  # re-exported
from hookline.destination_kinds import KINDS as KINDS  # re-exported
from hookline.errors import BadRequest
from hookline.records import frozen
from hookline.transformers import check_path

# The deliver functions may assume only roles so named (infra/components/delivery.py).
ROLE_NAME_PREFIX = "hookline-delivery-"

_PARTITION = r"arn:aws[a-zA-Z-]*"
_REGION_ACCOUNT = r"(?P<region>[a-z]{2}(?:-[a-z]+)+-\d):(?P<account>\d{12})"
# No path: the deliverers' permission names role/hookline-delivery-* at the path's root.
ROLE_ARN = re.compile(
    rf"^{_PARTITION}:iam::(?P<account>\d{{12}}):role/(?P<name>[\w+=,.@-]{{1,64}})$"
)
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
TARGET_ARNS = {
    "sqs": re.compile(rf"^{_PARTITION}:sqs:{_REGION_ACCOUNT}:(?P<name>[\w-]{{1,75}}(?:\.fifo)?)$"),
    "sns": re.compile(rf"^{_PARTITION}:sns:{_REGION_ACCOUNT}:(?P<name>[\w-]{{1,251}}(?:\.fifo)?)$"),
    "eventbridge": re.compile(
        rf"^{_PARTITION}:events:{_REGION_ACCOUNT}:event-bus/(?P<name>[\w.\-/]{{1,256}})$"
    ),
    "kinesis": re.compile(
        rf"^{_PARTITION}:kinesis:{_REGION_ACCOUNT}:stream/(?P<name>[\w.-]{{1,128}})$"
    ),
    "s3": re.compile(rf"^{_PARTITION}:s3:::(?P<name>[a-z0-9][a-z0-9.-]{{1,61}}[a-z0-9])$"),
    # A function, or one version or alias of it (`:qualifier`): the role allows that one.
    "lambda": re.compile(
        rf"^{_PARTITION}:lambda:{_REGION_ACCOUNT}:function:(?P<name>[\w-]{{1,64}})"
        r"(?::(?P<qualifier>[\w$-]{1,128}))?$"
    ),
}
# The options each kind takes in `destination`, with their defaults.
OPTIONS: dict[str, dict[str, str]] = {
    # FIFO only: message_group_path. offload_bucket: over the size limit, the body goes to
    # this bucket of the customer's and the message carries a pointer (decision 0057).
    "sqs": {"message_group_path": "$.tenant_id", "offload_bucket": "", "offload_prefix": ""},
    "sns": {"message_group_path": "$.tenant_id", "offload_bucket": "", "offload_prefix": ""},
    "eventbridge": {"source": "hookline"},
    "kinesis": {"partition_key_path": ""},  # empty: the event id
    "s3": {"prefix": ""},
    "lambda": {},
}
# The largest message each target takes (bytes), as AWS documents them.
SIZE_LIMITS = {
    "sqs": 262_144, "sns": 262_144, "eventbridge": 262_144, "kinesis": 1_048_576,
    "lambda": 6_291_456,  # a synchronous invocation's request payload
}  # fmt: skip


@frozen
class Target:
    """A parsed target ARN."""

    kind: str
    arn: str
    region: str
    account: str
    name: str

    @property
    def fifo(self) -> bool:
        """A FIFO queue or topic."""
        return self.name.endswith(".fifo")


def parse_target(kind: str, arn: str) -> Target:
    """The target of an endpoint of `kind`; raises BadRequest (field `target`) naming the
    kind the ARN is of when it is another's."""
    match = TARGET_ARNS[kind].match(arn)
    if match is None:
        other = next((k for k, rx in TARGET_ARNS.items() if rx.match(arn)), None)
        if other is not None:
            raise BadRequest(f"target: {arn!r} is an {other} ARN, not an {kind} one")
        raise BadRequest(f"target: {arn!r} is not an {kind} ARN")
    groups = match.groupdict()
    return Target(
        kind, arn, groups.get("region") or "", groups.get("account") or "", groups["name"]
    )


@frozen
class OwnResources:
    """What no destination may name (decision 0061): the deployment's own account (targets
    and roles in it), its archive bucket (bucket names are global), and, where the account
    is not known (the dev stack, whose emulator is the customers' account too), every target
    whose name starts with the deployment's resource prefix (its queues, functions, bucket)."""

    account: str | None = None
    archive_bucket: str | None = None
    name_prefix: str | None = None

    def refusal(
        self, kind: str, target: str | None, role_arn: str | None, options: dict[str, Any]
    ) -> str | None:
        """Why this destination names Hookline's own resources (field first), else None."""
        if kind == HTTPS or not target:
            return None
        parsed = parse_target(kind, target)
        role = ROLE_ARN.match(role_arn or "")
        if self.account and parsed.account == self.account:
            return f"target: {target!r} is in Hookline's own AWS account"
        if self.account and role is not None and role["account"] == self.account:
            return f"role_arn: {role_arn!r} is a role in Hookline's own AWS account"
        buckets = [("target", parsed.name)] if kind == "s3" else []
        if options.get("offload_bucket"):
            buckets.append(("destination.offload_bucket", str(options["offload_bucket"])))
        for field, bucket in buckets:
            if self.archive_bucket and bucket == self.archive_bucket:
                return f"{field}: {bucket!r} is Hookline's own archive bucket"
        if self.account is None and self.name_prefix:
            for field, name in [("target", parsed.name), *buckets]:
                if name == self.name_prefix or name.startswith(f"{self.name_prefix}-"):
                    return (
                        f"{field}: {name!r} is named like Hookline's own resources "
                        f"({self.name_prefix}-…)"
                    )
        return None

    def check(
        self, kind: str, target: str | None, role_arn: str | None, options: dict[str, Any]
    ) -> None:
        """Raise BadRequest (naming the field) when the destination is Hookline's own."""
        problem = self.refusal(kind, target, role_arn, options)
        if problem is not None:
            raise BadRequest(problem)


def check_destination(
    kind: str,
    target: str | None,
    role_arn: str | None,
    options: dict[str, Any] | None,
    own: OwnResources | None = None,
) -> dict[str, Any]:
    """Validate what an endpoint of `kind` is saved with; returns its options with defaults.
    Raises BadRequest naming the field (`kind`, `target`, `role_arn`, `destination.x`),
    also when it names one of `own` resources."""
    if kind not in KINDS:
        raise BadRequest(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    if kind == HTTPS:
        if role_arn is not None or options:
            raise BadRequest("role_arn and destination are for AWS kinds, not https")
        return {}
    if not target:
        raise BadRequest(f"target: an {kind} endpoint needs the target's ARN")
    parse_target(kind, target)
    if not role_arn:
        raise BadRequest(f"role_arn: an {kind} endpoint needs the role Hookline assumes")
    role = ROLE_ARN.match(role_arn)
    if role is None:
        raise BadRequest(f"role_arn: {role_arn!r} is not an IAM role ARN")
    if not role["name"].startswith(ROLE_NAME_PREFIX):
        raise BadRequest(
            f"role_arn: the role's name must start with {ROLE_NAME_PREFIX!r}: Hookline may "
            "assume no other (see `hookline endpoints role-template`)"
        )
    given = dict(options or {})
    unknown = set(given) - set(OPTIONS[kind])
    if unknown:
        raise BadRequest(
            f"destination.{sorted(unknown)[0]}: {kind} takes only {', '.join(OPTIONS[kind])}"
        )
    for name, value in given.items():
        if not isinstance(value, str) or len(value) > 1024:
            raise BadRequest(f"destination.{name}: a string of at most 1024 characters")
        if name.endswith("_path") and value:
            try:
                check_path(value)
            except ValueError as err:
                raise BadRequest(f"destination.{name}: {err}") from err
        if name == "offload_bucket" and value and not BUCKET_NAME.match(value):
            raise BadRequest(f"destination.offload_bucket: {value!r} is not an S3 bucket name")
    if own is not None:
        own.check(kind, target, role_arn, given)
    return {**OPTIONS[kind], **given}
