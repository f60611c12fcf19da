-- A step of bench/call_overhead.py (the steps apply in turn, each on the ones before): the
-- claim without its main statement. A probe, not a design.

-- replace:
    IF rated THEN
        RETURN QUERY %4$s;
    ELSE
        RETURN QUERY %5$s;
    END IF;
-- with:
    RETURN;
-- end
