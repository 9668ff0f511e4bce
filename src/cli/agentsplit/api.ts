// The CLI's HTTP client: one request to the agentsplit API with the key, and every way it can fail
// turned into a one-line CliError. Node's global fetch only; it never touches the database.
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** A failure the CLI reports as `agentsplit: <message>` on stderr with exit code 1. */
export class CliError extends Error {}

export const DEFAULT_URL = 'http://127.0.0.1:3000';
/** How long one request may take before the CLI gives up. */
const TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  /** The body exactly as the server sent it ('' for a 204). */
  text: string;
}

export class Api {
  readonly base: string;

  constructor(
    url: string,
    private readonly key: string,
  ) {
    this.base = checkedBase(url);
  }

  /** Sends the request; answers 2xx, throws a CliError for anything else. */
  async request(method: string, path: string, body?: unknown): Promise<Answer> {
    const res = await this.send(method, path, AbortSignal.timeout(TIMEOUT_MS), body);
    const text = await res.text().catch(() => '');
    if (res.status >= 200 && res.status < 300) return { status: res.status, text };
    throw failure(res, text);
  }

  /**
   * A GET whose body is streamed, never read whole (the results export): answers the 2xx body as a Node
   * stream that reads from the socket only as fast as it is consumed; throws a CliError for anything
   * else. The timeout covers the wait for the headers and then each gap between chunks, so a long export
   * is never cut off while data still arrives. A failure midway errors the stream with a CliError.
   */
  async stream(path: string, accept: string): Promise<Readable> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new StalledError()), TIMEOUT_MS);
    };
    arm();
    const res = await this.send('GET', path, controller.signal, undefined, accept).finally(() =>
      clearTimeout(timer),
    );
    if (res.status < 200 || res.status >= 300 || res.body === null) {
      throw failure(res, await res.text().catch(() => ''));
    }
    const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    async function* chunks(): AsyncGenerator<Buffer> {
      arm();
      try {
        for await (const chunk of body) {
          arm();
          yield chunk as Buffer;
        }
      } catch (err) {
        const stalled =
          err instanceof StalledError || (err as { cause?: unknown })?.cause instanceof StalledError;
        throw new CliError(
          `the transfer stopped midway: ${stalled ? `no data for ${TIMEOUT_MS / 1000} s` : reason(err)}`,
        );
      } finally {
        clearTimeout(timer);
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  private async send(
    method: string,
    path: string,
    signal: AbortSignal,
    body?: unknown,
    accept = 'application/json',
  ): Promise<Response> {
    const headers: Record<string, string> = { 'x-api-key': this.key, accept };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // The key is in a header, which fetch would carry along a redirect to another host: never follow.
        redirect: 'manual',
        signal,
      });
    } catch (err) {
      throw new CliError(`cannot reach ${this.base}: ${reason(err)}`);
    }
  }

  /** The answer's JSON (the API always answers JSON on success, except 204). */
  async json<T>(method: string, path: string, body?: unknown): Promise<{ value: T; text: string }> {
    const answer = await this.request(method, path, body);
    try {
      return { value: JSON.parse(answer.text) as T, text: answer.text };
    } catch {
      throw new CliError(`${answer.status} the server's answer is not JSON: is ${this.base} agentsplit?`);
    }
  }
}

/** A non-2xx answer as one line: the status and the API's error text. */
function failure(res: Response, text: string): CliError {
  if (res.status >= 300 && res.status < 400) {
    const to = res.headers.get('location');
    return new CliError(
      `${res.status} the server redirects${to ? ` to ${oneLine(to)}` : ''}; pass the final address as --url`,
    );
  }
  return new CliError(`${res.status} ${errorText(text) ?? (res.statusText || 'error')}`);
}

/** Why a stream was aborted: no data (or no headers) for TIMEOUT_MS. */
class StalledError extends Error {
  override name = 'TimeoutError';
}

/** `http(s)://host[:port][/prefix]` without a trailing slash; anything else is a CliError. */
function checkedBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`invalid server address '${oneLine(url)}': expected http://host:port`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`invalid server address '${oneLine(url)}': expected http:// or https://`);
  }
  if (parsed.search || parsed.hash) {
    throw new CliError(`invalid server address '${oneLine(url)}': no query or fragment`);
  }
  return parsed.href.replace(/\/+$/, '');
}

/** The API's `{"error": "..."}` text, or undefined when the body is not that. */
function errorText(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
      return oneLine((body as { error: string }).error);
    }
  } catch {}
  return undefined;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
  EPROTO: 'TLS handshake failed (is the server plain http?)',
  ERR_SSL_WRONG_VERSION_NUMBER: 'TLS handshake failed (is the server plain http?)',
};

/** Why fetch failed, in a few words: undici hides the system error in `cause` (or its `errors`). */
function reason(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  const cause = (err as { cause?: unknown })?.cause ?? err;
  const code =
    (cause as { code?: unknown })?.code ?? (cause as { errors?: { code?: unknown }[] })?.errors?.[0]?.code;
  if (typeof code === 'string') return REASONS[code] ?? `${code}`;
  return oneLine(cause instanceof Error ? cause.message : String(cause));
}

/** Control characters (newlines, terminal escapes) from the server never reach the terminal. */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}
