// Logger setup: JSON lines (pino) on stdout at the configured level. The only place, with config.ts,
// that knows about log levels; what is logged per request is decided in http/request-log.ts (ADR 0013).
import pino, { type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    // Defence in depth: no line the service writes carries headers, but a key must never reach a log.
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' },
  });
}
