// Reading results (issue 2, section 3): pages, filters, exact JSON, NDJSON and CSV export.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
  parseCsv,
  type Result,
  type ResultPage,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return; // the suites below are skipped too
  runtime = await startTestRuntime(dir, 'results');
  api = runtime.api;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

const RESULT_FIELDS = [
  'assignedVariant',
  'assignmentContext',
  'assignmentId',
  'comments',
  'context',
  'createdAt',
  'experimentVersion',
  'feedback',
  'input',
  'knownVariant',
  'logId',
  'metrics',
  'output',
  'timestamp',
  'userId',
  'variantKey',
];

/** A log body exercising everything JSON can carry, written as text so nothing is lost before sending. */
const TRICKY_LOG = String.raw`{
  "variantKey": "A",
  "userId": "user 👩‍💻, \"quoted\"",
  "input": {
    "messages": [{"role": "user", "content": "Grüß Gott — 你好 — مرحبا — 🎉👩‍👩‍👧 — e\u0301"}],
    "escapes": "quote \" backslash \\ slash \/ tab \t newline \n cr \r bom \ufeff",
    "empty": "", "emptyObject": {}, "emptyArray": [], "sparse": [null, null]
  },
  "output": {
    "text": "line1\r\nline2, with comma",
    "numbers": [0, -1, 1.5, -2.25e-8, 1e21, 1.7976931348623157e308, 5e-324, 9007199254740991, -9007199254740991],
    "bools": [true, false], "nothing": null
  },
  "metrics": {
    "latency_ms": 812.4, "tokens": 1234, "cost_usd": 0.00042, "passed": true,
    "deep": {"a": {"b": {"c": {"d": [1, [2, [3, {"e": "f"}]]]}}}}
  },
  "context": {
    "__proto__": {"polluted": "yes"},
    "constructor": {"prototype": {"polluted": "yes"}},
    "toString": "not a function",
    "key.with.dots": 1, "$dollar": 2, "": "empty key", "ключ": "значение"
  }
}`;

function pageUrl(slug: string, query: string): string {
  return `/experiment/${slug}/results${query}`;
}

async function page(slug: string, query: string): Promise<ResultPage> {
  const res = await api.get(pageUrl(slug, query));
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as ResultPage;
}

async function logSequentially(slug: string, n: number, tag = 'r'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await api.log(slug, { variantKey: i % 3 === 0 ? 'B' : 'A', input: { tag, i } })).logId);
  }
  return ids;
}

