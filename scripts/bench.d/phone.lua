-- POST accounts:signInWithPhoneNumber with a fresh single-use session per request. The sessions
-- (lines "sessionInfo code" in BENCH_SESSIONS, minted beforehand through sendVerificationCode for
-- the ten test numbers by benchtool.py phone-sessions) are split between the threads (thread t
-- takes lines t, t+T, t+2T, …) so no session is used twice. Running out sends an unknown session
-- (a 400, counted as non-2xx) and is reported by done(): the harness then fails.
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
  sessions, codes, position, exhausted = {}, {}, 1, 0
  local i = 0
  for line in io.lines(os.getenv("BENCH_SESSIONS")) do
    if i % nthreads == index - 1 then
      local session, code = line:match("^(%S+) (%S+)$")
      sessions[#sessions + 1] = session
      codes[#codes + 1] = code
    end
    i = i + 1
  end
end
request = function()
  local session, code = sessions[position], codes[position]
  if not session then
    exhausted = exhausted + 1
    session, code = "exhausted", "000000"
  end
  position = position + 1
  return wrk.format("POST", "/v1/accounts:signInWithPhoneNumber?key=bench-key", {["Content-Type"] = "application/json"},
    string.format('{"sessionInfo":"%s","code":"%s"}', session, code))
end
done = function(summary, latency, requests)
  local out = 0
  for _, thread in ipairs(threads) do out = out + (thread:get("exhausted") or 0) end
  io.write(string.format("sessions exhausted: %d\n", out))
end
