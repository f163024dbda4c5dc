-- POST a client RPC that spends a fresh single-use credential per request: email-link sign-in
-- (an email and its oobCode), phone sign-in (a sessionInfo and its code) or a TOTP second factor
-- (a pending credential, the enrolment and its code). The credentials (lines of space-separated
-- fields in BENCH_CODES, minted beforehand: benchtool.py oobcodes, phone-sessions or mfa-lines)
-- are split between the threads (thread t takes lines t, t+T, t+2T, …, in file order) so none is
-- used twice; each request is BENCH_BODY (a format with one %s per field, in line order) to
-- BENCH_PATH, or to /v1/accounts:BENCH_RPC when BENCH_PATH is unset. Running out sends made-up
-- values (a 400, counted as non-2xx) and is reported by done(): the harness then fails.
-- BENCH_THREADS must equal wrk's -t (a thread's init runs before the next thread exists). With one
-- connection per thread (-t = -c), a thread's lines are also sent one after the other, in order:
-- mfa relies on it (a user's TOTP codes must arrive oldest first).
local nthreads = tonumber(os.getenv("BENCH_THREADS"))
local path = os.getenv("BENCH_PATH") or ("/v1/accounts:" .. os.getenv("BENCH_RPC") .. "?key=bench-key")
local body = os.getenv("BENCH_BODY")
local unpack = table.unpack or unpack  -- wrk's LuaJIT has only the global
-- What an exhausted thread sends: as many made-up fields as the body has %s.
local made_up = {"exhausted@bench.example"}
for _ = 2, select(2, body:gsub("%%s", "")) do made_up[#made_up + 1] = "exhausted" end
local threads = {}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end
init = function(args)
  lines, position, exhausted = {}, 1, 0
  local i = 0
  for line in io.lines(os.getenv("BENCH_CODES")) do
    if i % nthreads == index - 1 then
      local fields = {}
      for field in line:gmatch("%S+") do fields[#fields + 1] = field end
      lines[#lines + 1] = fields
    end
    i = i + 1
  end
end
request = function()
  local fields = lines[position]
  if not fields then
    exhausted = exhausted + 1
    fields = made_up
  end
  position = position + 1
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, string.format(body, unpack(fields)))
end
done = function(summary, latency, requests)
  local out = 0
  for _, thread in ipairs(threads) do out = out + (thread:get("exhausted") or 0) end
  io.write(string.format("codes exhausted: %d\n", out))
end
