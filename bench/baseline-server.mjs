// The bare baseline: node:http that reads a JSON body, parses it, and answers a small fixed JSON.
// The fastest any Node HTTP service can answer on this machine; agentsplit is measured against it.
import { createServer } from 'node:http';

const answer = JSON.stringify({ variant: 'A', payload: { prompt: 'You are a helpful assistant.' } });
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stderr.write(`baseline listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
