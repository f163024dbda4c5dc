-- Paces a wrk thread's requests (a workload at a fixed share of its peak): `require("pace")(rate,
-- threads)` returns a delay() for wrk. Each of the `threads` threads keeps a schedule of send
-- times threads/rate apart, and delay() holds each of its connections until its slot (wall clock
-- through LuaJIT's FFI; wrk's delay() takes whole milliseconds, the schedule keeps the fractions).
-- The offered load is then a fixed rate, independent of the latency, as long as the connections
-- keep up.
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

return function(rate, threads)
  local interval = threads * 1000 / rate
  local slot = nil
  return function()
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
