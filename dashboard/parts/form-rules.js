// The form's own checks, and where an API error belongs: the API names fields in two styles,
// "variants[1].key must be …" (the service) and "body/variants/1/trafficPercent must be number" (the schema).

/** The weights as numbers and whether they sum to 100 (the API's tolerance, 1e-9). */
export function weightSum(rows) {
  const total = rows.reduce((a, r) => a + (Number(r.weight) || 0), 0);
  return { total: Math.round(total * 1e6) / 1e6, ok: Math.abs(total - 100) <= 1e-9 };
}

/** What the form would send for variants, or the errors that keep it from being sent. */
export function variantsFrom(rows) {
  const errors = {};
  const seen = new Set();
  const variants = rows.map((r, i) => {
    const key = r.key.trim();
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(key))
      errors[`variants.${i}.key`] = '1-64 characters of A-Z a-z 0-9 . _ -';
    else if (seen.has(key)) errors[`variants.${i}.key`] = `'${key}' is used by another variant`;
    seen.add(key);
    let payload = null;
    try {
      payload = JSON.parse(r.payload);
    } catch {
      // reported below
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      errors[`variants.${i}.payload`] = 'The payload must be a JSON object: { … }';
    }
    const weight = r.weight.trim() === '' ? Number.NaN : Number(r.weight);
    if (!(weight >= 0 && weight <= 100)) errors[`variants.${i}.trafficPercent`] = 'A number from 0 to 100';
    return { key, payload, trafficPercent: weight };
  });
  // Shown by the sum line under the weights, which says what is left or too much.
  if (!weightSum(rows).ok) errors.weights = 'The weights must sum to 100.';
  return { variants, errors };
}

/** The form field an API error message is about ('variants.1.key', 'slug', …), or null for the form. */
export function fieldOf(message) {
  const schema = /^body\/(\w+)(?:\/(\d+)(?:\/(\w+))?)?/.exec(message);
  if (schema) return [schema[1], schema[2], schema[3]].filter((x) => x !== undefined).join('.');
  const service = /^(variants|metrics)\[(\d+)\](?:\.(\w+))?/.exec(message);
  if (service) return [service[1], service[2], service[3]].filter((x) => x !== undefined).join('.');
  if (/^variants'? /.test(message)) return 'variants';
  if (/^(slug\b|an experiment with slug)/.test(message)) return 'slug';
  if (/^(name|description|seed|assignment)\b/.test(message)) return message.split(/\b/)[0];
  return null;
}
