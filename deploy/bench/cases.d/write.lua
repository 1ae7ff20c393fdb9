-- The writes of issues 21 and 24 (BENCH_WRITE): a case opened with a device (the signal look-ups by serial and IMEI),
-- a device or a document filed on a case (the look-ups by serial, IMEI and digest), a note; every request on another
-- case of BENCH_NUMBERS, every document and opened case unique (no look-up ever hits: the cost is the look-up's).
local numbers = {}
local index = 0
local step = 1
local count = 0
local cookie = os.getenv("BENCH_COOKIE")
local csrf = os.getenv("BENCH_CSRF")
local kind = os.getenv("BENCH_WRITE")
local threads = {}
-- The smallest PNG the service's sniffer accepts (its signature and IHDR), then bytes that make each one unique.
local png = "\137PNG\r\n\26\n\0\0\0\13IHDR\0\0\0\1\0\0\0\1\8\6\0\0\0\31\21\196\137"
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
  count = count + 1
  local unique = string.format("%d%09d", tid, count)
  local headers = { ["Cookie"] = cookie, ["X-CSRF-Token"] = csrf, ["Content-Type"] = "application/json" }
  local case = "/api/v1/cases/" .. numbers[index]
  if kind == "note" then
    return wrk.format("POST", case .. "/notes", headers, '{"body":"Called the customer back.","visibility":"internal"}')
  elseif kind == "device" then
    return wrk.format("POST", case .. "/evidence", headers, '{"type":"device","serial":"BX' .. unique .. '"}')
  elseif kind == "document" then
    headers["Content-Type"] = "image/png"
    return wrk.format("POST", case .. "/evidence?type=invoice", headers, png .. unique)
  else
    return wrk.format("POST", "/api/v1/cases", headers,
      '{"kind":"activation_lock","account_email":"open' .. unique .. '@example.com","customer":{"name":"Bench Customer",' ..
      '"contact_email":"home' .. unique .. '@example.net"},"devices":[{"serial":"OX' .. unique .. '","model":"Phone"}],' ..
      '"facts":{"rescue_email_added":true},"summary":"bench"}')
  end
end
