// What test/ui-rollout.test.ts shares: waiting on the server (the monitor moves a rollout every second),
// traffic through the API (assign, then one logged result per user), and the ramp view in a state.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import type { Call } from './call.js';

/** The page reads the rollout every 5 s (REFRESH_MS), the monitor moves it every second. */
export const PAGE_WAIT_MS = 20_000;

/** Polls `check` every 100 ms until it holds; fails after `ms` saying `what`. */
export async function until(check: () => Promise<boolean>, what: string, ms = PAGE_WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `waited ${ms / 1000} s for ${what}`);
    await sleep(100);
  }
}

/** Assigns `users` users and logs one result each, `metrics(variant, i)` the i-th of its variant. */
export async function traffic(
  call: Call,
  slug: string,
  users: number,
  metrics: (variant: string, i: number) => Record<string, unknown>,
): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const results: unknown[] = [];
  for (let start = 0; start < users; start += 25) {
    const ids = Array.from({ length: Math.min(25, users - start) }, (_, i) => `user-${start + i}`);
    const assigned = await Promise.all(
      ids.map((userId) =>
        call<{ variant: string; assignmentId: string }>('POST', `/experiment/${slug}/assign`, { userId }),
      ),
    );
    for (const a of assigned) {
      const i = seen[a.variant] ?? 0;
      seen[a.variant] = i + 1;
      results.push({ variantKey: a.variant, assignmentId: a.assignmentId, metrics: metrics(a.variant, i) });
    }
  }
  await call('POST', `/experiment/${slug}/logs`, { results });
  return seen;
}

/** Waits for the ramp view in this state (the page reads the rollout again every 5 s). */
export async function rampIn(page: Page, state: string): Promise<void> {
  await page.locator(`[data-testid="rollout"][data-state="${state}"]`).waitFor({ timeout: PAGE_WAIT_MS });
}
