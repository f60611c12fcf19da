"""E-mail (SES) and chat (a Slack-compatible incoming webhook) messages about endpoint state
changes, for the operator and for tenants that opted in (decision 0068).

Messages are best effort: a message that cannot be sent is logged and counted, never
retried into a storm; the state change itself is also an operational event, which the
pipeline delivers at least once. Chat URLs are fetched only through the SSRF-guarded client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from hookline.observability import logger
from hookline.records import frozen

SUBJECT_LIMIT = 200


@frozen
class Notice:
    """One state change, worded for people."""

    subject: str
    text: str


@frozen
class Targets:
    """Who hears of one tenant's endpoint: e-mail addresses and chat webhooks."""

    emails: tuple[str, ...] = ()
    chat_urls: tuple[str, ...] = ()


@dataclass
class Sent:
    """What one run of notifications did."""

    emails: int = 0
    chats: int = 0
    failures: list[str] = field(default_factory=list)


class Notifier:
    """Sends notices by SES and chat webhooks; built once per process."""

    def __init__(self, ses: Any | None, http: httpx.Client | None, sender: str | None) -> None:
        """`ses` a boto3 SES client; `http` an SSRF-guarded client; `sender` the verified
        SES identity messages come from (none: no e-mail is sent)."""
        self.ses = ses
        self.http = http
        self.sender = sender

    def send(self, notice: Notice, targets: Targets, sent: Sent) -> None:
        """Send `notice` to every target; failures are logged and recorded in `sent`."""
        if targets.emails and self.ses is not None and self.sender:
            self._email(notice, targets.emails, sent)
        for url in targets.chat_urls if self.http is not None else ():
            self._chat(notice, url, sent)

    def _email(self, notice: Notice, to: Sequence[str], sent: Sent) -> None:
        assert self.ses is not None
        try:
            self.ses.send_email(
                Source=self.sender,
                Destination={"ToAddresses": list(to)},
                Message={
                    "Subject": {"Data": notice.subject[:SUBJECT_LIMIT], "Charset": "UTF-8"},
                    "Body": {"Text": {"Data": notice.text, "Charset": "UTF-8"}},
                },
            )
            sent.emails += 1
        except Exception as err:  # botocore raises many kinds; never stop the monitor
            code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
            sent.failures.append(f"email: {type(err).__name__} {code}".strip())
            logger.warning("notification e-mail failed", extra={"error": type(err).__name__})

    def _chat(self, notice: Notice, url: str, sent: Sent) -> None:
        assert self.http is not None
        try:
            answer = self.http.post(
                url, json={"text": f"*{notice.subject}*\n{notice.text}"}, timeout=5.0
            )
            if answer.status_code >= 300:
                raise RuntimeError(f"HTTP {answer.status_code}")
            sent.chats += 1
        except Exception as err:  # the URL's owner's failure, or the SSRF guard's refusal
            sent.failures.append(f"chat: {type(err).__name__}")
            logger.warning("notification chat message failed", extra={"error": str(err)[:200]})
