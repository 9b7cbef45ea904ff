-- wrk script: every request registers a new, unique device token (JSON body), like apps on first launch.
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local key = os.getenv("PUSHCTL_BENCH_KEY") or "bench-key"
local counter = 0

function request()
  counter = counter + 1
  local token = string.format("%08x%08x%08x%08x%08x%08x%08x%08x",
    tid or 0, counter, math.random(0, 2147483647), math.random(0, 2147483647),
    math.random(0, 2147483647), math.random(0, 2147483647), 0, counter)
  return wrk.format("POST", "/v1/apps/bench/devices",
    { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key },
    '{"token":"' .. token .. '"}')
end

function done(summary, latency, requests)
  local non2xx = (summary.errors.status or 0)
  io.write(string.format("BENCH requests=%d non2xx=%d socket_errors=%d duration_s=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
    summary.requests, non2xx, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
