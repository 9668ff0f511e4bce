// The dashboard's only way to the server: the public JSON API, with the key in the x-api-key header.

export class ApiError extends Error {
  /** `message` is the API's own {"error"} text, so it can be shown as it is. */
  constructor(status, message, retryAfter = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

async function failure(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON (a proxy's page): keep the status line
  }
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, message, Number.isFinite(retry) && retry > 0 ? retry : null);
}

/** `{ get, post, patch, del, blob }` for one key; each rejects with ApiError on a non-2xx answer. */
export function createApi(key) {
  async function send(method, path, body) {
    const headers = { 'x-api-key': key };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'the server cannot be reached; is it running?');
    }
    if (!res.ok) throw await failure(res);
    return res;
  }
  const json = async (method, path, body) => {
    const res = await send(method, path, body);
    return res.status === 204 ? null : res.json();
  };
  return {
    get: (path) => json('GET', path),
    post: (path, body) => json('POST', path, body),
    patch: (path, body) => json('PATCH', path, body),
    del: (path) => json('DELETE', path),
    /** For downloads that need the key header, which a plain link cannot send. */
    blob: async (path) => (await send('GET', path)).blob(),
  };
}

/** A path with a query string; undefined, null and '' values are left out. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** `/experiment/<slug>` with the slug escaped; `rest` is appended as is. */
export function experimentPath(slug, rest = '') {
  return `/experiment/${encodeURIComponent(slug)}${rest}`;
}
