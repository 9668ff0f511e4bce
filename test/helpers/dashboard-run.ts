// A dashboard test's setup: a real server process on its own SQLite file and headless Chromium, started
// before the file's tests and closed after them (server, browser and files), with a JSON call for setup.
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeTempDir, removeTempDir } from './app.js';
import { launchBrowser } from './browser.js';
import { type Call, jsonCall } from './call.js';
import { type ServerProcess, startServer } from './server.js';

export interface DashboardRun {
  /** The server's base URL (set once `before` ran). */
  readonly base: string;
  readonly browser: Browser;
  /** A JSON call with the root key, asserting a 2xx. */
  readonly call: Call;
}

/** Registers `before`/`after` hooks for a server keyed by `apiKey` and a browser; read them inside tests. */
export function dashboardRun(apiKey: string): DashboardRun {
  const dir = makeTempDir();
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  const run: DashboardRun = {
    get base(): string {
      if (server === undefined) throw new Error('the server starts in before()');
      return server.baseUrl;
    },
    get browser(): Browser {
      if (browser === undefined) throw new Error('the browser starts in before()');
      return browser;
    },
    call: jsonCall(() => server!.baseUrl, apiKey),
  };
  before(async () => {
    server = await startServer({ API_KEY: apiKey, DATABASE_URL: `sqlite:${join(dir, 'ui.db')}` });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    removeTempDir(dir);
  });
  return run;
}
