-- POST /api/v1/cases/{n}/transitions escalate (If-Match "1"), each request on a case still new:
-- thread t of T takes cases t+1, t+1+T, ... of the list.
local numbers = {}
local index = 0
local step = 1
local cookie = os.getenv("BENCH_COOKIE")
local csrf = os.getenv("BENCH_CSRF")
local threads = {}
local body = '{"action":"escalate"}'
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads - 1)
end
function init(args)
  for line in io.lines(os.getenv("BENCH_NUMBERS")) do numbers[#numbers + 1] = line end
  index = tid
  step = tonumber(os.getenv("BENCH_THREADS"))
end
function request()
  index = index + step
  if index > #numbers then index = index - #numbers end
  return wrk.format("POST", "/api/v1/cases/" .. numbers[index] .. "/transitions",
    { ["Cookie"] = cookie, ["X-CSRF-Token"] = csrf, ["If-Match"] = '"1"', ["Content-Type"] = "application/json" }, body)
end
