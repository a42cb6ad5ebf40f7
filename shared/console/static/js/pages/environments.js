// Environments of a project: their settings, approval settings, and the
// SDK credentials, shown masked (the full value never enters the page's
// text) with Copy, and Reset after a confirmation.
import { h, mount, announce } from '../dom.js';
import { api, get, enc } from '../api.js';
import { href } from '../router.js';
import { guard } from '../access.js';
import { errorBox, ask } from '../ui.js';

export function register(route) {
  route('/projects/:project/environments', render, (p) => `Environments of ${p.project}`);
}

// mask keeps a credential's last 4 characters, enough to tell keys apart.
export function mask(key) {
  if (!key) return '';
  return '••••' + String(key).slice(-4);
}

function approvals(env) {
  const a = env.approvalSettings || {};
  const parts = [];
  if (a.required) parts.push(`Flags: required, ${a.minNumApprovals || 1} approval(s)`);
  else if ((a.requiredApprovalTags || []).length) parts.push(`Flags tagged ${a.requiredApprovalTags.join(', ')}: ${a.minNumApprovals || 1} approval(s)`);
  else parts.push('Flags: not required');
  if (a.required || (a.requiredApprovalTags || []).length) {
    if (a.canReviewOwnRequest) parts.push('requesters may review their own');
    if (!a.canApplyDeclinedChanges) parts.push('declined changes cannot be applied');
  }
  for (const [kind, s] of Object.entries(env.resourceApprovalSettings || {})) {
    if (s && s.required) parts.push(`${kind === 'aiconfig' ? 'AI Configs' : kind === 'segment' ? 'Segments' : kind}: required`);
  }
  return parts.join('; ');
}

const yes = (b) => (b ? 'yes' : 'no');

async function render({ params, main, stale }) {
  const p = enc(params.project);
  const list = await get(`/api/v2/projects/${p}/environments?limit=1000`);
  if (stale()) return;
  const out = h('div', { id: 'env-result' });
  const rows = (list.items || []).map((env) => row(params.project, env, out));
  mount(main,
    h('p', {}, h('a', { href: href('/') }, '← Projects'), ' · ',
      h('a', { href: href(`/projects/${p}/flags`) }, 'Flags'), ' · ',
      h('a', { href: href(`/projects/${p}/segments`) }, 'Segments')),
    h('h1', {}, `Environments of ${params.project}`),
    out,
    rows.length === 0 ? h('p', {}, 'No environment.') : h('table', { id: 'env-list' },
      h('caption', { class: 'sr-only' }, `Environments of project ${params.project}`),
      h('thead', {}, h('tr', {}, ['Environment', 'Settings', 'Approvals', 'SDK key', 'Mobile key', 'Client-side id'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows)));
}

// row draws one environment; a reset draws it again from the API's answer.
function row(project, env, out) {
  const tr = h('tr', { 'data-env': env.key });
  const draw = (e) => {
    const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    // Set through the style object: the CSP allows no inline style attribute.
    if (/^[0-9a-fA-F]{6}$/.test(e.color || '')) swatch.style.background = '#' + e.color;
    const base = `/api/v2/projects/${enc(project)}/environments/${enc(e.key)}`;
    mount(tr,
      h('th', { scope: 'row' }, swatch, ' ', e.name, h('div', {}, h('code', {}, e.key)), e.critical ? h('span', { class: 'tag' }, 'critical') : null),
      h('td', {}, h('div', {}, `Comments required: ${yes(e.requireComments)}`), h('div', {}, `Confirm changes: ${yes(e.confirmChanges)}`),
        e.secureMode ? h('div', {}, 'Secure mode') : null),
      h('td', { class: 'approvals' }, approvals(e)),
      h('td', {}, credential(e, 'sdk', 'SDK key', e.apiKey, { path: base + '/apiKey', action: 'updateApiKey', out, redraw: draw })),
      h('td', {}, credential(e, 'mobile', 'Mobile key', e.mobileKey, { path: base + '/mobileKey', action: 'updateMobileKey', out, redraw: draw })),
      h('td', {}, credential(e, 'client', 'Client-side id', e._id, null)));
  };
  draw(env);
  return tr;
}

// credential shows one key masked, Copy, and (for resettable ones) Reset.
// The full value stays in this closure: never in the page's text or attributes.
function credential(env, id, label, value, reset) {
  const name = `${label} of ${env.name}`;
  const copy = h('button', {
    class: 'secondary', id: `copy-${id}-${env.key}`, 'aria-label': `Copy the ${name}`,
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(value);
        announce(`Copied the ${name}`);
      } catch (e) {
        announce(`Could not copy the ${name}: ${e.message || e}`);
      }
    },
  }, 'Copy');
  let resetBtn = null;
  if (reset) {
    resetBtn = guard(h('button', {
      class: 'danger', id: `reset-${id}-${env.key}`, 'aria-label': `Reset the ${name}`,
      onclick: async () => {
        const ok = await ask({
          title: `Reset the ${name}?`, danger: true, confirmLabel: `Reset ${label.toLowerCase()}`,
          message: `The current ${label.toLowerCase()} stops working at once: every SDK using it is refused until it is given the new one.`,
        });
        if (!ok) { announce('Reset cancelled; nothing changed.'); return; }
        mount(reset.out);
        try {
          const next = await api('POST', reset.path);
          reset.redraw(next);
          announce(`The ${name} was reset.`);
        } catch (e) {
          mount(reset.out, errorBox(e));
          announce(`Reset refused: ${e.message}`);
        }
      },
    }, 'Reset'), env, reset.action);
  }
  return h('div', { class: 'row' }, h('code', { class: 'masked', 'data-credential': id, 'aria-label': `${label} ending ${String(value || '').slice(-4)}` }, mask(value)), copy, resetBtn);
}
