-- POST /v1/token; each thread (run with one connection per thread) keeps its own session and follows the rotation.
local tokens = {}
for line in io.lines(os.getenv("BENCH_DIR") .. "/refresh.txt") do tokens[#tokens + 1] = line end
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end
init = function(args)
  token = tokens[index]
end
request = function()
  return wrk.format("POST", "/v1/token?key=bench-key", {["Content-Type"] = "application/x-www-form-urlencoded"},
    "grant_type=refresh_token&refresh_token=" .. token)
end
response = function(status, headers, body)
  local next = body:match('"refresh_token":"([^"]+)"')
  if next then token = next end
end
