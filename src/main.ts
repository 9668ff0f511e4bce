// The composition root: environment → config → runtime → listen; graceful shutdown on SIGTERM/SIGINT.
import { readFileSync } from 'node:fs';
import { resolveApiKey } from './api-key.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { readPriceTable } from './core/trace-result.js';
import type { PriceTable } from './core/trace-run.js';
import { createLogger } from './logger.js';
import { startRuntime } from './runtime.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const key = resolveApiKey(config.apiKey, config.dataDir, config.production);
  const runtime = await startRuntime({
    database: config.database,
    apiKey: key.key,
    bodyLimit: config.bodyLimit,
    bodyTimeoutMs: config.bodyTimeoutMs,
    slowRequestMs: config.slowRequestMs,
    exposureBuffer: config.exposureBuffer,
    keyHashSecret: config.keyHashSecret,
    idempotencyClaimTimeoutMs: config.idempotencyClaimTimeoutMs,
    corsOrigins: config.corsOrigins,
    rateLimits: config.rateLimits,
    trustProxy: config.trustProxy,
    webhooks: config.webhooks,
    monitorIntervalSeconds: config.monitorIntervalSeconds,
    analysis: config.analysis,
    mcp: config.mcp,
    traces: { ...config.traces, prices: prices(config) },
    logger: createLogger(config.logLevel, [key.key]),
  });
  const { app } = runtime;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: draining requests and pending writes');
    runtime.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  const db = config.database.kind === 'sqlite' ? `SQLite ${config.database.path}` : 'PostgreSQL';
  const lines = [
    `agentsplit listening on ${address} (${db})`,
    `Dashboard: ${address}/ui/ (sign in with an API key)`,
  ];
  if (key.generated) {
    lines.push(
      `API key (generated now, kept in ${key.file}, shown only this once): ${key.key}`,
      `Try: curl -s -H 'x-api-key: ${key.key}' ${address}/experiments`,
    );
  } else if (key.file) {
    lines.push(`API key: read from ${key.file} (set API_KEY to use your own)`);
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** TRACE_PRICES' table (ADR 0045): a JSON file read once at start; a file that cannot be used stops the start. */
function prices(config: Config): PriceTable {
  const file = config.traces.pricesFile;
  if (file === undefined) return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`TRACE_PRICES: cannot read ${file} (${(err as Error).message})`);
  }
  try {
    return readPriceTable(JSON.parse(text), `TRACE_PRICES ${file}`);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

main().catch((err) => {
  const message = err instanceof ConfigError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`agentsplit could not start: ${message}\n`);
  process.exit(1);
});
