// Save-time validation of targeting conditions: every problem with its path, so a route can answer 400.
// Stricter than evaluation (GrowthBook's evaluator quietly answers false for these shapes).
import { compileRegex, isOperatorObject } from './condition.js';

const TYPES = new Set(['string', 'number', 'boolean', 'array', 'object', 'null', 'undefined']);
const ARRAY_OPS = new Set(['$in', '$nin', '$ini', '$nini', '$all', '$alli']);
const SCALAR_OPS = new Set(['$eq', '$ne', '$lt', '$lte', '$gt', '$gte']);
const VERSION_OPS = new Set(['$veq', '$vne', '$vgt', '$vgte', '$vlt', '$vlte']);

/** The problems of a condition, each naming its path (`targeting.plan.$in`); empty when it is valid. */
export function checkCondition(condition: unknown, path = 'targeting'): string[] {
  const problems: string[] = [];
  checkObj(condition, path, problems);
  return problems;
}

/** The saved-group keys a condition names (`$inGroup` / `$notInGroup`), each once. */
export function groupsOf(condition: unknown): string[] {
  const keys = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if ((k === '$inGroup' || k === '$notInGroup') && typeof x === 'string') keys.add(x);
        else walk(x);
      }
    }
  };
  walk(condition);
  return [...keys];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkObj(c: unknown, path: string, out: string[]): void {
  if (!isPlainObject(c)) {
    out.push(`${path} must be an object (a condition)`);
    return;
  }
  for (const [k, v] of Object.entries(c)) {
    const p = `${path}.${k}`;
    if (k === '$and' || k === '$or' || k === '$nor') {
      if (!Array.isArray(v)) out.push(`${p} needs an array of conditions`);
      else for (const [i, x] of v.entries()) checkObj(x, `${p}[${i}]`, out);
    } else if (k === '$not') checkObj(v, p, out);
    // GrowthBook reads any other top-level key as an attribute path; `$groups` is the one its SDKs use
    // (the legacy groups attribute), so it is the one `$` name taken as an attribute here, not as a typo.
    else if (k.startsWith('$') && k !== '$groups')
      out.push(`${p}: unknown operator ${k} at the top of a condition`);
    else if (k === '' || k.split('.').some((s) => s === ''))
      out.push(`${p}: an attribute path has an empty part`);
    else checkValue(v, p, out);
  }
}

function checkValue(v: unknown, path: string, out: string[]): void {
  if (!isPlainObject(v)) return; // a literal: compared for equality
  const keys = Object.keys(v);
  if (keys.length === 0 || !keys.some((k) => k.startsWith('$'))) return; // an object literal
  if (!isOperatorObject(v)) {
    out.push(`${path} mixes operators and plain keys`);
    return;
  }
  for (const [op, arg] of Object.entries(v)) checkOperator(op, arg, `${path}.${op}`, out);
}

function checkOperator(op: string, arg: unknown, p: string, out: string[]): void {
  if (ARRAY_OPS.has(op)) {
    if (!Array.isArray(arg)) out.push(`${p} needs an array`);
    else if (op === '$all' || op === '$alli')
      for (const [i, x] of arg.entries()) checkValue(x, `${p}[${i}]`, out);
  } else if (SCALAR_OPS.has(op)) {
    if (typeof arg !== 'string' && typeof arg !== 'number' && typeof arg !== 'boolean' && arg !== null)
      out.push(`${p} needs a string, number, boolean or null`);
  } else if (VERSION_OPS.has(op)) {
    if (typeof arg !== 'string' && typeof arg !== 'number') out.push(`${p} needs a version string`);
  } else if (op === '$regex' || op === '$regexi') {
    if (typeof arg !== 'string') out.push(`${p} needs a string`);
    else if (!compileRegex(arg, op === '$regexi'))
      out.push(
        `${p}: the regex is invalid or uses what a linear-time engine cannot run (backreferences, lookaround)`,
      );
  } else if (op === '$inGroup' || op === '$notInGroup') {
    if (typeof arg !== 'string' || arg === '') out.push(`${p} needs a saved group key (a string)`);
  } else if (op === '$exists') {
    if (typeof arg !== 'boolean') out.push(`${p} needs true or false`);
  } else if (op === '$type') {
    if (typeof arg !== 'string' || !TYPES.has(arg)) out.push(`${p} needs one of ${[...TYPES].join(', ')}`);
  } else if (op === '$size') {
    if (typeof arg !== 'number' && !isOperatorObject(arg))
      out.push(`${p} needs a number or an operator object`);
    else checkValue(arg, p, out);
  } else if (op === '$elemMatch') {
    if (!isPlainObject(arg)) out.push(`${p} needs a condition or an operator object`);
    else if (isOperatorObject(arg)) checkValue(arg, p, out);
    else checkObj(arg, p, out);
  } else if (op === '$not') {
    checkValue(arg, p, out);
  } else out.push(`${p}: unknown operator ${op}`);
}
