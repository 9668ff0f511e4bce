-- wrk script for `npm run bench`: POSTs BENCH_BODY with BENCH_KEY; each "[<id>]" in the body becomes a
-- per-request counter (as autocannon's idReplacement does), so every assign has its own userId.
-- Prints one JSON line: throughput, p50/p99 latency (ms), non-2xx answers and socket errors.
local template = os.getenv("BENCH_BODY") or "{}"
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["x-api-key"] = os.getenv("BENCH_KEY") or ""
wrk.body = template

if template:find("[<id>]", 1, true) then
  local counter = 0
  request = function()
    counter = counter + 1
    local body = template:gsub("%[<id>%]", tostring(counter))
    return wrk.format(nil, nil, nil, body)
  end
end

done = function(summary, latency)
  local e = summary.errors
  io.write(string.format(
    '{"rps":%.1f,"p50":%.3f,"p99":%.3f,"non2xx":%d,"errors":%d,"requests":%d}\n',
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000,
    latency:percentile(99) / 1000,
    e.status,
    e.connect + e.read + e.write + e.timeout,
    summary.requests
  ))
end
