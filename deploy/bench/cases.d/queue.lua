-- GET /api/v1/cases?... : the queue's first page, filtered pages, a search and a deep cursor page.
local paths = {}
local index = 0
local cookie = os.getenv("BENCH_COOKIE")
function init(args)
  for line in io.lines(os.getenv("BENCH_QUEUE")) do paths[#paths + 1] = line end
  index = math.random(#paths)
end
function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index], { ["Cookie"] = cookie })
end
