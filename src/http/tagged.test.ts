// Reading If-None-Match and Accept-Encoding for answers with an entity tag.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsGzip, gzipTag, matches } from './tagged.js';

describe('tagged answers', () => {
  it('the gzip form has its own tag, -gzip inside the quotes', () => {
    assert.equal(gzipTag('"abc"'), '"abc-gzip"');
  });

  it('If-None-Match matches a tag in a list, weak or strong, or *', () => {
    assert.ok(matches('"abc"', '"abc"'));
    assert.ok(matches('"x", W/"abc"', '"abc"'));
    assert.ok(matches('*', '"abc"'));
    assert.ok(!matches('"abcd"', '"abc"'));
    assert.ok(!matches(undefined, '"abc"'));
  });

  it('Accept-Encoding allows gzip by name or *, unless its q is 0', () => {
    for (const yes of [
      'gzip',
      'gzip, deflate, br',
      'br;q=1.0, GZIP;q=0.5',
      'x-gzip',
      '*',
      'deflate, *;q=0.1',
    ]) {
      assert.ok(acceptsGzip(yes), yes);
    }
    for (const no of [
      undefined,
      '',
      'identity',
      'br, deflate',
      'gzip;q=0',
      'gzip;q=0.000',
      '*;q=0',
      'gzip;q=0, *',
    ]) {
      assert.ok(!acceptsGzip(no), String(no));
    }
  });
});
