// htm bound to preact's h: the dashboard's JSX without a build step.
import htm from 'htm';
import { createContext, h } from 'preact';

export const html = htm.bind(h);

/** { api, me, admin, signOut } for every page: who is looking, and with which key. */
export const Session = createContext(null);
