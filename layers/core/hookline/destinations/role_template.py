"""The CloudFormation template a customer deploys to let Hookline deliver into one target:
a role trusting Hookline's deliver role only with the tenant's ExternalId, allowed only the
send action on that target (decision 0046)."""

from __future__ import annotations

from typing import Any

from hookline.destinations import BUCKET_NAME, ROLE_NAME_PREFIX, parse_target
from hookline.errors import BadRequest

# The one action each kind's sender needs (SQS also resolves the queue's URL).
SEND_ACTIONS = {
    "sqs": ["sqs:SendMessage", "sqs:GetQueueUrl"],
    "sns": ["sns:Publish"],
    "eventbridge": ["events:PutEvents"],
    "kinesis": ["kinesis:PutRecord"],
    "s3": ["s3:PutObject"],
    "lambda": ["lambda:InvokeFunction"],
}


def role_template(
    *,
    kind: str,
    target: str,
    external_id: str,
    hookline_role_arn: str,
    name: str,
    prefix: str = "",
    offload_bucket: str = "",
) -> dict[str, Any]:
    """The template (a dict, to print as JSON). `name` ends the role's name, which starts
    with `hookline-delivery-` (Hookline may assume no other); `prefix` narrows S3 writes (to
    the s3 target, or to the `offload_bucket` of an sqs or sns target)."""
    parsed = parse_target(kind, target)
    resource = f"{parsed.arn}/{prefix}*" if kind == "s3" else parsed.arn
    statements: list[dict[str, Any]] = [
        {"Effect": "Allow", "Action": SEND_ACTIONS[kind], "Resource": resource}
    ]
    if offload_bucket:
        if kind not in ("sqs", "sns") or not BUCKET_NAME.match(offload_bucket):
            raise BadRequest("offload_bucket: an S3 bucket name, for an sqs or sns target")
        statements.append(
            {
                "Effect": "Allow",
                "Action": ["s3:PutObject"],
                "Resource": f"arn:aws:s3:::{offload_bucket}/{prefix}*",
            }
        )
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": f"Lets Hookline deliver webhooks into {parsed.arn}",
        "Resources": {
            "HooklineDeliveryRole": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "RoleName": f"{ROLE_NAME_PREFIX}{name}"[:64],
                    "AssumeRolePolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"AWS": hookline_role_arn},
                                "Action": "sts:AssumeRole",
                                "Condition": {"StringEquals": {"sts:ExternalId": external_id}},
                            }
                        ],
                    },
                    "Policies": [
                        {
                            "PolicyName": "send-only",
                            "PolicyDocument": {
                                "Version": "2012-10-17",
                                "Statement": statements,
                            },
                        }
                    ],
                },
            }
        },
        "Outputs": {
            "RoleArn": {
                "Description": "Give this as --role-arn to hookline endpoints add",
                "Value": {"Fn::GetAtt": ["HooklineDeliveryRole", "Arn"]},
            }
        },
    }
