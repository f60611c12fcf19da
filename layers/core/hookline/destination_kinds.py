"""The kinds of an endpoint's destination (docs/decisions/0046): an https URL, or a target in
the customer's own AWS account. Apart from `hookline.destinations` (its validators and ARN
patterns), so deliver names them without loading those on its cold start (decision 0048)."""

from __future__ import annotations

HTTPS = "https"
KINDS = (HTTPS, "sqs", "sns", "eventbridge", "kinesis", "s3", "lambda")
