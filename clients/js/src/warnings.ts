// Warnings through the caller's logger, never an exception: a failing logger is ignored. The same kind of
// warning is said at most once a second (a down server would otherwise log on every call), with a count of
// the ones held back; an authentication failure (401/403) is said once per client, at error level.
import type { Logger } from './types.js';

const PREFIX = '[agentsplit] ';

export class Warnings {
  private readonly last = new Map<string, { at: number; held: number }>();
  private authSaid = false;
  private readonly onceSaid = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = 1000,
  ) {}

  warn(kind: string, message: string): void {
    const now = Date.now();
    const seen = this.last.get(kind);
    if (seen && now - seen.at < this.intervalMs) {
      seen.held++;
      return;
    }
    const held = seen?.held ?? 0;
    this.last.set(kind, { at: now, held: 0 });
    this.say('warn', held > 0 ? `${message} (${held} more like it held back)` : message);
  }

  /** A warning said once per client (later ones of the kind are silent). */
  once(kind: string, message: string): void {
    if (this.onceSaid.has(kind)) return;
    this.onceSaid.add(kind);
    this.say('warn', message);
  }

  /** A 401 or 403: loudly, once per client. */
  auth(message: string): void {
    if (this.authSaid) return;
    this.authSaid = true;
    this.say(
      'error',
      `${message} — check the API key and its scopes; said once, further calls fail the same way`,
    );
  }

  error(message: string): void {
    this.say('error', message);
  }

  private say(level: 'warn' | 'error', message: string): void {
    try {
      this.logger[level](PREFIX + message);
    } catch {
      // a logger that throws must not break the caller
    }
  }
}
