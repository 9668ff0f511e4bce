// The CLI's HTTP client: one request to the agentsplit API with the key, and every way it can fail
// turned into a one-line CliError. Node's global fetch (node:http for the streamed export); it never
// touches the database.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** A failure the CLI reports as `agentsplit: <message>` on stderr, exiting with its code (1 unless said). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

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
    const { res, text } = await this.send(method, path, body);
    if (res.status >= 200 && res.status < 300) return { status: res.status, text };
    throw failure(res.status, res.statusText, res.headers.get('location'), text);
  }

  /** Sends the request and answers whatever came back (`agentsplit mcp` relays refusals to the agent). */
  async any(method: string, path: string, body?: unknown): Promise<Answer> {
    const { res, text } = await this.send(method, path, body);
    return { status: res.status, text };
  }

  private async send(method: string, path: string, body?: unknown): Promise<{ res: Response; text: string }> {
    const headers: Record<string, string> = { 'x-api-key': this.key, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // The key is in a header, which fetch would carry along a redirect to another host: never follow.
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new CliError(`cannot reach ${this.base}: ${reason(err)}`);
    }
    const text = await res.text().catch(() => '');
    return { res, text };
  }

  /**
   * A GET whose body is streamed, never read whole (the results export): answers the 2xx body as a Node
   * stream that reads from the socket only as fast as it is consumed; throws a CliError for anything
   * else, and a failure midway errors the stream with a CliError. The timeout is the socket's idle time,
   * so a long export is never cut off while data still arrives.
   *
   * node:http rather than fetch: Node 20's fetch (undici 6) turns backpressure from a slower consumer
   * (a file, `| gzip`) into repeated copies of its socket buffer — 100k results (82 MB) to a file took
   * 46 s and 300 MB instead of 2 s and 60 MB (nodejs/undici#2014).
   */
  async stream(path: string, accept: string): Promise<Readable> {
    const url = new URL(this.base + path);
    let stalled = false;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      // No agent: one connection, closed at the end (a kept-alive socket would hold the process open).
      const req = send(url, {
        headers: { 'x-api-key': this.key, accept },
        agent: false,
        timeout: TIMEOUT_MS,
      });
      req.on('response', resolve);
      req.on('timeout', () => {
        stalled = true;
        req.destroy(new StalledError());
      });
      req.on('error', (err) => reject(new CliError(`cannot reach ${this.base}: ${reason(err)}`)));
      req.end();
    });
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const location = res.headers.location ?? null;
      throw failure(status, res.statusMessage ?? '', location, await shortText(res));
    }
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of res) yield chunk as Buffer;
      } catch (err) {
        const why = stalled ? `no data for ${TIMEOUT_MS / 1000} s` : reason(err);
        throw new CliError(`the transfer stopped midway: ${why}`);
      }
      // A chunked answer cut short ends without an error on some versions: a complete one is 'complete'.
      if (!res.complete) throw new CliError('the transfer stopped midway: the connection closed early');
    }
    return Readable.from(chunks(), { objectMode: false });
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
function failure(status: number, statusText: string, location: string | null, text: string): CliError {
  if (status >= 300 && status < 400) {
    return new CliError(
      `${status} the server redirects${location ? ` to ${oneLine(location)}` : ''}; pass the final address as --url`,
    );
  }
  return new CliError(`${status} ${errorText(text) ?? (statusText || 'error')}`);
}

/** The start of an error answer's body (an error is a short JSON object; never read more than 64 KB). */
async function shortText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > 65_536) break;
    }
  } catch {}
  return Buffer.concat(chunks).toString('utf8');
}

/** Why a stream was cut: no data (or no headers) for TIMEOUT_MS. */
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
