-- POST /api/v1/status with a right case number and access code, cycling through cases opened over HTTP.
local bodies = {}
local index = 0
function init(args)
  for line in io.lines(os.getenv("BENCH_CODES")) do
    local number, code = line:match("^(%S+) (%S+)$")
    bodies[#bodies + 1] = '{"case_number":"' .. number .. '","access_code":"' .. code .. '"}'
  end
  index = math.random(#bodies)
end
function request()
  index = index % #bodies + 1
  return wrk.format("POST", "/api/v1/status", { ["Content-Type"] = "application/json" }, bodies[index])
end
