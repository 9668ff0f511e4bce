// The definitions clients assign with in-process (ADR 0019): every running experiment a key may see,
// with what the draw and the assignment id need, and an entity tag so that an unchanged set costs a 304.
//
// Built once per change, not per request (issue 24): each running experiment's definition is
// serialized (and hashed) once per change, its gzip made once on first demand; the answer for a set of
// experiments is those bytes laid end to end, never copied, so a 304 is a lookup and a full fetch
// writes bytes that are already there, however many fetch at once.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import type { SavedGroups } from '../core/condition.js';
import type { Layer, Override } from '../core/entry.js';
import { groupsUsed } from '../core/entry-rules.js';
import type { AssignmentMode } from '../core/experiment.js';
import type { JsonObject } from '../core/json.js';
import { type RolloutServing, servingOf } from '../core/rollout.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export interface Definition {
  slug: string;
  /** The number the assignment id's check is keyed with (the experiment's store id). */
  assignmentIdKey: number;
  version: number;
  assignment: AssignmentMode;
  seed: string;
  variants: { key: string; trafficPercent: number; payload: JsonObject }[];
  /** Who enters (ADR 0038); the default variant resolved (the first when the experiment names none). */
  targeting: JsonObject | null;
  coverage: number;
  layer: Layer | null;
  overrides: Override[];
  defaultVariant: string;
  /**
   * A rollout's split in place of the variants' weights (issue 38): units whose hashV2(seed, id) is below
   * percent / 100 get `variant`, the others `control`; null when no rollout decides.
   */
  rollout: RolloutServing | null;
}

/** Bytes made ahead, sent as they are: `chunks` in order, `length` bytes in all. */
export interface Bytes {
  chunks: readonly Buffer[];
  length: number;
}

/** The answer for one set of experiments: its tag, and its bytes (plain or gzip) made on demand. */
export interface DefinitionsAnswer {
  /** A strong entity tag of the plain JSON `{"experiments": [...]}`, sorted by slug. */
  etag: string;
  /** The JSON. */
  identity(): Bytes;
  /** The same JSON as one gzip member (made once per set and change, off the event loop). */
  gzip(): Promise<Bytes>;
}

/** Answers kept per change for different sets of experiments (keys limited to some of them). */
const MAX_SETS = 256;

const PREFIX = Buffer.from('{"experiments":[');
const COMMA = Buffer.from(',');
/** Between the experiments and the saved groups they use (`{key: [values]}`), and the end. */
const MIDDLE = Buffer.from('],"groups":');
const END = Buffer.from('}');

// A gzip member is a header, deflate blocks, and a trailer (RFC 1952). Each piece is compressed alone
// and ended with a sync flush (byte-aligned, not final), so pieces compressed once can be laid end to
// end in any order and set; an empty final block and the trailer (CRC-32 and length of the whole
// JSON) close the member.
const SYNC_FLUSH = { finishFlush: constants.Z_SYNC_FLUSH };
const deflatePiece = promisify<Buffer, { finishFlush: number }, Buffer>(deflateRaw);
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
const Z_PREFIX = deflateRawSync(PREFIX, SYNC_FLUSH);
const Z_COMMA = deflateRawSync(COMMA, SYNC_FLUSH);
const Z_MIDDLE = deflateRawSync(MIDDLE, SYNC_FLUSH);
const Z_END_BRACE = deflateRawSync(END, SYNC_FLUSH);
const Z_END = deflateRawSync(Buffer.alloc(0));

/** One running experiment's definition, serialized once. */
interface Piece {
  id: number;
  slug: string;
  version: number;
  /** The experiment's updatedAt: any change (overrides and the default variant make no new version). */
  updatedAt: string;
  /** Its rollout's id and version of moves ('' without one): each move serializes it again. */
  rollout: string;
  /** The saved groups its conditions name. */
  groups: string[];
  json: Buffer;
  /** SHA-256 of `json`: the tags of the sets it is in are made from these. */
  hash: Buffer;
  /** `json` compressed (sync-flushed raw deflate), made on first demand. */
  deflated?: Promise<Buffer>;
}

/** What tells one state of an experiment's rollout from another. */
const rolloutKey = (live: LiveExperiment) =>
  live.rollout ? `${live.rollout.id}/${live.rollout.version}` : '';

function pieceOf(live: LiveExperiment): Piece {
  const { id, experiment: e } = live;
  const definition: Definition = {
    slug: e.slug,
    assignmentIdKey: id,
    version: e.version,
    assignment: e.assignment,
    seed: e.seed,
    variants: e.variants.map((v) => ({ key: v.key, trafficPercent: v.trafficPercent, payload: v.payload })),
    targeting: e.targeting,
    coverage: e.coverage,
    layer: e.layer,
    overrides: e.overrides,
    defaultVariant: e.defaultVariant ?? e.variants[0]!.key,
    rollout: servingOf(live.rollout?.rollout, e.version),
  };
  const json = Buffer.from(JSON.stringify(definition));
  return {
    id,
    slug: e.slug,
    version: e.version,
    updatedAt: e.updatedAt,
    rollout: rolloutKey(live),
    groups: groupsUsed(e),
    json,
    hash: createHash('sha256').update(json).digest(),
  };
}

