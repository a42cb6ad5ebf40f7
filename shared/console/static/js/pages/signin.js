// Sign-in: an access token, or an OAuth client's id and secret exchanged
// for a token (client_credentials). The token lives in sessionStorage only.
import { h, mount } from '../dom.js';
import { api, signIn, signOut, get } from '../api.js';
import { errorBox } from '../ui.js';

export function register(route) {
  route('/sign-in', render, () => 'Sign in');
}

async function check(tok, label) {
  signIn(tok, label);
  try {
    await get('/api/v2/projects?limit=1');
  } catch (e) {
    signOut();
    throw e;
  }
}

function render({ main, query }) {
  const out = h('div');
  const next = query.next || '/';
  const done = () => { location.hash = '#' + next; };
  const tokenInput = h('input', { id: 'token', type: 'password', autocomplete: 'off', size: 48, required: true });
  const nameInput = h('input', { id: 'token-name', type: 'text', size: 24, placeholder: 'for the header, e.g. your name' });
  const byToken = h('form', {
    id: 'sign-in-token',
    onsubmit: async (e) => {
      e.preventDefault();
      mount(out);
      try {
        await check(tokenInput.value.trim(), nameInput.value.trim() || 'access token');
        done();
      } catch (err) { mount(out, errorBox(err)); }
    },
  },
    h('h2', {}, 'With an access token'),
    h('label', { for: 'token' }, 'Access token'), tokenInput,
    h('label', { for: 'token-name' }, 'Your name (optional)'), nameInput,
    h('p', {}, h('button', { type: 'submit' }, 'Sign in')));
  const idInput = h('input', { id: 'client-id', type: 'text', size: 40, required: true, autocomplete: 'off' });
  const secretInput = h('input', { id: 'client-secret', type: 'password', size: 40, required: true, autocomplete: 'off' });
  const byClient = h('form', {
    id: 'sign-in-oauth',
    onsubmit: async (e) => {
      e.preventDefault();
      mount(out);
      try {
        const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: idInput.value.trim(), client_secret: secretInput.value });
        const tok = await api('POST', '/trust/oauth/token', { body: form.toString(), contentType: 'application/x-www-form-urlencoded' });
        await check('Bearer ' + tok.access_token, 'OAuth client ' + idInput.value.trim());
        done();
      } catch (err) { mount(out, errorBox(err)); }
    },
  },
    h('h2', {}, 'With an OAuth client'),
    h('label', { for: 'client-id' }, 'Client id'), idInput,
    h('label', { for: 'client-secret' }, 'Client secret'), secretInput,
    h('p', {}, h('button', { type: 'submit' }, 'Sign in with the client')));
  mount(main,
    h('h1', {}, 'Sign in to flagplane'),
    h('p', { class: 'muted' }, 'The token is kept for this browser tab only and forgotten when you sign out or close it.'),
    out, byToken, byClient);
  tokenInput.focus();
}
