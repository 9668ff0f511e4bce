// One autocannon run in a process of its own (pinned to core 1 by the caller), so the load
// generator's heap and CPU are the same for every target; prints the result as one JSON line.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2] ?? '{}');
const r = await autocannon(options);
process.stdout.write(
  `${JSON.stringify({
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  })}\n`,
);
