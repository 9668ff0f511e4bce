// Targeting conditions: GrowthBook's condition language, compiled once into closures (semantics of GrowthBook's
// mongrule.ts, MIT, commit 8f1db445). Pure: no I/O. Regexes run on re2js (linear time), never on JS RegExp:
// a pattern re2js cannot express (backreferences, lookaround) is refused by checkCondition and evaluates to
// false, as GrowthBook's evaluator does for a pattern that throws. No vendored case needs such a pattern.
import { RE2JS } from 're2js';
import { paddedVersionString } from './versions.js';

/** Saved groups by key: O(1) membership. Members compare strictly (1 and "1" differ), as GrowthBook's `includes`. */
export type SavedGroups = ReadonlyMap<string, ReadonlySet<string | number>>;
type Test = (value: unknown, groups: SavedGroups) => boolean;
type ObjTest = (obj: unknown, groups: SavedGroups) => boolean;
export interface CompiledCondition {
  matches(attributes: Record<string, unknown>, groups: SavedGroups): boolean;
}

const EMPTY: ReadonlySet<string | number> = new Set();

export function compileCondition(condition: unknown): CompiledCondition {
  const test = compileObj(condition);
  return { matches: (attributes, groups) => test(attributes, groups) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** GrowthBook: an object whose keys all start with `$` (and has at least one). */
export function isOperatorObject(v: unknown): boolean {
  if (!isObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k[0] === '$');
}

function all(tests: ObjTest[]): ObjTest {
  if (tests.length === 1) return tests[0]!;
  return (obj, g) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(obj, g)) return false;
    return true;
  };
}

function compileObj(condition: unknown): ObjTest {
  if (!isObject(condition)) return () => true; // GrowthBook iterates no entries
  const tests: ObjTest[] = [];
  for (const [k, v] of Object.entries(condition)) {
    if (k === '$or' || k === '$nor') {
      const or = compileOr(v);
      tests.push(k === '$or' ? or : (o, g) => !or(o, g));
    } else if (k === '$and') {
      const list = Array.isArray(v) ? v.map(compileObj) : null;
      tests.push(list?.length ? all(list) : () => true); // GrowthBook loops `i < undefined`: a non-array passes
    } else if (k === '$not') {
      const inner = compileObj(v);
      tests.push((o, g) => !inner(o, g));
    } else {
      const parts = k.split('.');
      const valueTest = compileValue(v, false);
      tests.push((o, g) => valueTest(getPath(o, parts), g));
    }
  }
  return tests.length ? all(tests) : () => true;
}

function compileOr(v: unknown): ObjTest {
  if (!Array.isArray(v)) return () => true; // GrowthBook: `!conditions.length` is true for a non-array object
  if (!v.length) return () => true;
  const list = v.map(compileObj);
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
  const tests: Test[] = Object.entries(condition as Record<string, unknown>).map(([op, expected]) =>
    compileOperator(op, expected),
  );
  return all(tests);
}

function compileOperator(op: string, expected: unknown): Test {
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
    // JS relational comparison, coercion included (the casts only quiet the type checker), as GrowthBook.
    case '$lt':
      return (v) => (v as number) < (expected as number);
    case '$lte':
      return (v) => (v as number) <= (expected as number);
    case '$gt':
      return (v) => (v as number) > (expected as number);
    case '$gte':
      return (v) => (v as number) >= (expected as number);
    case '$exists':
      return expected ? (v) => v != null : (v) => v == null;
    case '$in':
    case '$nin':
    case '$ini':
    case '$nini': {
      if (!Array.isArray(expected)) return () => false;
      const folded = op === '$ini' || op === '$nini';
      const set = new Set<unknown>(folded ? expected.map(fold) : expected);
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
        return isIn(v, (x) => set.has(x as string)) !== negate;
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
      if (!Array.isArray(expected)) return () => false;
      const list = expected.map((e) => compileValue(e, op === '$alli'));
      return (v, g) => {
        if (!Array.isArray(v)) return false;
        for (const t of list) if (!v.some((x) => t(x, g))) return false;
        return true;
      };
    }
    case '$regex':
    case '$regexi': {
      const re = compileRegex(expected, op === '$regexi');
      if (!re) return () => false;
      // The last text and its answer: attributes such as a locale or a plan repeat from call to call, and
      // re2js costs about 0.5 µs a test (measured) where the rest of a 5-clause condition costs 0.3.
      let lastText: string | undefined;
      let lastAnswer = false;
      return (v) => {
        const text = String(v); // JS RegExp.test coerces: null → "null"
        if (text === lastText) return lastAnswer;
        let answer = false;
        try {
          answer = re.test(text);
        } catch {
          answer = false;
        }
        lastText = text;
        lastAnswer = answer;
        return answer;
      };
    }
    case '$type':
      return (v) => typeOf(v) === expected;
    default:
      return () => false; // unknown operator: false, as GrowthBook (refused at save by checkCondition)
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
  switch (op) {
    case '$veq':
      return (v) => paddedVersionString(v) === exp;
    case '$vne':
      return (v) => paddedVersionString(v) !== exp;
    case '$vgt':
      return (v) => paddedVersionString(v) > exp;
    case '$vgte':
      return (v) => paddedVersionString(v) >= exp;
    case '$vlt':
      return (v) => paddedVersionString(v) < exp;
    default:
      return (v) => paddedVersionString(v) <= exp;
  }
}

function compileElemMatch(expected: unknown): Test {
  const check: Test = isOperatorObject(expected) ? compileValue(expected, false) : compileObj(expected);
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

/** The linear-time form of a JS regex source, or null when re2js cannot express it (or it is not a string). */
export function compileRegex(pattern: unknown, insensitive: boolean): RE2JS | null {
  if (typeof pattern !== 'string') return null;
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern), insensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch {
    return null;
  }
}
