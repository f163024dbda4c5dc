-- POST accounts:signInWithEmailLink with a fresh single-use code per request. The codes (lines
-- "email code" in BENCH_CODES, minted beforehand through sendOobCode by benchtool.py oobcodes) are
-- split between the threads (thread t takes lines t, t+T, t+2T, …) so no code is used twice.
-- Running out sends an invalid code (a 400, counted as non-2xx) and is reported by done(): the
-- harness then fails.
-- BENCH_THREADS must equal wrk's -t (a thread's init runs before the next thread exists).
local nthreads = tonumber(os.getenv("BENCH_THREADS"))
local threads = {}
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end
init = function(args)
  emails, codes, position, exhausted = {}, {}, 1, 0
  local i = 0
  for line in io.lines(os.getenv("BENCH_CODES")) do
    if i % nthreads == index - 1 then
      local email, code = line:match("^(%S+) (%S+)$")
      emails[#emails + 1] = email
      codes[#codes + 1] = code
    end
    i = i + 1
  end
end
request = function()
  local email, code = emails[position], codes[position]
  if not code then
    exhausted = exhausted + 1
    email, code = "exhausted@bench.example", "exhausted"
  end
  position = position + 1
  return wrk.format("POST", "/v1/accounts:signInWithEmailLink?key=bench-key", {["Content-Type"] = "application/json"},
    string.format('{"email":"%s","oobCode":"%s"}', email, code))
end
done = function(summary, latency, requests)
  local out = 0
  for _, thread in ipairs(threads) do out = out + (thread:get("exhausted") or 0) end
  io.write(string.format("codes exhausted: %d\n", out))
end
