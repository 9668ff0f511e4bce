// Variants: their shape and validation rules (keys, payloads, traffic that sums to 100). Pure: no I/O.
import { ValidationError } from './errors.js';
import { isJsonObject, type JsonObject } from './json.js';

export interface Variant {
  key: string;
  payload: JsonObject;
  trafficPercent: number;
}

export const VARIANT_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_VARIANTS = 100;
export const TRAFFIC_SUM_TOLERANCE = 1e-9;

export function validateVariants(variants: unknown): Variant[] {
  if (!Array.isArray(variants) || variants.length < 1 || variants.length > MAX_VARIANTS) {
    throw new ValidationError(`variants must be an array of 1-${MAX_VARIANTS} variants`);
  }
  const seen = new Set<string>();
  let sum = 0;
  variants.forEach((v: unknown, i) => {
    const at = `variants[${i}]`;
    if (!isJsonObject(v)) throw new ValidationError(`${at} must be an object`);
    const { key, payload, trafficPercent } = v as Record<string, unknown>;
    if (typeof key !== 'string' || !VARIANT_KEY_PATTERN.test(key)) {
      throw new ValidationError(`${at}.key must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    }
    if (seen.has(key)) throw new ValidationError(`${at}.key '${key}' is used by another variant`);
    seen.add(key);
    if (!isJsonObject(payload)) throw new ValidationError(`${at}.payload must be a JSON object`);
    if (typeof trafficPercent !== 'number' || !Number.isFinite(trafficPercent)) {
      throw new ValidationError(`${at}.trafficPercent must be a finite number`);
    }
    if (trafficPercent < 0 || trafficPercent > 100) {
      throw new ValidationError(`${at}.trafficPercent must be between 0 and 100 (got ${trafficPercent})`);
    }
    sum += trafficPercent;
  });
  if (Math.abs(sum - 100) > TRAFFIC_SUM_TOLERANCE) {
    throw new ValidationError(`variants' trafficPercent must sum to 100 (got ${sum})`);
  }
  return (variants as Variant[]).map((v) => ({
    key: v.key,
    payload: v.payload,
    trafficPercent: v.trafficPercent,
  }));
}
