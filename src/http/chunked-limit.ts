// Chunked request bodies against the body limit by their declared chunk sizes (issue 24).
//
// Node's parser takes a chunk size of up to 16 hex digits (2^64 − 1 bytes) and then waits for that many
// bytes; Fastify counts the bytes that arrive. So a chunk declared far beyond the limit was answered
// only once a limit's worth of bytes had come, or with 408 at the body timeout. Node does not expose
// the sizes it reads, so this reads the same bytes beside it: the rest of the read that completed the
// headers (the parser's current buffer) and every later read on the connection (a socket 'data'
// listener, which Node supports by feeding the parser from JavaScript from then on), until the body
// ends. Only for requests that are chunked, which the fast transport never takes. (Node then feeds that
// connection's parser from JavaScript for good, a little slower; clients of this API send Content-Length.)
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** What is known of one chunked request's declared sizes. */
export interface ChunkWatch {
  /** The chunk sizes declared so far add up to more than the limit. */
  over: boolean;
  /** Called once when `over` becomes true after the request was handed on. */
  onOver?: () => void;
}

const watches = new WeakMap<IncomingMessage, ChunkWatch>();

/** The watch on this request's declared chunk sizes, if it has one. */
export function chunkWatch(req: IncomingMessage): ChunkWatch | undefined {
  return watches.get(req);
}

const CHUNKED = /(?:^|,)[ \t]*chunked[ \t]*$/i;

type Step = 'going' | 'over' | 'done' | 'lost';

/** Follows chunked framing (RFC 9112 §7.1) far enough to add up the declared sizes. */
class ChunkScanner {
  private state: 'size' | 'line' | 'data' | 'data-end' | 'trailers' = 'size';
  private size = 0;
  private digits = 0;
  private declared = 0;
  private remaining = 0;
  private lineLength = 0;

  constructor(private readonly limit: number) {}

  /** 'over' as soon as the sizes declared pass the limit; 'lost' on anything that is not chunked framing. */
  feed(bytes: Buffer, from = 0): Step {
    let i = from;
    while (i < bytes.length) {
      const b = bytes[i]!;
      switch (this.state) {
        case 'size': {
          const v = hexValue(b);
          if (v >= 0) {
            this.size = this.size * 16 + v;
            this.digits++;
            if (this.declared + this.size > this.limit) return 'over';
            i++;
            continue;
          }
          if (this.digits === 0) return 'lost';
          this.state = 'line';
          continue; // this byte belongs to the rest of the size line
        }
        case 'line':
          // Chunk extensions up to the end of the size line (the parser bounds and checks them).
          i++;
          if (b !== 0x0a) continue;
          if (this.size === 0) {
            this.state = 'trailers';
            this.lineLength = 0;
          } else {
            this.declared += this.size;
            this.remaining = this.size;
            this.state = 'data';
          }
          continue;
        case 'data': {
          const take = Math.min(this.remaining, bytes.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.state = 'data-end';
          continue;
        }
        case 'data-end':
          // The CRLF after a chunk's data.
          i++;
          if (b === 0x0a) {
            this.state = 'size';
            this.size = 0;
            this.digits = 0;
          }
          continue;
        case 'trailers':
          // Trailer fields after the last chunk, up to an empty line.
          i++;
          if (b === 0x0a) {
            if (this.lineLength === 0) return 'done';
            this.lineLength = 0;
          } else if (b !== 0x0d) this.lineLength++;
          continue;
      }
    }
    return 'going';
  }
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

interface HttpParser {
  getCurrentBuffer?: () => Buffer;
}

/**
 * Starts watching a chunked request's declared sizes (see chunkWatch); call it from the server's request
 * handler, before handing the request on, while the rest of the read that held its headers is still in
 * the parser's buffer. Nothing is watched when the request is not chunked, when its whole body is in
 * that read and within the limit, or when where the body starts cannot be told for sure (e.g. the same
 * request line twice in one read): then only the bytes received are counted, as before.
 */
export function watchChunkedBody(req: IncomingMessage, limit: number): void {
  const encoding = req.headers['transfer-encoding'];
  if (encoding === undefined || !CHUNKED.test(encoding)) return;
  const socket = req.socket as Socket & { parser?: HttpParser | null };
  const current = socket.parser?.getCurrentBuffer?.();
  if (current === undefined) return;
  const requestLine = Buffer.from(`${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`, 'latin1');
  const at = current.indexOf(requestLine);
  if (at === -1 || current.indexOf(requestLine, at + 1) !== -1) return;
  const headersEnd = current.indexOf('\r\n\r\n', at);
  if (headersEnd === -1) return;

  const scanner = new ChunkScanner(limit);
  const first = scanner.feed(current, headersEnd + 4);
  if (first === 'over') {
    watches.set(req, { over: true });
    return;
  }
  if (first !== 'going') return;
  const watch: ChunkWatch = { over: false };
  watches.set(req, watch);
  const stop = () => {
    socket.removeListener('data', onData);
    socket.removeListener('close', stop);
  };
  // Ahead of the parser's own listener: a size is seen before the parser waits for its bytes.
  const onData = (bytes: Buffer) => {
    const step = scanner.feed(bytes);
    if (step === 'going') return;
    stop();
    if (step === 'over') {
      watch.over = true;
      watch.onOver?.();
    }
  };
  socket.prependListener('data', onData);
  socket.once('close', stop);
}
