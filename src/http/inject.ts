// inject(): a request into the same pipeline a socket's request enters, in-process, without a socket
// (ADR 0022). A fake request and response (light-my-request, what Fastify's own inject uses) stand in
// for Node's; everything from the early gates to the writer is the code that serves real clients.
import type { IncomingMessage, RequestListener } from 'node:http';
import lightMyRequest from 'light-my-request';

export type InjectOptions = lightMyRequest.InjectOptions;
export type InjectResponse = lightMyRequest.Response;
/** `relayed`: made on behalf of a request the rate limit already counted (an MCP tool call's). */
export type Inject = (options: InjectOptions | string, relayed?: boolean) => Promise<InjectResponse>;

/**
 * Requests inject() made with `relayed`: the pipeline does not count them against the key's rate limit,
 * their outer request was (otherwise one MCP tool call would cost two or three). Only in-process code
 * can put a request here; nothing a socket sends can.
 */
const RELAYED = new WeakSet<IncomingMessage>();

export function isRelayed(req: IncomingMessage): boolean {
  return RELAYED.has(req);
}

/** `listener`: the node adapter's request listener (so the pipeline, and its fallback for the docs). */
export function createInject(listener: RequestListener): Inject {
  return (options, relayed = false) => {
    const url = typeof options === 'string' ? options : options.url;
    if (typeof url !== 'string') return lightMyRequest(listener, options);
    // The URL as sent, as a socket delivers it: light-my-request resolves it (`/a/..` → `/`) and
    // percent-encodes what a URL parser would.
    return lightMyRequest((req, res) => {
      req.url = url;
      if (relayed) RELAYED.add(req);
      listener(req, res);
    }, options);
  };
}
