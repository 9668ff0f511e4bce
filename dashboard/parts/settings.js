// The server's public settings (GET /settings), read once a session, so help texts state the real
// values (the monitor's interval, the default rate limit) rather than the defaults.
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../hooks.js';

const asked = new WeakMap();

/** The settings, or null until they arrive (or when the server does not answer them). */
export function useSettings() {
  const { api } = useSession();
  const [settings, setSettings] = useState(null);
  useEffect(() => {
    if (!asked.has(api))
      asked.set(
        api,
        api.get('/settings').catch(() => null),
      );
    let live = true;
    asked.get(api).then((s) => live && setSettings(s));
    return () => {
      live = false;
    };
  }, [api]);
  return settings;
}

/** A number of seconds in words: 'every minute', 'every 30 seconds', 'every 2 hours'. */
export function everyText(seconds) {
  if (seconds % 3600 === 0) return seconds === 3600 ? 'every hour' : `every ${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? 'every minute' : `every ${seconds / 60} minutes`;
  return seconds === 1 ? 'every second' : `every ${seconds} seconds`;
}

/** How often the guardrail monitor judges, as the server is set (MONITOR_INTERVAL_SECONDS). */
export function monitorText(settings) {
  if (!settings) return 'checked by the monitor on its interval';
  if (settings.monitorIntervalSeconds === 0) return 'the monitor is off on this server';
  return `checked ${everyText(settings.monitorIntervalSeconds)}`;
}
