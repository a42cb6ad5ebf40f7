// The console's entry: the pages it has, wired here by name (no page adds
// itself), the navigation, and the sign-in gate.
import { h, mount } from './dom.js';
import { token, who, signOut } from './api.js';
import { route, resolve, current, href } from './router.js';
import { errorBox } from './ui.js';
import * as signin from './pages/signin.js';
import * as projects from './pages/projects.js';
import * as flags from './pages/flags.js';
import * as flag from './pages/flag.js';
import * as segments from './pages/segments.js';
import * as approvals from './pages/approvals.js';
import * as audit from './pages/audit.js';
import * as environments from './pages/environments.js';
import * as people from './pages/people.js';
import * as webhooks from './pages/webhooks.js';
import * as usage from './pages/usage.js';

for (const page of [signin, projects, flags, flag, segments, approvals, audit, environments, people, webhooks, usage]) {
  page.register(route);
}

// The main navigation: account-wide pages. Project pages link from the
// project list.
const nav = [
  ['Projects', '/'],
  ['Approvals', '/approvals'],
  ['Audit log', '/audit'],
  ['Members', '/members'],
  ['Teams', '/teams'],
  ['Roles', '/roles'],
  ['Tokens', '/tokens'],
  ['Webhooks', '/webhooks'],
  ['Usage', '/usage'],
];

function renderChrome(path) {
  const signedIn = !!token();
  mount(document.getElementById('nav'), signedIn ? nav.map(([label, p]) =>
    h('a', { href: href(p), 'aria-current': (p === '/' ? path === '/' || path.startsWith('/projects') : path.startsWith(p)) ? 'page' : false }, label)) : null);
  mount(document.getElementById('who'), signedIn ? [
    h('span', {}, who() ? `Signed in: ${who()}` : 'Signed in'),
    h('button', { class: 'secondary', id: 'sign-out', onclick: () => { signOut(); location.hash = '#/sign-in'; } }, 'Sign out'),
  ] : null);
}

let seq = 0;

async function show() {
  const { path, query } = current();
  const main = document.getElementById('main');
  if (!token() && path !== '/sign-in') {
    location.hash = href('/sign-in', { next: path === '/' ? undefined : path });
    return;
  }
  renderChrome(path);
  const found = resolve(path);
  const mine = ++seq;
  if (!found) {
    document.title = 'Not found · flagplane';
    mount(main, h('h1', {}, 'Not found'), h('p', {}, 'No console page has this address. '), h('a', { href: '#/' }, 'Projects'));
    return;
  }
  document.title = (found.route.title ? found.route.title(found.params) + ' · ' : '') + 'flagplane';
  mount(main, h('p', { class: 'muted', 'aria-busy': 'true' }, 'Loading…'));
  try {
    await found.route.render({ params: found.params, query, main, stale: () => mine !== seq });
  } catch (e) {
    if (mine === seq) mount(main, errorBox(e));
  }
  if (mine === seq) {
    document.body.dataset.page = path;
    document.body.dataset.ready = String(mine);
  }
}

window.addEventListener('hashchange', () => { show(); document.getElementById('main').focus(); });
show();
