"""The SES sender of the operational monitor's e-mail on the dev stack (decision 0068): named
in HOOKLINE_NOTIFY_FROM (default `LOCAL_SENDER`) and verified on the emulator, as an operator
verifies the identity in SES on AWS, so notifications are sent (and readable in moto) here."""

from __future__ import annotations

from collections.abc import MutableMapping

import boto3
from botocore.exceptions import BotoCoreError, ClientError

LOCAL_SENDER = "hookline@hookline.local"


def ensure_notify_sender(environ: MutableMapping[str, str], endpoint: str) -> str | None:
    """Verify the sender on the emulator at `endpoint` and name it in `environ`. An emulator
    without SES (LocalStack started with a SERVICES list that leaves it out) leaves e-mail off
    (None): the stack still starts, and webhooks and chat still carry operational events."""
    sender = environ.get("HOOKLINE_NOTIFY_FROM") or LOCAL_SENDER
    ses = boto3.client(
        "ses", endpoint_url=endpoint, region_name=environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=environ.get("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key=environ.get("AWS_SECRET_ACCESS_KEY"),
    )  # fmt: skip
    try:
        ses.verify_email_identity(EmailAddress=sender)
    except (ClientError, BotoCoreError):
        environ.pop("HOOKLINE_NOTIFY_FROM", None)
        return None
    environ["HOOKLINE_NOTIFY_FROM"] = sender
    return sender
