-- The local fan-out nudge (docs/decisions/0022-local-nudge-over-listen-notify.md): the dev
-- stack's fan-out process LISTENs on this channel. Never sent on AWS.

-- notify_fanout --
SELECT pg_notify(%(channel)s, '')
