-- GET /api/v1/cases/{n} as a signed-in agent, cycling through the seeded case numbers.
local numbers = {}
local index = 0
local cookie = os.getenv("BENCH_COOKIE")
function init(args)
  for line in io.lines(os.getenv("BENCH_NUMBERS")) do numbers[#numbers + 1] = line end
  index = math.random(#numbers)
end
function request()
  index = index % #numbers + 1
  return wrk.format("GET", "/api/v1/cases/" .. numbers[index], { ["Cookie"] = cookie })
end