describe('GET /experiment/:slug/results', { skip: SKIP_BACKEND }, () => {
  test('each result has exactly the documented fields', async () => {
    const created = await api.createExperiment();
    const { logId } = await api.log(created.slug, { variantKey: 'A', metrics: { score: 1 } });
    const body = await page(created.slug, '');
    assert.deepEqual(Object.keys(body).sort(), ['nextCursor', 'results']);
    assert.equal(body.nextCursor, null);
    const [result] = body.results as [Result];
    assert.deepEqual(Object.keys(result).sort(), RESULT_FIELDS);
    assert.equal(result.logId, logId);
    assert.equal(result.variantKey, 'A');
    assert.deepEqual(result.metrics, { score: 1 });
    assert.equal(result.experimentVersion, 1);
    assert.ok(!Number.isNaN(Date.parse(result.createdAt)), result.createdAt);
  });

  test('input, output, metrics and context are returned exactly as sent (nested, unicode, "__proto__")', async () => {
    const created = await api.createExperiment();
    const res = await api.postRaw(`/experiment/${created.slug}/log`, TRICKY_LOG);
    assert.equal(res.statusCode, 200, res.body);
    const sent = JSON.parse(TRICKY_LOG);
    const [result] = (await page(created.slug, '')).results as [Result];
    for (const field of ['input', 'output', 'metrics', 'context', 'userId'] as const) {
      assert.deepEqual(result[field], sent[field], field);
    }
    assert.ok(Object.hasOwn(result.context as object, '__proto__'), '"__proto__" must stay an own key');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('NUL characters and lone surrogates are refused with 400 naming where (neither database keeps them)', async () => {
    const created = await api.createExperiment();
    const cases: Array<[string, RegExp]> = [
      [String.raw`{"variantKey":"A","input":{"text":"nul \u0000 here"}}`, /body\/input\/text contains a NUL/],
      [
        String.raw`{"variantKey":"A","context":{"a\u0000b":1}}`,
        /body\/context has a key that contains a NUL/,
      ],
      [
        String.raw`{"variantKey":"A","output":{"t":"lone \ud800"}}`,
        /body\/output\/t contains a lone UTF-16 surrogate/,
      ],
      [String.raw`{"variantKey":"A","userId":"u\u0000"}`, /body\/userId contains a NUL/],
    ];
    for (const [body, message] of cases) {
      const res = await api.postRaw(`/experiment/${created.slug}/log`, body);
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().error, message);
    }
    const assign = await api.postRaw(`/experiment/${created.slug}/assign`, String.raw`{"userId":"u\u0000"}`);
    assert.equal(assign.statusCode, 400, assign.body);
    assert.equal((await page(created.slug, '')).results.length, 0, 'nothing was stored');
  });

  test('limit and cursor walk every result once, oldest first; nextCursor is null on the last page', async () => {
    const created = await api.createExperiment();
    const logged = await logSequentially(created.slug, 23);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=5' : `?limit=5&cursor=${encodeURIComponent(cursor)}`;
      const body = await page(created.slug, query);
      assert.ok(body.results.length <= 5);
      seen.push(...body.results.map((r) => r.logId));
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null);
    assert.equal(pages, 5);
    assert.deepEqual(seen, logged);
  });

  test('the same page read twice is the same (stable order)', async () => {
    const created = await api.createExperiment();
    await logSequentially(created.slug, 12);
    const first = await page(created.slug, '?limit=4');
    const second = await page(created.slug, `?limit=4&cursor=${encodeURIComponent(first.nextCursor!)}`);
    assert.deepEqual(await page(created.slug, '?limit=4'), first);
    assert.deepEqual(
      await page(created.slug, `?limit=4&cursor=${encodeURIComponent(first.nextCursor!)}`),
      second,
    );
  });

  test('no duplicates or gaps across pages while new results are logged between page reads', async () => {
    const created = await api.createExperiment();
    const logged = await logSequentially(created.slug, 20, 'before');
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const query: string = cursor === null ? '?limit=6' : `?limit=6&cursor=${encodeURIComponent(cursor)}`;
      const body = await page(created.slug, query);
      seen.push(...body.results.map((r) => r.logId));
      cursor = body.nextCursor;
      // New results arrive between reads, for a while.
      if (round < 4) logged.push(...(await logSequentially(created.slug, 4, `during-${round}`)));
      round++;
    } while (cursor !== null);
    assert.equal(new Set(seen).size, seen.length, 'duplicates across pages');
    // Whatever was committed before the last page was read is on some page, in commit order.
    assert.deepEqual(seen, logged.slice(0, seen.length));
    assert.ok(seen.length >= 20 + 4 * 3, `only ${seen.length} results seen`);
  });

  test('pages read while concurrent logs commit form a gap-free prefix of the final order', async () => {
    const created = await api.createExperiment();
    await logSequentially(created.slug, 10);
    const inFlight = Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api.log(created.slug, { variantKey: 'A', input: { concurrent: i } }),
      ),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '?limit=3' : `?limit=3&cursor=${encodeURIComponent(cursor)}`;
      const body = await page(created.slug, query);
      seen.push(...body.results.map((r) => r.logId));
      cursor = body.nextCursor;
    } while (cursor !== null);
    await inFlight;
    const final = (await api.allResults(created.slug)).map((r) => r.logId);
    assert.equal(final.length, 210);
    assert.equal(new Set(seen).size, seen.length, 'duplicates across pages');
    assert.deepEqual(seen, final.slice(0, seen.length));
  });

  test('limit defaults to 100; 1 and 1000 are accepted', async () => {
    const created = await api.createExperiment();
    await api.logMany(
      created.slug,
      Array.from({ length: 150 }, (_, i) => ({ variantKey: 'A', input: { i } })),
    );
    const first = await page(created.slug, '');
    assert.equal(first.results.length, 100);
    assert.notEqual(first.nextCursor, null);
    assert.equal((await page(created.slug, '?limit=1')).results.length, 1);
    const all = await page(created.slug, '?limit=1000');
    assert.equal(all.results.length, 150);
    assert.equal(all.nextCursor, null);
  });

  test('limit 0, 1001, negative, fractional or not a number → 400 naming limit', async () => {
    const created = await api.createExperiment();
    for (const limit of ['0', '1001', '-1', '1.5', 'abc', '']) {
      assertError(await api.get(pageUrl(created.slug, `?limit=${limit}`)), 400, /limit/);
    }
  });

  test('a cursor that was not given out → 400 naming cursor', async () => {
    const created = await api.createExperiment();
    await logSequentially(created.slug, 2);
    const forged = [
      'garbage',
      '!!!',
      Buffer.from('r:abc').toString('base64url'),
      Buffer.from('x:5').toString('base64url'),
      Buffer.from('r:-1').toString('base64url'),
      'A'.repeat(500),
    ];
    for (const cursor of forged) {
      assertError(
        await api.get(pageUrl(created.slug, `?cursor=${encodeURIComponent(cursor)}`)),
        400,
        /cursor/,
      );
    }
  });

  test('?variant= returns only that variant, and pages through it', async () => {
    const created = await api.createExperiment();
    const logged = await logSequentially(created.slug, 15);
    const all = await api.allResults(created.slug);
    const onlyB = all.filter((r) => r.variantKey === 'B').map((r) => r.logId);
    assert.equal(onlyB.length, 5);
    assert.deepEqual(
      all.map((r) => r.logId),
      logged,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const body = await page(created.slug, `?variant=B&limit=2${after}`);
      assert.ok(body.results.every((r) => r.variantKey === 'B'));
      seen.push(...body.results.map((r) => r.logId));
      cursor = body.nextCursor;
    } while (cursor !== null);
    assert.deepEqual(seen, onlyB);
    assert.deepEqual((await page(created.slug, '?variant=nope')).results, []);
  });

  test('?since= keeps createdAt >= since and ?until= keeps createdAt < until', async () => {
    const created = await api.createExperiment();
    await logSequentially(created.slug, 30);
    const all = await api.allResults(created.slug);
    const times = [...new Set(all.map((r) => r.createdAt))].sort();
    // Bounds taken from the data, so the test does not depend on how fast the machine is.
    const since = times[Math.floor(times.length / 3)]!;
    const until = times[Math.floor((2 * times.length) / 3)]!;
    const ids = (rs: Result[]) => rs.map((r) => r.logId);
    const expectSince = all.filter((r) => r.createdAt >= since);
    const expectUntil = all.filter((r) => r.createdAt < until);
    const expectBoth = all.filter((r) => r.createdAt >= since && r.createdAt < until);
    const q = (s: string) => encodeURIComponent(s);
    assert.deepEqual(ids(await api.allResults(created.slug, `&since=${q(since)}`)), ids(expectSince));
    assert.deepEqual(ids(await api.allResults(created.slug, `&until=${q(until)}`)), ids(expectUntil));
    assert.deepEqual(
      ids(await api.allResults(created.slug, `&since=${q(since)}&until=${q(until)}`)),
      ids(expectBoth),
    );
    // The same instant written with an offset filters the same way.
    const offset = new Date(Date.parse(since)).toISOString().replace('Z', '+00:00');
    assert.deepEqual(ids(await api.allResults(created.slug, `&since=${q(offset)}`)), ids(expectSince));
    assert.deepEqual(await api.allResults(created.slug, '&since=2999-01-01T00:00:00Z'), []);
    assert.equal((await api.allResults(created.slug, '&until=2999-01-01T00:00:00Z')).length, 30);
  });

  test('an invalid since or until → 400 naming it', async () => {
    const created = await api.createExperiment();
    assertError(await api.get(pageUrl(created.slug, '?since=yesterday')), 400, /since/);
    assertError(await api.get(pageUrl(created.slug, '?until=2026-13-01T00:00:00Z')), 400, /until/);
  });

  test('results of an unknown slug → 404', async () => {
    assertError(await api.get('/experiment/never-created/results'), 404, /never-created/);
  });

  test('results of any status can be read, including archived', async () => {
    const created = await api.createExperiment();
    const { logId } = await api.log(created.slug, { variantKey: 'A' });
    await api.setStatus(created.slug, 'archived');
    assert.deepEqual(
      (await page(created.slug, '')).results.map((r) => r.logId),
      [logId],
    );
  });
});

