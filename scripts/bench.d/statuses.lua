-- Counting answers by status, shared by the wrk scripts that report them (signin.lua, flood.lua):
-- `dofile` this, call statuses_setup(thread) from setup and statuses_init() from init; it defines
-- response() and done(), which prints "status <code>: <count>" lines the report reads.
local threads = {}

function statuses_setup(thread)
  table.insert(threads, thread)
end

function statuses_init()
  statuses = {}
end

response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses") or {}) do totals[status] = (totals[status] or 0) + count end
  end
  for status, count in pairs(totals) do io.write(string.format("status %d: %d\n", status, count)) end
end
