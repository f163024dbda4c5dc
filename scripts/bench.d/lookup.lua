-- Admin POST accounts:lookup by one email, user<N>@bench.example with N random in [0, BENCH_LOOKUP_USERS).
-- With BENCH_RATE set (lookup-half), requests are paced to that many per second in total: each of
-- the BENCH_THREADS threads (= wrk -t) keeps a schedule of send times BENCH_THREADS/BENCH_RATE
-- apart, and delay() holds each of its connections until its slot (wall clock through LuaJIT's
-- FFI; wrk's delay() takes whole milliseconds, the schedule keeps the fractions). The offered load
-- is then a fixed rate, independent of the latency, as long as the connections keep up.
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
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock_id, bench_timespec *tp);
  ]]
  local now_ts = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(1, now_ts)  -- CLOCK_MONOTONIC
    return tonumber(now_ts.tv_sec) * 1000 + tonumber(now_ts.tv_nsec) / 1e6
  end
  local interval = tonumber(os.getenv("BENCH_THREADS")) * 1000 / rate
  local slot = nil
  delay = function()
    local now = now_ms()
    -- Start the schedule now; if it fell more than a second behind (the server could not keep
    -- up), restart it rather than send the backlog in a burst.
    if slot == nil or slot < now - 1000 then slot = now end
    local wait = slot - now
    slot = slot + interval
    if wait <= 0 then return 0 end
    return math.floor(wait + 0.5)
  end
end
