-- wrk script for bench/load.py: replays pre-signed requests, one file per wrk thread.
--
--   wrk -t2 -c16 -d30s -s bench/wrk/signed.lua http://127.0.0.1:PORT -- DIR
--
-- DIR/requests-<n>.bin (n = 1..threads) holds complete HTTP/1.1 requests, each preceded by
-- a line with its length in bytes. Each thread sends its own file in order; past its end
-- it starts over (each repeated request is counted in `wrapped`, and the receiver answers them as
-- duplicates). Every answer's status is counted; for a 200 the event id and the duplicate
-- flag of the receiver's `{"id": ..., "duplicate": ...}` body are kept. At the end the
-- accepted event ids go to DIR/accepted.txt (one per line: id, then 1 if duplicate) and a
-- one-line JSON summary with wrk's own counters and latency percentiles goes to stdout.

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("id", counter)
   table.insert(threads, thread)
end

function init(args)
   dir = args[1]
   local f = assert(io.open(dir .. "/requests-" .. id .. ".bin", "rb"))
   local data = f:read("*a")
   f:close()
   requests = {}
   local at = 1
   while at <= #data do
      local eol = string.find(data, "\n", at, true)
      local size = tonumber(string.sub(data, at, eol - 1))
      table.insert(requests, string.sub(data, eol + 1, eol + size))
      at = eol + size + 1
   end
   data = nil
   nxt = 0
   sent = 0
   wrapped = 0
   statuses = {}
   ids = {}
   dups = {}
end

function request()
   nxt = nxt + 1
   if nxt > #requests then
      nxt = 1
   end
   sent = sent + 1
   if sent > #requests then
      wrapped = wrapped + 1
   end
   return requests[nxt]
end

function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
   if status == 200 then
      local event_id = string.match(body, '"id"%s*:%s*"([^"]+)"')
      if event_id then
         table.insert(ids, event_id)
         table.insert(dups, string.find(body, '"duplicate"%s*:%s*true') and 1 or 0)
      end
   end
end

function done(summary, latency, requests)
   local dir = threads[1]:get("dir")
   local out = assert(io.open(dir .. "/accepted.txt", "w"))
   local status_parts = {}
   local by_status = {}
   local wraps = 0
   for _, thread in ipairs(threads) do
      local ids, dups = thread:get("ids"), thread:get("dups")
      for i = 1, #ids do
         out:write(ids[i], " ", dups[i], "\n")
      end
      for status, count in pairs(thread:get("statuses")) do
         by_status[status] = (by_status[status] or 0) + count
      end
      wraps = wraps + thread:get("wrapped")
   end
   out:close()
   for status, count in pairs(by_status) do
      table.insert(status_parts, string.format('"%d": %d', status, count))
   end
   local e = summary.errors
   io.write(string.format(
      '{"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, ' ..
      '"write": %d, "status_errors": %d, "timeout": %d, "wrapped": %d, ' ..
      '"p50_us": %d, "p90_us": %d, "p99_us": %d, "p999_us": %d, "max_us": %d, ' ..
      '"statuses": {%s}}\n',
      summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
      e.status, e.timeout, wraps,
      latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency:percentile(99.9), latency.max, table.concat(status_parts, ", ")))
end
