-- A probe (bench/call_overhead.py): the claim reads each delivery's event from the day's
-- partition of events, named as the delivery's is, instead of through the parent with
-- bounds (a test event's delivery a moment after midnight would not find its event: not a
-- design).

-- replace:
CROSS JOIN LATERAL (SELECT x.type, x.payload, x.content_type, x.source_id FROM events x
                    WHERE x.id = c.event_id AND x.id BETWEEN event_lo AND event_hi
                    OFFSET 0) e
-- with:
CROSS JOIN LATERAL (SELECT x.type, x.payload, x.content_type, x.source_id FROM %5$I x
                    WHERE x.id = c.event_id
                    OFFSET 0) e
-- end

-- replace:
        format(claim_query, target, 'NULL::double precision', '', ''));
-- with:
        format(claim_query, target, 'NULL::double precision', '', '', replace(target, 'deliveries_', 'events_')));
-- end

-- replace:
        SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
)$rate$),
-- with:
        SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
)$rate$, replace(target, 'deliveries_', 'events_')),
-- end
