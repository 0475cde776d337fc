-- wrk script of the soak benchmark (bench/soak.ts): each thread sends the requests listed in a file
-- (one a line: path, Accept-Encoding, If-None-Match, separated by tabs; empty fields are not sent),
-- in turn from its own starting point, and counts the statuses of the answers. done() prints one
-- line "SOAK {json}" that the benchmark reads.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("index", counter)
  table.insert(threads, thread)
end

function init(args)
  requests = {}
  for line in io.lines(args[1]) do
    local path, encoding, tag = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)$")
    local headers = {}
    if encoding ~= "" then headers["Accept-Encoding"] = encoding end
    if tag ~= "" then headers["If-None-Match"] = tag end
    table.insert(requests, wrk.format("GET", path, headers))
  end
  -- Threads start apart in the list, so they do not ask for the same things at once.
  position = math.floor((index - 1) * #requests / tonumber(args[2]))
  statuses = {}
end

function request()
  position = position % #requests + 1
  return requests[position]
end

function response(status, headers, body)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, requests)
  local counts = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      counts[status] = (counts[status] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(counts) do
    table.insert(parts, string.format('"%s":%d', status, count))
  end
  local errors = summary.errors
  io.write(string.format(
    'SOAK {"requests":%d,"microseconds":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},' ..
    '"latencyMs":{"p50":%.3f,"p99":%.3f,"max":%.3f},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, table.concat(parts, ",")))
end
