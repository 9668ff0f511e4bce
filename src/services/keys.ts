// Managed API keys: created with a secret shown once, stored as a keyed hash, revoked; and the table the
// edge authenticates every request against (ADR 0015).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeTimeIdCursor, encodeTimeIdCursor } from '../core/cursor.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { type Actor, actorOf, type EventSource, keyCreated, keyRevoked } from '../core/events.js';
import { SLUG_PATTERN } from '../core/experiment.js';
import {
  type ApiKey,
  checkedScopes,
  type NewKeyInput,
  type Principal,
  principalOf,
  ROOT,
} from '../core/keys.js';
import type { KeyStore, StoredKey } from '../store/store.js';
import type { EventBus } from './events.js';

/** Managed keys start with this, so they are recognisable in code and logs (and by secret scanners). */
export const KEY_PREFIX = 'ask_';
/** What keys are hashed with when KEY_HASH_SECRET is not set (ADR 0015). */
export const DEFAULT_KEY_HASH_SECRET = 'agentsplit-api-keys-v1';
/** Characters of a key shown in lists: the prefix and the first 8 of the secret. */
const SHOWN = KEY_PREFIX.length + 8;
/** How often the last-use times collected in memory are written (ms). */
const USE_FLUSH_MS = 10_000;
/** Keys per page of GET /keys by default (as GET /experiments). */
export const DEFAULT_KEY_PAGE = 50;
const CURSOR_KIND = 'k';

export interface KeyListQuery {
  limit?: number;
  cursor?: string;
}

/** A live key as the edge holds it: what authentication and GET /keys/me need, without a store read. */
interface Entry {
  key: StoredKey;
  principal: Principal;
  hash: Buffer;
}

/** The live keys by keyed hash (authentication) and by id; how many live keys have each shown prefix. */
interface KeyMaps {
  byHash: Map<string, Entry>;
  byId: Map<string, Entry>;
  prefixes: Map<string, number>;
}

function emptyMaps(): KeyMaps {
  return { byHash: new Map(), byId: new Map(), prefixes: new Map() };
}

function entryOf(key: StoredKey): Entry {
  return { key, principal: principalOf(key), hash: Buffer.from(key.hash, 'base64url') };
}

function addEntry(maps: KeyMaps, entry: Entry): void {
  maps.byHash.set(entry.key.hash, entry);
  maps.byId.set(entry.key.id, entry);
  maps.prefixes.set(entry.key.prefix, (maps.prefixes.get(entry.key.prefix) ?? 0) + 1);
}

function removeEntry(maps: KeyMaps, entry: Entry): void {
  maps.byHash.delete(entry.key.hash);
  maps.byId.delete(entry.key.id);
  const left = (maps.prefixes.get(entry.key.prefix) ?? 1) - 1;
  if (left === 0) maps.prefixes.delete(entry.key.prefix);
  else maps.prefixes.set(entry.key.prefix, left);
}

/** A created key: the only time its secret is seen. */
export interface CreatedKey extends ApiKey {
  key: string;
}

export interface KeyDeps {
  store: KeyStore;
  /** The root key (API_KEY): every scope, every experiment. */
  rootKey: string;
  /** The HMAC key the secrets are hashed with (KEY_HASH_SECRET, or a fixed default). */
  hashSecret: string;
  newId: () => string;
  now: () => string;
  onError?: (err: unknown) => void;
  /** Where the events of committed changes are published (services/events.ts). */
  bus?: EventBus;
}

export class KeyService {
  /** The live keys this instance authenticates against. */
  private live: KeyMaps = emptyMaps();
  private readonly root: Buffer;
  /** Last use by key id (ms), not yet written. */
  private used = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  /**
   * Changes this instance made while a load was reading, one list per load in flight: replayed on the
   * snapshot, so a reload that raced a create or a revoke cannot drop the new key or revive the old one.
   */
  private readonly journals = new Set<Array<(maps: KeyMaps) => void>>();

  constructor(private readonly deps: KeyDeps) {
    if (deps.rootKey.length === 0) throw new Error('the root key must not be empty');
    this.root = Buffer.from(deps.rootKey, 'utf8');
    this.timer = setInterval(() => void this.flushUses(), USE_FLUSH_MS);
    this.timer.unref();
  }

  /** (Re)reads every live key: at start and when another instance changed keys or experiments. */
  async load(): Promise<void> {
    const journal: Array<(maps: KeyMaps) => void> = [];
    this.journals.add(journal);
    let keys: StoredKey[];
    try {
      keys = await this.deps.store.listKeys();
    } finally {
      this.journals.delete(journal);
    }
    const maps = emptyMaps();
    for (const key of keys) addEntry(maps, entryOf(key));
    for (const change of journal) change(maps);
    this.live = maps;
  }

  /** Applies a change to the live maps and to every snapshot being read. */
  private change(apply: (maps: KeyMaps) => void): void {
    apply(this.live);
    for (const journal of this.journals) journal.push(apply);
  }

  /**
   * Who presents this x-api-key, or null (401). The root key is compared in constant time; a managed key
   * is found by its keyed hash (so lookup time says nothing of the secret) and compared in constant time.
   */
  authenticate(presented: unknown): Principal | null {
    if (typeof presented !== 'string' || presented.length === 0) return null;
    if (this.isRoot(presented)) return ROOT;
    if (!presented.startsWith(KEY_PREFIX)) return null;
    const hash = this.hash(presented);
    const found = this.live.byHash.get(hash);
    if (found === undefined || !timingSafeEqual(Buffer.from(hash, 'base64url'), found.hash)) return null;
    this.used.set(found.key.id, Date.now());
    return found.principal;
  }

