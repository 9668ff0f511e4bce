// The minute series of an experiment's first hours: read from the raw results and exposures (the rollups
// hold hours), bounded to MINUTE_WINDOW_HOURS from its first data so one read cannot hold the instance.
// Mean and proportion metrics, per call or (sticky) per user: each minute's moves of the users' sums are
// worked out from the results as core/unit-hours.ts works out each hour's. Ratios and quantiles read hours.

import { ValidationError } from '../core/errors.js';
import { type HourlyRollup, rollUpHours } from '../core/rollups.js';
import { minuteOf } from '../core/time.js';
import { applyUnitDeltasByHour, type HourlyUnitRollup, unitDeltasByHour } from '../core/unit-hours.js';
import type { HourlyExposure } from '../store/rollup-types.js';
import type { Store } from '../store/store.js';

export const MINUTE_WINDOW_HOURS = 6;
const PAGE = 1000;

/** The window interval=minute covers: from the first hour with data, MINUTE_WINDOW_HOURS long; 400 beyond. */
export function minuteWindow(hours: readonly string[]): { since: string; until: string } {
  if (hours.length === 0) throw new ValidationError('interval=minute: the experiment has no data yet');
  const sorted = [...hours].sort();
  const first = Date.parse(sorted[0]!);
  const spanHours = (Date.parse(sorted.at(-1)!) - first) / 3_600_000 + 1;
  if (spanHours > MINUTE_WINDOW_HOURS) {
    throw new ValidationError(
      `interval=minute covers an experiment's first ${MINUTE_WINDOW_HOURS} hours; its data spans ${spanHours} hours: read it with interval=hour or interval=day`,
    );
  }
  return {
    since: new Date(first).toISOString(),
    until: new Date(first + MINUTE_WINDOW_HOURS * 3_600_000).toISOString(),
  };
}

/**
 * One metric's sums and the exposures per minute in `window`, in the row shapes of the hourly read; with
 * `sticky`, also the per-user sums' moves per minute (each result joins its user's unit).
 */
export async function readMinutes(
  store: Pick<Store, 'listResults' | 'listExposures'>,
  experimentId: number,
  metric: string,
  window: { since: string; until: string },
  sticky = false,
): Promise<{ rows: HourlyRollup[]; exposures: HourlyExposure[]; units: HourlyUnitRollup[] }> {
  const rolled = [];
  let afterSeq: number | undefined;
  for (;;) {
    const page = await store.listResults({
      experimentId,
      since: window.since,
      until: window.until,
      limit: PAGE,
      ...(afterSeq !== undefined ? { afterSeq } : {}),
    });
    for (const r of page.results) {
      const value = r.feedback[metric] ?? r.metrics?.[metric];
      if (value === undefined || value === null) continue;
      rolled.push({
        experimentId,
        version: r.experimentVersion,
        variantKey: r.variantKey,
        metrics: { [metric]: value },
        overCap: null,
        unitUserId: sticky ? r.userId : null,
        hour: minuteOf(r.createdAt),
      });
    }
    if (!page.hasMore || page.lastSeq === null) break;
    afterSeq = page.lastSeq;
  }
  const counts = new Map<string, HourlyExposure>();
  for (const e of await store.listExposures(experimentId)) {
    if (e.createdAt < window.since || e.createdAt >= window.until) continue;
    const hour = minuteOf(e.createdAt);
    const key = `${hour}\u0000${e.version}\u0000${e.variantKey}`;
    const c = counts.get(key);
    if (c) c.n += 1;
    else counts.set(key, { hour, version: e.version, variantKey: e.variantKey, n: 1 });
  }
  const units = sticky ? applyUnitDeltasByHour(unitDeltasByHour(rolled), new Map()).hourly : [];
  return { rows: rollUpHours(rolled), exposures: [...counts.values()], units };
}
