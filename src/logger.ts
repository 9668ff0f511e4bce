// The logger: the service's own lines (JSON, pino) on stdout at the configured level (LOG_LEVEL). The only
// place, with config.ts, that knows about levels; which access lines a request gets is decided in
// http/request-log.ts (ADR 0013). ("Log" alone means logging a result: POST …/log.)
import pino, { type Logger } from 'pino';
import { secretRedactor } from './http/request-log.js';

/** `secrets` (the root key) are redacted from every line, as is anything shaped like a managed key. */
export function createLogger(level: string, secrets: readonly string[] = []): Logger {
  const redact = secretRedactor(secrets);
  return pino({
    level,
    // Defence in depth: no line the service writes carries headers, but a key must never reach the logger.
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' },
    // And whatever a line says (a URL, an error message, a line written by a library), keys are cut out.
    hooks: { streamWrite: redact },
  });
}
