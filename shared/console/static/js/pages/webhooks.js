// Webhooks: where changes are delivered, and what happened to each
// delivery (the API keeps the latest attempts on the webhook's read). The
// signing secret is shown once, in the create answer; later reads mask it.
import { h, mount, announce, when } from '../dom.js';
import { api, get, jsonPatch, enc } from '../api.js';
import { href, navigate } from '../router.js';
import { guard } from '../access.js';
import { errorBox, ask, secretOnce } from '../ui.js';
import { statementText } from './people.js';

export function register(route) {
  route('/webhooks', list, () => 'Webhooks');
  route('/webhooks/:id', one, () => 'Webhook');
}

function field(label, control) {
  return [h('label', { for: control.id }, label), control];
}

// toggle is the on/off switch of a webhook, guarded by updateOn.
function toggle(w, after, status) {
  const btn = h('button', {
    class: 'switch', 'aria-pressed': String(!!w.on), 'aria-label': `Deliveries to ${w.name || w.url}`,
    onclick: async () => {
      try {
        const next = await jsonPatch(`/api/v2/webhooks/${enc(w._id)}`, [{ op: 'replace', path: '/on', value: !w.on }]);
        announce(`${next.name || 'The webhook'} is ${next.on ? 'on' : 'off'}.`);
        await after();
      } catch (e) { mount(status, errorBox(e)); }
    },
  }, w.on ? 'On' : 'Off');
  return guard(btn, w, 'updateOn');
}

function remove(w, status, after) {
  return guard(h('button', {
    class: 'danger', 'aria-label': `Delete webhook ${w.name || w.url}`,
    onclick: async () => {
      const ok = await ask({ title: 'Delete webhook', message: `Delete ${w.name || w.url}? Deliveries still queued for it are dropped.`, confirmLabel: 'Delete', danger: true });
      if (!ok) return;
      try { await api('DELETE', `/api/v2/webhooks/${enc(w._id)}`); announce(`${w.name || 'The webhook'} is deleted.`); await after(); } catch (e) { mount(status, errorBox(e)); }
    },
  }, 'Delete'), w, 'deleteWebhook');
}

