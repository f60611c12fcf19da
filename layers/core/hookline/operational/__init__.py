"""Operational events and notifications: what Hookline tells tenants and operators about
their endpoints (decision 0068). `monitor` derives endpoint state changes and dead deliveries
from what the pipeline already writes and publishes them as ordinary events; `notify` sends
the e-mail and chat messages; `catalogue` documents the payloads; `health` answers "how is
this endpoint doing" for the API, the console and the portal."""
