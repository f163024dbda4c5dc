-- POST signInWithPassword for one of the seeded users, chosen at random per request. done()
-- prints how the server answered, by status (the flood workload reads the honest 503s).
local users = tonumber(os.getenv("BENCH_USERS") or "100")
local threads = {}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end
init = function(args)
  math.randomseed(index * 7919 + os.time())  -- each thread its own sequence
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
request = function()
  local body = string.format('{"email":"bench%d@example.com","password":"bench-password"}', math.random(0, users - 1))
  return wrk.format("POST", "/v1/accounts:signInWithPassword?key=bench-key", {["Content-Type"] = "application/json"}, body)
end