async function list(ctx) {
  const { main } = ctx;
  const secretSlot = h('div', { id: 'webhook-secret' });
  const status = h('div', {});
  const listBox = h('div', {});
  async function load() {
    let res;
    try { res = await get('/api/v2/webhooks'); } catch (e) { mount(listBox, errorBox(e)); return; }
    const items = res.items || [];
    mount(listBox, items.length === 0 ? h('p', {}, 'No webhook yet.') :
      h('table', { id: 'webhooks' },
        h('thead', {}, h('tr', {}, ['Webhook', 'URL', 'On', 'Signed', 'Tags', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((w) => h('tr', { 'data-id': w._id },
          h('th', { scope: 'row' }, h('a', { href: href(`/webhooks/${enc(w._id)}`) }, w.name || w._id)),
          h('td', {}, h('code', {}, w.url)),
          h('td', {}, toggle(w, load, status)),
          h('td', {}, w.sign ? 'yes' : 'no'),
          h('td', {}, (w.tags || []).map((t) => h('span', { class: 'tag' }, t))),
          h('td', {}, remove(w, status, load)))))));
  }
  const formErr = h('div', {});
  const create = h('form', {
    id: 'create-webhook', onsubmit: async (e) => {
      e.preventDefault();
      const f = e.target.elements;
      mount(formErr);
      const body = { name: f.name.value.trim(), url: f.url.value.trim(), on: f.on.checked, sign: f.sign.checked,
        tags: f.tags.value.split(',').map((t) => t.trim()).filter(Boolean) };
      if (f.secret.value) body.secret = f.secret.value;
      try {
        const w = await api('POST', '/api/v2/webhooks', { body });
        e.target.reset();
        f.on.checked = true;
        mount(secretSlot, w.sign && w.secret ? secretOnce(w.secret, { what: `signing secret of ${w.name || 'the webhook'}`, id: 'webhook-secret-value' }) : null);
        await load();
        announce(`Webhook ${w.name || w.url} is created.`);
      } catch (err) { mount(formErr, errorBox(err)); }
    },
  },
    h('h2', {}, 'Create a webhook'),
    field('Name', h('input', { id: 'webhook-name', name: 'name' })),
    field('URL', h('input', { id: 'webhook-url', name: 'url', type: 'url', required: true, size: 50 })),
    h('div', { class: 'row' }, h('input', { type: 'checkbox', id: 'webhook-on', name: 'on', checked: true }), h('label', { for: 'webhook-on', class: 'inline' }, 'On')),
    h('div', { class: 'row' }, h('input', { type: 'checkbox', id: 'webhook-sign', name: 'sign' }),
      h('label', { for: 'webhook-sign', class: 'inline' }, 'Sign deliveries (X-SVC-Signature, HMAC-SHA256)')),
    field('Secret (optional; one is generated when signing without it)', h('input', { id: 'webhook-secret-in', name: 'secret', type: 'password', autocomplete: 'new-password' })),
    field('Tags (comma-separated)', h('input', { id: 'webhook-tags', name: 'tags' })),
    h('p', { class: 'muted' }, 'Every change is delivered; narrow it with policy statements through the API (statements).'),
    h('p', {}, h('button', { type: 'submit' }, 'Create webhook')),
    formErr);
  mount(main, h('h1', {}, 'Webhooks'), secretSlot, status, listBox, create);
  await load();
}

async function one(ctx) {
  const { params, main } = ctx;
  const w = await get(`/api/v2/webhooks/${enc(params.id)}`);
  const status = h('div', {});
  const attempts = w._deliveries || [];
  const again = async () => { try { await one(ctx); } catch (e) { mount(main, errorBox(e)); } };
  mount(main,
    h('p', {}, h('a', { href: href('/webhooks') }, 'Webhooks')),
    h('h1', {}, w.name || w._id),
    status,
    h('dl', { class: 'facts' },
      h('dt', {}, 'URL'), h('dd', {}, h('code', {}, w.url)),
      h('dt', {}, 'Deliveries'), h('dd', {}, toggle(w, again, status)),
      h('dt', {}, 'Signed'), h('dd', {}, w.sign ? 'yes (the secret was shown once, when the webhook was created)' : 'no'),
      h('dt', {}, 'Tags'), h('dd', {}, (w.tags || []).length ? w.tags.map((t) => h('span', { class: 'tag' }, t)) : h('span', { class: 'muted' }, 'none'))),
    h('h2', {}, 'Which changes'),
    (w.statements || []).length === 0 ? h('p', {}, 'Every change (no statement narrows it).') :
      h('ul', { class: 'policy' }, w.statements.map((s) => h('li', {}, statementText(s)))),
    h('h2', {}, 'Delivery attempts'),
    h('div', { class: 'row' },
      h('p', { class: 'muted' }, `The latest ${attempts.length} attempts, newest first (kept 7 days).`),
      h('button', { class: 'secondary', id: 'refresh-deliveries', onclick: async () => { await again(); const b = document.getElementById('refresh-deliveries'); if (b) b.focus(); announce('Delivery attempts refreshed.'); } }, 'Refresh')),
    attempts.length === 0 ? h('p', { id: 'no-deliveries' }, 'No delivery yet. A change the webhook matches is delivered within seconds.') :
      h('table', { id: 'deliveries' },
        h('thead', {}, h('tr', {}, ['Time', 'Result', 'Status', 'Attempt', 'Audit entry', 'Error'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, attempts.map((a) => {
          const ok = a.status >= 200 && a.status < 300;
          return h('tr', {},
            h('th', { scope: 'row' }, when(a.time)),
            h('td', { class: ok ? 'ok' : 'error-text' }, ok ? 'delivered' : 'failed'),
            h('td', { class: 'status' }, a.status ? String(a.status) : 'no answer'),
            h('td', {}, String(a.attempt)),
            h('td', {}, h('a', { href: href(`/audit/${enc(a.entryId)}`) }, h('code', {}, a.entryId))),
            h('td', {}, a.error || ''));
        }))),
    h('h2', {}, 'Danger zone'),
    remove(w, status, () => navigate('/webhooks')));
}
