"""cdk-nag acknowledgments, each with its reason next to the resource it excuses.

cdk-nag 3 runs as a CDK validation plugin and reads CDK's native acknowledgments
(`Validations.of(construct).acknowledge(...)`), which cover the construct and its children.
Findings with a qualifier (IAM4/IAM5) are acknowledged one by one — `RULE[finding]` — so a new,
unreviewed wildcard still fails synthesis.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def suppress(
    construct: IConstruct,
    rule_id: str,
    reason: str,
    findings: Sequence[str] | None = None,
) -> None:
    """Acknowledge cdk-nag rule `rule_id` on `construct` (and its children) for `reason`.

    `findings` narrows the acknowledgment to those qualified findings, e.g.
    `["Resource::*"]` acknowledges `AwsSolutions-IAM5[Resource::*]` only.
    """
    ids = [f"{rule_id}[{finding}]" for finding in findings] if findings else [rule_id]
    Validations.of(construct).acknowledge(*(Acknowledgment(id=i, reason=reason) for i in ids))
