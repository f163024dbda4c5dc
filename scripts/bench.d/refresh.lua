-- POST /v1/token; each thread (run with one connection per thread) keeps its own session and follows the rotation.
-- A run never reuses another run's sessions (a rotated-away token would be taken for a stolen one and
-- revoke its session): run r takes the sessions after BENCH_REFRESH_OFFSET = (r - 1) x threads.
-- With BENCH_RATE set (refresh-half), requests are paced to that many per second in total over the
-- BENCH_THREADS threads, by pace.lua.
local tokens = {}
for line in io.lines(os.getenv("BENCH_DIR") .. "/refresh.txt") do tokens[#tokens + 1] = line end
local counter = tonumber(os.getenv("BENCH_REFRESH_OFFSET") or "0")
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end
init = function(args)
  token = tokens[index]
  if not token then error("not enough seeded sessions in refresh.txt for session " .. index) end
end
request = function()
  return wrk.format("POST", "/v1/token?key=bench-key", {["Content-Type"] = "application/x-www-form-urlencoded"},
    "grant_type=refresh_token&refresh_token=" .. token)
end
response = function(status, headers, body)
  local next = body:match('"refresh_token":"([^"]+)"')
  if next then token = next end
end
local rate = tonumber(os.getenv("BENCH_RATE") or "")
if rate then
  package.path = "scripts/bench.d/?.lua;" .. package.path
  delay = require("pace")(rate, tonumber(os.getenv("BENCH_THREADS")))
end
