-- POST a client RPC that spends a fresh single-use credential per request: email-link sign-in
-- (an email and its oobCode) or phone sign-in (a sessionInfo and its code). The credentials (lines
-- "a b" in BENCH_CODES, minted beforehand through the service: benchtool.py oobcodes or
-- phone-sessions) are split between the threads (thread t takes lines t, t+T, t+2T, …) so none is
-- used twice; each request is BENCH_BODY (a format with two %s, for a and b) to
-- /v1/accounts:BENCH_RPC. Running out sends made-up values (a 400, counted as non-2xx) and is
-- reported by done(): the harness then fails.
-- BENCH_THREADS must equal wrk's -t (a thread's init runs before the next thread exists).
local nthreads = tonumber(os.getenv("BENCH_THREADS"))
local path = "/v1/accounts:" .. os.getenv("BENCH_RPC") .. "?key=bench-key"
local body = os.getenv("BENCH_BODY")
local threads = {}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end
init = function(args)
  firsts, seconds, position, exhausted = {}, {}, 1, 0
  local i = 0
  for line in io.lines(os.getenv("BENCH_CODES")) do
    if i % nthreads == index - 1 then
      local a, b = line:match("^(%S+) (%S+)$")
      firsts[#firsts + 1] = a
      seconds[#seconds + 1] = b
    end
    i = i + 1
  end
end
request = function()
  local a, b = firsts[position], seconds[position]
  if not a then
    exhausted = exhausted + 1
    a, b = "exhausted@bench.example", "exhausted"
  end
  position = position + 1
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, string.format(body, a, b))
end
done = function(summary, latency, requests)
  local out = 0
  for _, thread in ipairs(threads) do out = out + (thread:get("exhausted") or 0) end
  io.write(string.format("codes exhausted: %d\n", out))
end
