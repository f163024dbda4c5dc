-- POST signInWithPassword with a wrong password for an address nobody has, each request from its
-- own client address (X-Forwarded-For through a trusted proxy, 10.0.0.0/8 at random): a
-- distributed credential-stuffing flood that no per-address or per-account limit slows, so every
-- request reaches the password hasher. Answers are counted by status (statuses.lua).
dofile("scripts/bench.d/statuses.lua")
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  statuses_setup(thread)
end
init = function(args)
  math.randomseed(index * 104729 + os.time())
  statuses_init()
end
request = function()
  local body = string.format('{"email":"stuffed%d@flood.example","password":"guess-%d"}', math.random(0, 999999999), math.random(0, 999999))
  local from = string.format("10.%d.%d.%d", math.random(0, 255), math.random(0, 255), math.random(1, 254))
  return wrk.format("POST", "/v1/accounts:signInWithPassword?key=bench-key",
    {["Content-Type"] = "application/json", ["X-Forwarded-For"] = from}, body)
end
