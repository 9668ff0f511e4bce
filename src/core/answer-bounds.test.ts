import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkFigures, checkPoints, MAX_ANSWER_FIGURES } from './answer-bounds.js';
import { UnprocessableError } from './errors.js';

test('an analysis up to the bound passes; past it, 422 names the product and how to narrow it', () => {
  checkFigures({ metrics: 200, variants: 50, segments: 1 }); // exactly 20,000
  assert.equal(200 * 50 * 2, MAX_ANSWER_FIGURES);
  assert.throws(
    () => checkFigures({ metrics: 200, variants: 50, segments: 47 }),
    (err: unknown) =>
      err instanceof UnprocessableError &&
      err.status === 422 &&
      /480,000 figures \(200 metrics × 50 variants × 48 \(the whole and 47 segment values\)\)/.test(
        err.message,
      ) &&
      /segmentValues=N/.test(err.message),
  );
  assert.throws(
    () => checkFigures({ metrics: 201, variants: 100, segments: 0 }),
    (err: unknown) =>
      err instanceof UnprocessableError &&
      /version=N/.test(err.message) &&
      !/segmentValues/.test(err.message),
  );
});

test('a time series past the bound is refused, per hour pointing to days', () => {
  checkPoints({ periods: 400, variants: 50, interval: 'hour' });
  assert.throws(() => checkPoints({ periods: 401, variants: 50, interval: 'hour' }), /interval=day/);
  assert.throws(() => checkPoints({ periods: 2000, variants: 11, interval: 'day' }), /22,000 points/);
});
