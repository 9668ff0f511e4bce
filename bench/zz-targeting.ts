import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentsplit } from './servers.js';
import { targetingCost } from './targeting-cost.js';

const dir = mkdtempSync(join(tmpdir(), 'tc-'));
const KEY = 'bench-key-0123456789abcdef';
const s = await startAgentsplit('t', {
  API_KEY: KEY,
  DATABASE_URL: `sqlite:${join(dir, 'b.db')}`,
  DATA_DIR: dir,
});
const variants = [
  { key: 'A', payload: { prompt: 'You are a helpful assistant.', model: 'small' }, trafficPercent: 34 },
  { key: 'B', payload: { prompt: 'You are a concise assistant.', model: 'small' }, trafficPercent: 33 },
  { key: 'C', payload: { prompt: 'You are a friendly assistant.', model: 'large' }, trafficPercent: 33 },
];
await fetch(`${s.url}/experiments`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': KEY },
  body: JSON.stringify({ slug: 'bench-sticky', status: 'running', assignment: 'sticky', variants }),
});
const body = JSON.stringify({
  userId: 'user-[<id>]',
  context: { plan: 'pro', locale: 'en-US', channel: 'web', session: 'sess-[<id>]' },
});
console.log(JSON.stringify(await targetingCost(s, KEY, 'bench-sticky', variants, body, 6, 20000)));
await s.stop();
