// A real server process (helpers/server.ts) on the backend AGENTSPLIT_TEST_BACKEND names: a SQLite file in a
// temp directory, or a fresh PostgreSQL database dropped on close. `call` sends JSON over HTTP with the key.
import { join } from 'node:path';
import { BACKEND, makeTempDir, removeTempDir } from './app.js';
import { createTestDatabase } from './postgres.js';
import { startServer } from './server.js';

const KEY = 'server-api-key-0123456789abcdef';

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field
  body: any;
}

export interface ServerApi {
  call(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<Answer>;
  close(): Promise<void>;
}

export async function startServerApi(name: string): Promise<ServerApi> {
  const dir = makeTempDir();
  const database = BACKEND === 'postgres' ? await createTestDatabase(name) : undefined;
  const url = database?.url ?? `sqlite:${join(dir, `${name}.db`)}`;
  const server = await startServer({ API_KEY: KEY, DATABASE_URL: url, DATA_DIR: dir });
  return {
    async call(method, path, body) {
      const res = await fetch(server.baseUrl + path, {
        method,
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      server.child.kill('SIGTERM');
      await server.exited;
      await database?.drop();
      removeTempDir(dir);
    },
  };
}
