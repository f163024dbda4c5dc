-- POST signInWithPassword for one of the seeded users, chosen at random per request. Answers are
-- counted by status (statuses.lua; the flood workload reads the honest 503s).
dofile("scripts/bench.d/statuses.lua")
local users = tonumber(os.getenv("BENCH_USERS") or "100")
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  statuses_setup(thread)
end
init = function(args)
  math.randomseed(index * 7919 + os.time())  -- each thread its own sequence
  statuses_init()
end
request = function()
  local body = string.format('{"email":"bench%d@example.com","password":"bench-password"}', math.random(0, users - 1))
  return wrk.format("POST", "/v1/accounts:signInWithPassword?key=bench-key", {["Content-Type"] = "application/json"}, body)
end