describe('GET /experiment/:slug/results/export', { skip: SKIP_BACKEND }, () => {
  let slug: string;
  let all: Result[];

  before(async () => {
    slug = (await api.createExperiment()).slug;
    const batch = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        variantKey: (from + i) % 2 ? 'B' : 'A',
        metrics: { i: from + i },
      }));
    await api.logMany(slug, batch(0, 1000));
    await api.logMany(slug, batch(1000, 500));
    const res = await api.postRaw(`/experiment/${slug}/log`, TRICKY_LOG);
    assert.equal(res.statusCode, 200, res.body);
    await api.log(slug, {
      variantKey: 'odd, "key"\nwith newline',
      userId: 'a,b',
      output: { csv: 'x,"y"\r\nz' },
    });
    all = await api.allResults(slug);
    assert.equal(all.length, 1502);
  });

  test('?format=ndjson: one JSON object per line, every result, equal to the paged listing', async () => {
    const res = await api.get(`/experiment/${slug}/results/export?format=ndjson`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 200));
    assert.match(String(res.headers['content-type']), /ndjson/);
    assert.ok(res.body.endsWith('\n'));
    const lines = res.body.slice(0, -1).split('\n');
    assert.equal(lines.length, all.length);
    assert.deepEqual(
      lines.map((line) => JSON.parse(line)),
      all,
    );
  });

  test('NDJSON is the default format', async () => {
    const res = await api.get(`/experiment/${slug}/results/export`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body.trim().split('\n').length, all.length);
  });

  test('NDJSON keeps JSON exactly as sent', async () => {
    const sent = JSON.parse(TRICKY_LOG);
    const res = await api.get(`/experiment/${slug}/results/export?format=ndjson`);
    const exported = res.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Result)
      .find((r) => r.userId === sent.userId);
    assert.ok(exported);
    for (const field of ['input', 'output', 'metrics', 'context'] as const) {
      assert.deepEqual(exported[field], sent[field], field);
    }
  });

  test('?format=csv: a header row and one record per result, with commas, quotes and newlines quoted', async () => {
    const res = await api.get(`/experiment/${slug}/results/export?format=csv`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 200));
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    const rows = parseCsv(res.body);
    const [header, ...records] = rows as [string[], ...string[][]];
    assert.ok(header.includes('logId') && header.includes('variantKey'), header.join(','));
    for (const field of RESULT_FIELDS) assert.ok(header.includes(field), `CSV header lacks ${field}`);
    assert.equal(records.length, all.length);
    const column = (name: string) => header.indexOf(name);
    records.forEach((record, i) => {
      const result = all[i]!;
      assert.equal(record.length, header.length, `record ${i} has ${record.length} cells`);
      assert.equal(record[column('logId')], result.logId);
      assert.equal(record[column('variantKey')], result.variantKey);
      assert.equal(record[column('userId')], result.userId ?? '');
      for (const field of ['input', 'output', 'metrics', 'context'] as const) {
        const cell = record[column(field)]!;
        assert.deepEqual(cell === '' ? null : JSON.parse(cell), result[field], `${field} of record ${i}`);
      }
    });
    const odd = records.find((r) => r[column('userId')] === 'a,b');
    assert.ok(odd, 'the record with commas, quotes and newlines survives');
    assert.equal(odd[column('variantKey')], 'odd, "key"\nwith newline');
    assert.equal(odd[column('knownVariant')], 'false');
  });

  test('?format=csv has one column per analysed metric, metric:<name>, with its value (a spreadsheet can pivot it)', async () => {
    const csvSlug = (await api.createExperiment()).slug;
    await api.logMany(csvSlug, [
      { variantKey: 'A', metrics: { latency_ms: 812, 'ok, really': true, note: 'text' } },
      { variantKey: 'B', metrics: { latency_ms: 640.5 } },
      { variantKey: 'A' },
    ]);
    const res = await api.get(`/experiment/${csvSlug}/results/export?format=csv`);
    const [header, ...records] = parseCsv(res.body) as [string[], ...string[][]];
    // Only numbers and true/false are analysed, so only they get a column; the JSON column keeps everything.
    assert.deepEqual(header.slice(-2), ['metric:latency_ms', 'metric:ok, really']);
    assert.deepEqual(
      records.map((r) => r.slice(-2)),
      [
        ['812', 'true'],
        ['640.5', ''],
        ['', ''],
      ],
    );
    assert.deepEqual(JSON.parse(records[0]![header.indexOf('metrics')]!), {
      latency_ms: 812,
      'ok, really': true,
      note: 'text',
    });
  });

  test('?format=csv: text a spreadsheet would run as a formula gets a leading quote; numbers stay numbers', async () => {
    const formulaSlug = (await api.createExperiment()).slug;
    const formulas = ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(A1)', '\tTAB', '\rCR'];
    await api.logMany(
      formulaSlug,
      formulas.map((userId, i) => ({ variantKey: 'A', userId, metrics: { delta: -3 - i } })),
    );
    const res = await api.get(`/experiment/${formulaSlug}/results/export?format=csv`);
    const [header, ...records] = parseCsv(res.body) as [string[], ...string[][]];
    assert.deepEqual(
      records.map((r) => r[header.indexOf('userId')]),
      formulas.map((f) => `'${f}`),
    );
    // Negative numbers are numbers, in the metric columns and in the JSON text alike.
    assert.deepEqual(
      records.map((r) => r[header.indexOf('metric:delta')]),
      formulas.map((_, i) => String(-3 - i)),
    );
    assert.deepEqual(JSON.parse(records[0]![header.indexOf('metrics')]!), { delta: -3 });
    // The JSON export is unchanged: the values exactly as sent.
    const ndjson = await api.get(`/experiment/${formulaSlug}/results/export?format=ndjson`);
    assert.deepEqual(
      ndjson.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).userId),
      formulas,
    );
  });

  test('an experiment without results exports nothing but the CSV header', async () => {
    const empty = (await api.createExperiment()).slug;
    const ndjson = await api.get(`/experiment/${empty}/results/export?format=ndjson`);
    assert.equal(ndjson.statusCode, 200);
    assert.equal(ndjson.body, '');
    const csv = await api.get(`/experiment/${empty}/results/export?format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.equal(parseCsv(csv.body).length, 1);
  });

  test('export of an unknown slug → 404', async () => {
    assertError(await api.get('/experiment/never-created/results/export?format=csv'), 404, /never-created/);
    assertError(
      await api.get('/experiment/never-created/results/export?format=ndjson'),
      404,
      /never-created/,
    );
  });

  test('an unknown export format → 400 naming format', async () => {
    assertError(await api.get(`/experiment/${slug}/results/export?format=xml`), 400, /format/);
  });
});

describe('times: years 0001-9999, offsets normalized to UTC (hole 10)', { skip: SKIP_BACKEND }, () => {
  test('a log timestamp beyond year 9999 or before year 0001 → 400 with the same message on both databases', async () => {
    const created = await api.createExperiment();
    const cases: Array<[string, string]> = [
      ['+010000-01-01T00:00:00Z', 'body/timestamp must match format "date-time"'],
      [
        '0000-01-01T00:00:00Z',
        "timestamp must be between years 0001 and 9999 in UTC (got '0000-01-01T00:00:00Z')",
      ],
      // In range as written, past 9999 in UTC: the offset carries it into year 10000.
      [
        '9999-12-31T23:00:00-14:00',
        "timestamp must be between years 0001 and 9999 in UTC (got '9999-12-31T23:00:00-14:00')",
      ],
    ];
    for (const [timestamp, message] of cases) {
      const res = await api.post(`/experiment/${created.slug}/log`, { variantKey: 'A', timestamp });
      assert.equal(assertError(res, 400), message, timestamp);
      const many = await api.post(`/experiment/${created.slug}/logs`, {
        results: [{ variantKey: 'A', timestamp }],
      });
      assertError(many, 400, /timestamp/);
    }
    assert.deepEqual((await page(created.slug, '')).results, [], 'nothing was stored');
  });

  test('the first and last instants of years 0001-9999 are stored and returned as sent', async () => {
    const created = await api.createExperiment();
    for (const timestamp of ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      await api.log(created.slug, { variantKey: 'A', timestamp });
    }
    assert.deepEqual(
      (await page(created.slug, '')).results.map((r) => r.timestamp),
      ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'],
    );
  });

  test('a timestamp with an offset is returned as the same instant in UTC', async () => {
    const created = await api.createExperiment();
    await api.log(created.slug, { variantKey: 'A', timestamp: '2026-03-01T10:00:00-14:00' });
    await api.log(created.slug, { variantKey: 'A', timestamp: '2026-03-01T10:00:00.5+05:30' });
    assert.deepEqual(
      (await page(created.slug, '')).results.map((r) => r.timestamp),
      ['2026-03-02T00:00:00.000Z', '2026-03-01T04:30:00.500Z'],
    );
  });

  test('since and until written with an offset find the same results as the same instant written with Z', async () => {
    const created = await api.createExperiment();
    await logSequentially(created.slug, 3);
    const all = await api.allResults(created.slug);
    const ids = (rs: Result[]) => rs.map((r) => r.logId);
    const first = Date.parse(all[0]!.createdAt);
    const last = Date.parse(all.at(-1)!.createdAt);
    /** The instant `t` as local time at `offsetHours` from UTC, e.g. …T20:00:00.000-14:00. */
    const at = (t: number, offsetHours: number) => {
      const local = new Date(t + offsetHours * 3_600_000).toISOString().slice(0, -1);
      const sign = offsetHours < 0 ? '-' : '+';
      const hours = String(Math.abs(offsetHours)).padStart(2, '0');
      return `${local}${sign}${hours}:00`;
    };
    for (const [name, t, expected] of [
      ['until', last + 1, all],
      ['until', first, []],
      ['since', first, all],
      ['since', last + 1, []],
    ] as const) {
      const withZ = await api.allResults(created.slug, `&${name}=${new Date(t).toISOString()}`);
      assert.deepEqual(ids(withZ), ids([...expected]), `${name} with Z`);
      for (const offset of [-14, 14, 5]) {
        // `+` must be sent as %2B: a bare `+` in a query string is a space.
        const value = encodeURIComponent(at(t, offset));
        const withOffset = await api.allResults(created.slug, `&${name}=${value}`);
        assert.deepEqual(ids(withOffset), ids(withZ), `${name}=${at(t, offset)}`);
      }
    }
  });

  test('since or until past year 9999 in UTC (9999-12-31T23:00:00-14:00) → 400 naming it, not 0 rows', async () => {
    // Normalized naively, that instant is "+010000-01-01T13:00:00.000Z", which as text sorts before
    // every 4-digit year: SQLite found no row before it, PostgreSQL refused it with its own error.
    const created = await api.createExperiment();
    await logSequentially(created.slug, 3);
    for (const name of ['since', 'until']) {
      const value = '9999-12-31T23:00:00-14:00';
      const res = await api.get(pageUrl(created.slug, `?${name}=${encodeURIComponent(value)}`));
      assert.equal(
        assertError(res, 400),
        `${name} must be between years 0001 and 9999 in UTC (got '${value}')`,
      );
    }
    const res = await api.get(pageUrl(created.slug, `?until=0000-06-01T00:00:00Z`));
    assertError(res, 400, /until must be between years 0001 and 9999/);
  });
});

describe('JSON objects come back with their keys in the order sent (hole 11)', { skip: SKIP_BACKEND }, () => {
  // Neither alphabetical nor by length (jsonb's order: shorter keys first, then bytewise).
  const ORDERED = '{"zeta":1,"alpha":{"b":2,"a":1},"mid":[{"y":1,"x":2}],"b":true}';

  test('input, output, metrics and context: in the listing and the export, key order included', async () => {
    const created = await api.createExperiment();
    const body = `{"variantKey":"A","input":${ORDERED},"output":${ORDERED},"metrics":${ORDERED},"context":${ORDERED}}`;
    const res = await api.postRaw(`/experiment/${created.slug}/log`, body);
    assert.equal(res.statusCode, 200, res.body);
    const [listed] = (await page(created.slug, '')).results as [Result];
    const exported = JSON.parse(
      (await api.get(`/experiment/${created.slug}/results/export`)).body.trim(),
    ) as Result;
    for (const field of ['input', 'output', 'metrics', 'context'] as const) {
      assert.equal(JSON.stringify(listed[field]), ORDERED, `listed ${field}`);
      assert.equal(JSON.stringify(exported[field]), ORDERED, `exported ${field}`);
    }
  });

  test('a variant payload, as stored and in every version', async () => {
    const payload = JSON.parse(ORDERED);
    const created = await api.createExperiment({
      variants: [
        { key: 'A', payload, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
      ],
    });
    assert.equal(JSON.stringify(created.variants[0]!.payload), ORDERED);
    const changed = await api.patch(`/experiment/${created.slug}`, {
      variants: [
        { key: 'A', payload: { ...payload, added: 1 }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
      ],
    });
    assert.equal(changed.statusCode, 200, changed.body);
    // Read back from the database, not from the instance's cache.
    const stored = await runtime.store.findExperiment(created.slug);
    assert.ok(stored);
    assert.equal(
      JSON.stringify(stored.experiment.variants[0]!.payload),
      ORDERED.replace(/}$/, ',"added":1}'),
    );
    const versions = await runtime.store.listVersions(stored.id);
    assert.deepEqual(
      versions.map((v) => JSON.stringify(v.variants[0]!.payload)),
      [ORDERED, ORDERED.replace(/}$/, ',"added":1}')],
    );
  });
});
