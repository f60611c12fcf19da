-- A probe (bench/call_overhead.py): the claim without its main statement (the prologue only:
-- bounds, commit mode, the endpoint locks' statement, the crash marker's check).

-- replace:
    IF rated THEN
        RETURN QUERY %4$s;
    ELSE
        RETURN QUERY %5$s;
    END IF;
-- with:
    RETURN;
-- end
