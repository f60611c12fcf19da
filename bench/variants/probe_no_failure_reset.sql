-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the record's look at whether an endpoint
-- of the batch is on a failure streak (and so the update that ends one): a failing endpoint
-- would then stay failing.

-- replace:
           EXISTS (SELECT 1 FROM endpoints p
                   WHERE p.id = ANY (p_endpoint_ids::text[]) AND p.failing_since IS NOT NULL),
           (SELECT hookline_first_attempts_from(max(a))
-- with:
           false,
           (SELECT hookline_first_attempts_from(max(a))
-- end
