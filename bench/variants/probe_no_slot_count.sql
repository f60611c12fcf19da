-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the slot count: every endpoint's cap then
-- goes unenforced.

-- replace:
    CROSS JOIN LATERAL (SELECT count(*) AS taken FROM deliveries_in_flight x
                        WHERE x.endpoint_id = f.endpoint_id AND x.slot
                          AND x.lease_expires_at >= now()) n
-- with:
    CROSS JOIN LATERAL (SELECT 0 AS taken) n
-- end
