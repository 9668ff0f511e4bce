// Targeting conditions, evaluated locally: the semantics of GrowthBook's mongrule.ts (MIT, GrowthBook, Inc.,
// packages/sdk-js/src/mongrule.ts, commit 8f1db445), compiled once. Regexes run on re2js (linear time, the
// server's engine and translation), never on JS RegExp: a pattern re2js cannot express (backreferences,
// lookaround) evaluates to false, as GrowthBook does for a pattern that throws. No vendored case needs one.
import { RE2JS } from 're2js';

/** Saved groups by key: O(1) membership, members compared as `Array.prototype.includes` does. */
export type SavedGroups = ReadonlyMap<string, ReadonlySet<unknown>>;
type Test = (value: unknown, groups: SavedGroups) => boolean;
export interface CompiledCondition {
  matches(attributes: Record<string, unknown>, groups?: SavedGroups): boolean;
}

const NO_GROUPS: SavedGroups = new Map();
const EMPTY: ReadonlySet<unknown> = new Set();
const TRUE: Test = () => true;
const FALSE: Test = () => false;

/** Saved groups from their JSON form (`{ key: [ids] }`), prepared once. */
export function savedGroups(values: Record<string, readonly unknown[]>): SavedGroups {
  return new Map(Object.entries(values).map(([k, v]) => [k, new Set(Array.isArray(v) ? v : [])]));
}

export function compileCondition(condition: unknown): CompiledCondition {
  const test = compileObj(condition);
  return {
    matches: (attributes, groups = NO_GROUPS) => {
      try {
        return test(attributes, groups);
      } catch {
        return false; // where GrowthBook throws (a null condition): no match
      }
    },
  };
}

function all(tests: Test[]): Test {
  if (tests.length === 0) return TRUE;
  if (tests.length === 1) return tests[0]!;
  return (v, g) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(v, g)) return false;
    return true;
  };
}

function isOperatorObject(v: unknown): boolean {
  const keys = Object.keys(v as object);
  return keys.length > 0 && keys.every((k) => k[0] === '$');
}

function compileObj(condition: unknown): Test {
  if (condition == null) {
    return () => {
      throw new TypeError('a condition is null');
    };
  }
  const tests: Test[] = [];
  for (const [k, v] of Object.entries(condition)) {
    if (k === '$or' || k === '$nor') {
      const or = compileOr(v);
      tests.push(k === '$or' ? or : (o, g) => !or(o, g));
    } else if (k === '$and') {
      tests.push(all(listOf(v).map(compileObj)));
    } else if (k === '$not') {
      const inner = compileObj(v);
      tests.push((o, g) => !inner(o, g));
    } else {
      const parts = k.split('.');
      const t = compileValue(v, false);
      tests.push((o, g) => t(getPath(o, parts), g));
    }
  }
  return all(tests);
}

/** GrowthBook's loops over `conditions.length`: non-arrays included (a string's characters, none for a number). */
function listOf(v: unknown): unknown[] {
  const like = v as ArrayLike<unknown>;
  const out: unknown[] = [];
  for (let i = 0; i < like.length; i++) {
    out.push(like[i]);
    if (like[i] == null) break; // GrowthBook throws here
  }
  return out;
}

function compileOr(v: unknown): Test {
  if (!(v as ArrayLike<unknown>).length) return TRUE;
  const list = listOf(v).map(compileObj);
  return (o, g) => {
    for (let i = 0; i < list.length; i++) if (list[i]!(o, g)) return true;
    return false;
  };
}

function getPath(obj: unknown, parts: string[]): unknown {
  let current: unknown = obj;
  for (let i = 0; i < parts.length; i++) {
    if (current && typeof current === 'object' && parts[i]! in current) {
      current = (current as Record<string, unknown>)[parts[i]!];
    } else return null;
  }
  return current;
}

function compileValue(condition: unknown, insensitive: boolean): Test {
  if (typeof condition === 'string') {
    if (insensitive) {
      const lower = condition.toLowerCase();
      return (v) => String(v).toLowerCase() === lower;
    }
    return (v) => `${v}` === condition;
  }
  if (typeof condition === 'number') return (v) => (v as number) * 1 === condition;
  if (typeof condition === 'boolean') return (v) => v !== null && !!v === condition;
  if (condition === null) return (v) => v === null;
  if (Array.isArray(condition) || !isOperatorObject(condition)) {
    const json = JSON.stringify(condition);
    return (v) => JSON.stringify(v) === json;
  }
  return all(Object.entries(condition as object).map(([op, expected]) => compileOperator(op, expected)));
}

