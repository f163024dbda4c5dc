-- POST accounts:verifyIdToken with checkRevoked for one ID token (the cache stays warm).
local token = io.open(os.getenv("BENCH_DIR") .. "/idtoken.txt"):read("*l")
wrk.method = "POST"
wrk.path = "/v1/projects/demo-bench/accounts:verifyIdToken"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-admin"
wrk.body = '{"checkRevoked":true,"idToken":"' .. token .. '"}'
