-- Admin POST accounts:lookup by one email, user<N>@bench.example with N random in [0, BENCH_LOOKUP_USERS).
-- With BENCH_RATE set (lookup-half), requests are paced to that many per second in total over the
-- BENCH_THREADS threads (= wrk -t), by pace.lua.
local users = tonumber(os.getenv("BENCH_LOOKUP_USERS"))
local rate = tonumber(os.getenv("BENCH_RATE") or "")
local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer bench-admin"}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end
init = function(args)
  math.randomseed(index * 7919 + os.time())
end
request = function()
  local body = string.format('{"email":["user%d@bench.example"]}', math.random(0, users - 1))
  return wrk.format("POST", "/v1/projects/demo-bench/accounts:lookup", headers, body)
end
if rate then
  package.path = "scripts/bench.d/?.lua;" .. package.path
  delay = require("pace")(rate, tonumber(os.getenv("BENCH_THREADS")))
end
