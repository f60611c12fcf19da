"""Alarm chat: posts each CloudWatch alarm notification from the alarm topic to a chat
incoming webhook (Slack, Mattermost, Teams' and Chime's webhook connectors).

Standard library only and outside the VPC: it must work when the database, the layer or the
NAT gateways are what is broken. A failed post raises, so Lambda retries the SNS event.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

TIMEOUT_SECONDS = 10
STATE_MARK = {"ALARM": "[ALARM]", "OK": "[OK]", "INSUFFICIENT_DATA": "[NO DATA]"}


def chat_text(message: str) -> str:
    """One line per alarm transition: state, name, what it means, why it changed."""
    try:
        alarm: dict[str, Any] = json.loads(message)
    except ValueError:  # not an alarm (a test publish): pass it on as it is
        return message[:3000]
    state = str(alarm.get("NewStateValue", ""))
    lines = [
        f"{STATE_MARK.get(state, state)} {alarm.get('AlarmName', 'alarm')} "
        f"({alarm.get('Region', '')})",
        str(alarm.get("AlarmDescription") or ""),
        str(alarm.get("NewStateReason") or ""),
    ]
    return "\n".join(line for line in lines if line)[:3000]


def post(url: str, text: str) -> None:
    """POST `{"text": ...}` (Slack, Mattermost, Teams) with Chime's `Content` beside it."""
    if not url.startswith(("https://", "http://")):
        raise ValueError("the alarm chat webhook must be an http(s) URL")
    body = json.dumps({"text": text, "Content": text}).encode()
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        url, data=body, method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310
        answer.read()


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, int]:
    """Post every SNS record of the event; raise if a post fails (Lambda retries)."""
    url = os.environ["HOOKLINE_ALARM_WEBHOOK_URL"]
    records = event.get("Records", [])
    for record in records:
        post(url, chat_text(str(record["Sns"]["Message"])))
    return {"posted": len(records)}
