-- POST signInWithIdp with the ID token of one of the users accountd-bench idp-fixture signed
-- (BENCH_TOKENS, one per line), chosen at random per request: a returning user's sign-in, the
-- issuer's keys already cached.
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do tokens[#tokens + 1] = line end
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end
init = function(args)
  math.randomseed(index * 6151 + os.time())
end
request = function()
  local token = tokens[math.random(1, #tokens)]
  local body = string.format('{"requestUri":"http://localhost","postBody":"providerId=oidc.bench&id_token=%s","returnSecureToken":true}', token)
  return wrk.format("POST", "/v1/accounts:signInWithIdp?key=bench-key", {["Content-Type"] = "application/json"}, body)
end
