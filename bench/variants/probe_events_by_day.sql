-- A probe, not a design (bench/deliver_calls.py and bench/call_overhead.py --variant): the
-- claim reads each delivery's event from the day's partition of events, named as the
-- delivery's is, instead of through the parent with bounds. A test event's delivery made
-- before decision 0087 carries a moment after its event, maybe the next day: it would not
-- find its event.

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