function compileOperator(op: string, expected: unknown): Test {
  const e = expected as number; // JS relational comparison, coercion included, as GrowthBook
  switch (op) {
    case '$veq':
    case '$vne':
    case '$vgt':
    case '$vgte':
    case '$vlt':
    case '$vlte':
      return compileVersion(op, paddedVersionString(expected));
    case '$eq':
      return (v) => v === expected;
    case '$ne':
      return (v) => v !== expected;
    case '$lt':
      return (v) => (v as number) < e;
    case '$lte':
      return (v) => (v as number) <= e;
    case '$gt':
      return (v) => (v as number) > e;
    case '$gte':
      return (v) => (v as number) >= e;
    case '$exists':
      return expected ? (v) => v != null : (v) => v == null;
    case '$in':
    case '$nin':
    case '$ini':
    case '$nini': {
      if (!Array.isArray(expected)) return FALSE;
      const folded = op === '$ini' || op === '$nini';
      // `===` after folding never equals NaN; `includes` (and Set) does.
      const set = new Set(folded ? expected.map(fold).filter((x) => !Number.isNaN(x)) : expected);
      const has = folded ? (x: unknown) => set.has(fold(x)) : (x: unknown) => set.has(x);
      const negate = op === '$nin' || op === '$nini';
      return (v) => isIn(v, has) !== negate;
    }
    case '$inGroup':
    case '$notInGroup': {
      const key = String(expected);
      const negate = op === '$notInGroup';
      return (v, g) => {
        const set = g.get(key) ?? EMPTY;
        return isIn(v, (x) => set.has(x)) !== negate;
      };
    }
    case '$not': {
      const inner = compileValue(expected, false);
      return (v, g) => !inner(v, g);
    }
    case '$size': {
      const inner = compileValue(expected, false);
      return (v, g) => Array.isArray(v) && inner(v.length, g);
    }
    case '$elemMatch':
      return compileElemMatch(expected);
    case '$all':
    case '$alli': {
      if (!Array.isArray(expected)) return FALSE;
      const list = expected.map((x) => compileValue(x, op === '$alli'));
      return (v, g) => {
        if (!Array.isArray(v)) return false;
        for (const t of list) if (!v.some((x) => t(x, g))) return false;
        return true;
      };
    }
    case '$regex':
    case '$regexi': {
      const re = compileRegex(expected, op === '$regexi');
      if (!re) return FALSE;
      return (v) => {
        try {
          return re.test(String(v)); // as RegExp.test: null → "null"
        } catch {
          return false;
        }
      };
    }
    case '$type':
      return (v) => typeOf(v) === expected;
    default:
      return FALSE; // unknown operator
  }
}

function fold(x: unknown): unknown {
  return typeof x === 'string' ? x.toLowerCase() : x;
}

/** GrowthBook's isIn: an array attribute passes when any element is a member. */
function isIn(v: unknown, has: (x: unknown) => boolean): boolean {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (has(v[i])) return true;
    return false;
  }
  return has(v);
}

function compileVersion(op: string, exp: string): Test {
  if (op === '$veq') return (v) => paddedVersionString(v) === exp;
  if (op === '$vne') return (v) => paddedVersionString(v) !== exp;
  if (op === '$vgt') return (v) => paddedVersionString(v) > exp;
  if (op === '$vgte') return (v) => paddedVersionString(v) >= exp;
  if (op === '$vlt') return (v) => paddedVersionString(v) < exp;
  return (v) => paddedVersionString(v) <= exp;
}

function compileElemMatch(expected: unknown): Test {
  if (expected == null) {
    return (v) => {
      if (!Array.isArray(v)) return false;
      throw new TypeError('$elemMatch of null');
    };
  }
  const check = isOperatorObject(expected) ? compileValue(expected, false) : compileObj(expected);
  return (v, g) => {
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (v[i] && check(v[i], g)) return true;
    return false;
  };
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'object' || t === 'undefined'
    ? t
    : 'unknown';
}

/** GrowthBook's paddedVersionString: "v1.2.3-rc.1+b" → comparable string ("    1-    2-    3-rc-    1"). */
export function paddedVersionString(input: unknown): string {
  let s: unknown = typeof input === 'number' ? `${input}` : input;
  if (!s || typeof s !== 'string') s = '0';
  const parts = (s as string).replace(/(^v|\+.*$)/g, '').split(/[-.]/);
  if (parts.length === 3) parts.push('~');
  return parts.map((p) => (/^[0-9]+$/.test(p) ? p.padStart(5, ' ') : p)).join('-');
}

/** The linear-time form of a JS regex source, or null when re2js cannot express it (or it is not a string). */
export function compileRegex(pattern: unknown, insensitive: boolean): RE2JS | null {
  if (typeof pattern !== 'string') return null;
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern), insensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch {
    return null;
  }
}
