// The header: where you are, who you are, and the way out. On a phone it is one line: the brand and a
// Menu button that opens the links, who you are and Sign out below it.
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../hooks.js';
import { html } from '../html.js';

export function Header({ path }) {
  const { me, admin, signOut } = useSession();
  const [open, setOpen] = useState(false);
  // A link followed closes the menu.
  useEffect(() => setOpen(false), [path]);
  const here = (p) => (path === p ? 'page' : undefined);
  const role = admin ? 'admin' : me.scopes.includes('read') ? 'read only' : me.scopes.join(', ');
  return html`<header class=${open ? 'top open' : 'top'}>
    <a class="brand" href="#/">agentsplit</a>
    <button type="button" class="menu-button" aria-expanded=${String(open)} aria-controls="top-menu"
      onClick=${() => setOpen(!open)} data-testid="nav-menu">Menu</button>
    <div class="top-menu" id="top-menu">
      <nav aria-label="Main">
        <a href="#/" aria-current=${here('/')}>Experiments</a>
        <a href="#/datasets" aria-current=${path.startsWith('/datasets') ? 'page' : undefined} data-testid="nav-datasets"
          >Datasets</a
        >
        ${admin && html`<a href="#/new" aria-current=${here('/new')} data-testid="nav-new">New experiment</a>`}
        ${admin && html`<a href="#/webhooks" aria-current=${here('/webhooks')} data-testid="nav-webhooks">Webhooks</a>`}
        ${admin && html`<a href="#/keys" aria-current=${here('/keys')} data-testid="nav-keys">Keys</a>`}
        <a href="/docs" target="_blank" rel="noopener">API docs</a>
      </nav>
      <div class="who">
        <span data-testid="whoami" title=${`scopes: ${me.scopes.join(', ')}`}
          >${me.name} · <span class="muted">${role}</span></span
        >
        <button type="button" class="link" onClick=${signOut} data-testid="sign-out">Sign out</button>
      </div>
    </div>
  </header>`;
}