  /**
   * The prefix (as key lists show it) of the live managed key a presented key starts with, or undefined:
   * what a wrong key is throttled under besides its address (issue 34), so guessing one key is throttled
   * from any number of addresses.
   */
  livePrefixOf(presented: unknown): string | undefined {
    if (typeof presented !== 'string' || presented.length < SHOWN || !presented.startsWith(KEY_PREFIX))
      return undefined;
    const prefix = presented.slice(0, SHOWN);
    return this.live.prefixes.has(prefix) ? prefix : undefined;
  }

  /** Who a principal is in the history: its key's name as this instance holds it. */
  actorOf(principal: Principal): Actor {
    return actorOf(principal, (id) => this.live.byId.get(id)?.key.name);
  }

  private source(actor: Actor, at: string): EventSource {
    return { actor, at, newId: this.deps.newId };
  }

  async create(input: NewKeyInput, actor: Actor): Promise<CreatedKey> {
    const scopes = checkedScopes(input.scopes);
    const experiments = input.experiments === undefined ? null : [...new Set(input.experiments)].sort();
    for (const slug of experiments ?? []) {
      if (!SLUG_PATTERN.test(slug)) throw new ValidationError(`experiments: '${slug}' is not a valid slug`);
    }
    if (input.name.trim().length === 0) throw new ValidationError('name must not be blank');
    const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
    const stored: StoredKey = {
      id: this.deps.newId(),
      name: input.name,
      scopes,
      experiments,
      prefix: secret.slice(0, SHOWN),
      hash: this.hash(secret),
      rateLimitPerSecond: input.rateLimitPerSecond ?? null,
      createdAt: this.deps.now(),
      lastUsedAt: null,
    };
    const { hash: _hash, ...shown } = stored;
    const events = keyCreated(this.source(actor, stored.createdAt), shown);
    await this.deps.store.insertKey(stored, events);
    const entry = entryOf(stored);
    this.change((maps) => addEntry(maps, entry));
    this.deps.bus?.publish(events);
    return { ...shown, key: secret };
  }

  /** The live key with this id as this instance holds it (no store read), or undefined. */
  find(id: string): ApiKey | undefined {
    const entry = this.live.byId.get(id);
    if (entry === undefined) return undefined;
    const { hash: _hash, ...key } = entry.key;
    return key;
  }

  /**
   * A page of live keys in creation order, without secrets or hashes, each with its latest use (this
   * instance's, if newer); `nextCursor` is null on the last page. Reads one page from the store.
   */
  async list(q: KeyListQuery = {}): Promise<{ keys: ApiKey[]; nextCursor: string | null }> {
    const after = q.cursor === undefined ? undefined : decodeTimeIdCursor(CURSOR_KIND, q.cursor);
    const limit = q.limit ?? DEFAULT_KEY_PAGE;
    // One row more than the page tells whether another page follows.
    const rows = await this.deps.store.listKeyPage(
      after === undefined ? undefined : { createdAt: after.at, id: after.id },
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      keys: page.map((key) => this.shown(key)),
      nextCursor:
        rows.length > limit && last !== undefined
          ? encodeTimeIdCursor(CURSOR_KIND, { at: last.createdAt, id: last.id })
          : null,
    };
  }

  /** A stored key as listed: no hash, and this instance's last use when it is newer. */
  private shown({ hash: _hash, ...key }: StoredKey): ApiKey {
    const local = this.used.get(key.id);
    const localIso = local === undefined ? null : new Date(local).toISOString();
    const lastUsedAt =
      localIso !== null && (key.lastUsedAt === null || localIso > key.lastUsedAt) ? localIso : key.lastUsedAt;
    return { ...key, lastUsedAt };
  }

  async revoke(id: string, actor: Actor): Promise<void> {
    const at = this.deps.now();
    let events: ReturnType<typeof keyRevoked> = [];
    const made = (revoked: { id: string; name: string }) => {
      events = keyRevoked(this.source(actor, at), revoked);
      return events;
    };
    if (!(await this.deps.store.revokeKey(id, at, made))) {
      throw new NotFoundError(`no key with id '${id}' (or it is revoked already)`);
    }
    this.change((maps) => {
      const entry = maps.byId.get(id);
      if (entry !== undefined) removeEntry(maps, entry);
    });
    this.used.delete(id);
    this.deps.bus?.publish(events);
  }

  /** Writes the last-use times gathered since the last flush (also at shutdown). */
  async flushUses(): Promise<void> {
    if (this.used.size === 0) return;
    const uses = [...this.used].map(([id, ms]) => ({ id, at: new Date(ms).toISOString() }));
    this.used = new Map();
    try {
      await this.deps.store.recordKeyUse(uses);
    } catch (err) {
      this.deps.onError?.(err);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushUses();
  }

  /**
   * Constant time in the key's contents; a candidate of another length is refused without comparing,
   * which reveals only the root key's length (as Go's subtle.ConstantTimeCompare does).
   */
  private isRoot(presented: string): boolean {
    if (Buffer.byteLength(presented, 'utf8') !== this.root.length) return false;
    return timingSafeEqual(Buffer.from(presented, 'utf8'), this.root);
  }

  private hash(secret: string): string {
    return createHmac('sha256', this.deps.hashSecret).update(secret).digest('base64url');
  }
}
