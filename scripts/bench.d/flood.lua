-- POST signInWithPassword with a wrong password for an address nobody has, each request from its
-- own client address (X-Forwarded-For through a trusted proxy, 10.0.0.0/8 at random): a
-- distributed credential-stuffing flood that no per-address or per-account limit slows, so every
-- request reaches the password hasher. done() prints how the server answered, by status.
local threads = {}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end
init = function(args)
  math.randomseed(index * 104729 + os.time())
  statuses = {}
end
request = function()
  local body = string.format('{"email":"stuffed%d@flood.example","password":"guess-%d"}', math.random(0, 999999999), math.random(0, 999999))
  local from = string.format("10.%d.%d.%d", math.random(0, 255), math.random(0, 255), math.random(1, 254))
  return wrk.format("POST", "/v1/accounts:signInWithPassword?key=bench-key",
    {["Content-Type"] = "application/json", ["X-Forwarded-For"] = from}, body)
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
