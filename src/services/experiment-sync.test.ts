import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startExperimentSync } from './experiment-sync.js';

test('a change that landed between reading the revision and loading is reloaded, not skipped', async () => {
  let revision = 6; // the revision read before the first load was 5; another instance changed it since
  let loads = 0;
  const sync = await startExperimentSync(
    { load: async () => void loads++ },
    { experimentsRevision: async () => revision },
    { loadedRevision: 5, pollMs: 10 },
  );
  try {
    for (let i = 0; i < 100 && loads === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(loads, 1);
    revision = 6;
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(loads, 1, 'no reload while the revision stays the same');
  } finally {
    await sync.stop();
  }
});

test('a notification triggers a check at once', async () => {
  let notify: () => void = () => {};
  let revision = 1;
  let loads = 0;
  const sync = await startExperimentSync(
    { load: async () => void loads++ },
    {
      experimentsRevision: async () => revision,
      watchExperiments: async (onChange) => {
        notify = onChange;
        return async () => {};
      },
    },
    { loadedRevision: 1, pollMs: 60_000 },
  );
  try {
    revision = 2;
    notify();
    for (let i = 0; i < 100 && loads === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(loads, 1);
  } finally {
    await sync.stop();
  }
});
