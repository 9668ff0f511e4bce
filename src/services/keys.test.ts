// A reload of the key table that races this instance's own create or revoke must not undo it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROOT_ACTOR } from '../core/events.js';
import type { KeyStore, StoredKey } from '../store/store.js';
import { KeyService } from './keys.js';

/** Keys in memory, as the SQL store keeps them (revoked keys drop out of listKeys). */
class MemoryKeys implements KeyStore {
  private readonly keys = new Map<string, StoredKey>();
  async listKeys(): Promise<StoredKey[]> {
    return [...this.keys.values()];
  }
  async listKeyPage(): Promise<StoredKey[]> {
    return [...this.keys.values()];
  }
  async insertKey(key: StoredKey): Promise<void> {
    this.keys.set(key.id, key);
  }
  async revokeKey(id: string): Promise<boolean> {
    return this.keys.delete(id);
  }
  async recordKeyUse(): Promise<void> {}
}

function service(store: KeyStore): KeyService {
  let n = 0;
  return new KeyService({
    store,
    rootKey: 'root-key',
    hashSecret: 'test',
    newId: () => `key-${++n}`,
    now: () => new Date().toISOString(),
  });
}

/** Holds the next listKeys answer until `release` is called: a reload caught mid-read. */
function holdNextList(store: KeyStore): { release: () => void } {
  const real = store.listKeys.bind(store);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  store.listKeys = async () => {
    store.listKeys = real;
    const snapshot = await real();
    await gate;
    return snapshot;
  };
  return { release };
}

test('a key created while a reload reads is still accepted after the reload', async () => {
  const store = new MemoryKeys();
  const keys = service(store);
  await keys.load();
  const held = holdNextList(store);
  const reloading = keys.load();
  const created = await keys.create({ name: 'new', scopes: ['read'] }, ROOT_ACTOR);
  held.release();
  await reloading;
  assert.equal(keys.authenticate(created.key)?.id, created.id);
  assert.equal(keys.find(created.id)?.name, 'new');
  await keys.close();
});

test('a key revoked while a reload reads stays revoked after the reload', async () => {
  const store = new MemoryKeys();
  const keys = service(store);
  const created = await keys.create({ name: 'old', scopes: ['read'] }, ROOT_ACTOR);
  const held = holdNextList(store);
  const reloading = keys.load();
  await new Promise((r) => setImmediate(r));
  await keys.revoke(created.id, ROOT_ACTOR);
  held.release();
  await reloading;
  assert.equal(keys.authenticate(created.key), null);
  assert.equal(keys.find(created.id), undefined);
  await keys.close();
});
