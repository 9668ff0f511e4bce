// A dashboard test's setup, the one every browser test file uses: a real server process on its own SQLite
// file and headless Chromium, started before the file's tests and closed after them (server, browser and
// files), with a JSON call for setup. A file seeds its data in `setup`, run once the server answers (node 20
// starts a file's root `before` hooks together, so a `before` of the file's own could run before the server).
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
  /** The server process (its output, its child). */
  readonly server: ServerProcess;
  /** A JSON call with the root key, asserting a 2xx. */
  readonly call: Call;
}

export interface DashboardRunOptions {
  /** More environment for the server (e.g. `MONITOR_INTERVAL_SECONDS`, `WEBHOOK_RETRY_SCHEDULE`). */
  env?: Record<string, string>;
  /** Run once the server answers, before the browser starts and before the first test (seeding). */
  setup?: () => Promise<void>;
}

/** Registers `before`/`after` hooks for a server keyed by `apiKey` and a browser; read them inside tests. */
export function dashboardRun(apiKey: string, options: DashboardRunOptions = {}): DashboardRun {
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
    get server(): ServerProcess {
      if (server === undefined) throw new Error('the server starts in before()');
      return server;
    },
    call: jsonCall(() => server!.baseUrl, apiKey),
  };
  before(async () => {
    server = await startServer({
      ...options.env,
      API_KEY: apiKey,
      DATABASE_URL: `sqlite:${join(dir, 'ui.db')}`,
    });
    await options.setup?.();
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