function deflated(piece: Piece): Promise<Buffer> {
  piece.deflated ??= deflatePiece(piece.json, SYNC_FLUSH).catch((err: unknown) => {
    piece.deflated = undefined; // tried again on the next demand
    throw err;
  });
  return piece.deflated;
}

class Answer implements DefinitionsAnswer {
  readonly etag: string;
  private plain: Bytes | undefined;
  private compressed: Promise<Bytes> | undefined;

  private readonly groups: Buffer;

  constructor(
    private readonly pieces: readonly Piece[],
    groups: SavedGroups,
  ) {
    const used = [...new Set(pieces.flatMap((p) => p.groups))].sort();
    this.groups = Buffer.from(
      JSON.stringify(Object.fromEntries(used.map((k) => [k, [...(groups.get(k) ?? [])]]))),
    );
    // The body is fixed framing around the pieces in order and the groups: their hashes name it.
    const h = createHash('sha256');
    for (const p of pieces) h.update(p.hash);
    h.update(this.groups);
    this.etag = `"${h.digest('base64url').slice(0, 27)}"`;
  }

  identity = (): Bytes => {
    if (this.plain === undefined) {
      const chunks: Buffer[] = [PREFIX];
      this.pieces.forEach((p, i) => {
        if (i > 0) chunks.push(COMMA);
        chunks.push(p.json);
      });
      chunks.push(MIDDLE, this.groups, END);
      this.plain = { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
    }
    return this.plain;
  };

  gzip = (): Promise<Bytes> => {
    this.compressed ??= this.compress().catch((err: unknown) => {
      this.compressed = undefined;
      throw err;
    });
    return this.compressed;
  };

  private async compress(): Promise<Bytes> {
    const plain = this.identity();
    let crc = 0;
    for (const c of plain.chunks) crc = crc32(c, crc);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(plain.length % 2 ** 32, 4);
    const bodies = await Promise.all(this.pieces.map(deflated));
    const groups = await deflatePiece(this.groups, SYNC_FLUSH);
    const chunks: Buffer[] = [GZIP_HEADER, Z_PREFIX];
    bodies.forEach((b, i) => {
      if (i > 0) chunks.push(Z_COMMA);
      chunks.push(b);
    });
    chunks.push(Z_MIDDLE, groups, Z_END_BRACE, Z_END, trailer);
    return { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
  }
}

/** A set of slugs as a map key; `*` (never a slug) for every experiment. */
const setKeys = new WeakMap<ReadonlySet<string>, string>();
function setKey(allowed: ReadonlySet<string> | null): string {
  if (allowed === null) return '*';
  let key = setKeys.get(allowed);
  if (key === undefined) {
    key = [...allowed].sort().join('\n');
    setKeys.set(allowed, key);
  }
  return key;
}

/**
 * The definitions answers, kept until the experiment table changes (its revision moves). A definition
 * is serialized again only when its experiment changed (its updatedAt moved: overrides and the default
 * variant change it without a new version); slug, assignment and seed never change.
 */
export class DefinitionsService {
  private revision = -1;
  private pieces = new Map<number, Piece>();
  /** The running experiments' pieces, sorted by slug. */
  private running: Piece[] = [];
  private readonly answers = new Map<string, Answer>();

  constructor(
    private readonly experiments: Pick<ExperimentCache, 'serving' | 'revision'>,
    private readonly groups: () => SavedGroups = () => new Map(),
  ) {}

  /** The running experiments a key limited to `allowed` (null: every experiment) may see. */
  answer(allowed: ReadonlySet<string> | null): DefinitionsAnswer {
    this.refresh();
    const key = setKey(allowed);
    let answer = this.answers.get(key);
    if (answer === undefined) {
      const pieces = allowed === null ? this.running : this.running.filter((p) => allowed.has(p.slug));
      answer = new Answer(pieces, this.groups());
      if (this.answers.size >= MAX_SETS) this.answers.delete(this.answers.keys().next().value!);
      this.answers.set(key, answer);
    }
    return answer;
  }

  private refresh(): void {
    const revision = this.experiments.revision;
    if (revision === this.revision) return;
    const pieces = new Map<number, Piece>();
    for (const live of this.experiments.serving()) {
      const known = this.pieces.get(live.id);
      const e = live.experiment;
      const same =
        known?.version === e.version &&
        known.updatedAt === e.updatedAt &&
        known.slug === e.slug &&
        known.rollout === rolloutKey(live);
      pieces.set(live.id, same ? known : pieceOf(live));
    }
    this.pieces = pieces;
    this.running = [...pieces.values()].sort((a, b) => (a.slug < b.slug ? -1 : 1));
    this.answers.clear();
    this.revision = revision;
  }
}
