-- post.lua: wrk script.  POSTs the file named by BENCH_BODY with the key
-- in BENCH_KEY (if set) and reports non-200 answers by status.
local f = assert(io.open(os.getenv("BENCH_BODY"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
local key = os.getenv("BENCH_KEY")
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
