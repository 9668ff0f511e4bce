// Logger setup: JSON lines (pino) on stdout at the configured level. The only place, with config.ts,
// that knows about log levels; what is logged per request is decided in http/request-log.ts (ADR 0013).
import pino, { type Logger } from 'pino';
import { secretRedactor } from './http/request-log.js';

/** `secrets` (the root key) are redacted from every line, as is anything shaped like a managed key. */
export function createLogger(level: string, secrets: readonly string[] = []): Logger {
  const redact = secretRedactor(secrets);
  return pino({
    level,
    // Defence in depth: no line the service writes carries headers, but a key must never reach a log.
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' },
    // And whatever a line says (a URL, an error message, a line written by a library), keys are cut out.
    hooks: { streamWrite: redact },
  });
}
