// Audit log: the entries the caller may read, newest first, filtered by
// text, resource specifier and dates, paged by the API's cursor; an
// entry's page diffs its previous and current version.
import { h, mount, when } from '../dom.js';
import { api, get, enc } from '../api.js';
import { href, navigate } from '../router.js';
import { diff, diffTable } from '../jsondiff.js';

export function register(route) {
  route('/audit', renderList, () => 'Audit log');
  route('/audit/:id', renderEntry, (p) => `Audit entry ${p.id}`);
}

// dayStart and dayEnd turn a date input's YYYY-MM-DD into Unix ms of the
// local day's first and last millisecond ('' when empty or malformed).
function dayStart(d) { const t = Date.parse(d + 'T00:00:00'); return Number.isNaN(t) ? '' : String(t); }
function dayEnd(d) { const t = Date.parse(d + 'T23:59:59.999'); return Number.isNaN(t) ? '' : String(t); }

// who names the member (or the token) behind an entry.
export function actor(e) {
  const m = e.member && (e.member.email || [e.member.firstName, e.member.lastName].filter(Boolean).join(' '));
  const t = e.token && (e.token.name ? `token ${e.token.name}` : `token …${e.token.ending || ''}`);
  if (m && t) return `${m} (${t})`;
  return m || t || (e.subject && e.subject.name) || '';
}

async function renderList({ query, main, stale }) {
  const f = { q: query.q || '', spec: query.spec || '', after: query.after || '', before: query.before || '', limit: query.limit || '20' };
  const params = new URLSearchParams();
  if (f.q) params.set('q', f.q);
  if (f.after) params.set('after', dayStart(f.after));
  if (f.before) params.set('before', dayEnd(f.before));
  params.set('limit', f.limit);
  if (query.cursor) params.set('cursor', query.cursor);
  // A resource specifier is a search: the API takes it as a policy
  // statement in a POST, and its next link repeats that POST.
  const body = f.spec ? [{ resources: [f.spec], actions: ['*'], effect: 'allow' }] : undefined;
  const page = await api(body ? 'POST' : 'GET', '/api/v2/auditlog?' + params, { body });
  if (stale()) return;
  const items = page.items || [];
  const next = page._links && page._links.next && new URL(page._links.next.href, location.origin).searchParams.get('cursor');

  const input = (id, label, attrs) => [h('label', { for: id }, label), h('input', { id, name: id, ...attrs })];
  const form = h('form', {
    id: 'audit-filter', role: 'search', 'aria-label': 'Filter the audit log',
    onsubmit: (e) => {
      e.preventDefault();
      const v = (id) => form.querySelector('#' + id).value.trim();
      navigate('/audit', { q: v('audit-q'), spec: v('audit-spec'), after: v('audit-after'), before: v('audit-before'), limit: v('audit-limit') });
    },
  },
  h('div', { class: 'row filters' },
    h('div', {}, input('audit-q', 'Text', { type: 'search', value: f.q, placeholder: 'words of the entry' })),
    h('div', {}, input('audit-spec', 'Resource', { type: 'text', value: f.spec, size: 28, placeholder: 'proj/shop:env/*:flag/*' })),
    h('div', {}, input('audit-after', 'From', { type: 'date', value: f.after })),
    h('div', {}, input('audit-before', 'To', { type: 'date', value: f.before })),
    h('div', {}, h('label', { for: 'audit-limit' }, 'Per page'),
      h('select', { id: 'audit-limit' }, ['10', '20'].map((n) => h('option', { value: n, selected: n === f.limit }, n))))),
  h('p', { class: 'row' }, h('button', { type: 'submit' }, 'Filter'),
    h('a', { href: href('/audit') }, 'Clear filters')));

  const table = items.length === 0 ? h('p', { id: 'audit-empty' }, 'No entry matches.') : h('table', { id: 'audit-list' },
    h('caption', { class: 'sr-only' }, 'Audit log entries, newest first'),
    h('thead', {}, h('tr', {}, ['Date', 'Change', 'By', 'Comment'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((e) => h('tr', { 'data-id': e._id },
      h('td', {}, when(e.date)),
      h('td', {}, h('a', { href: href('/audit/' + enc(e._id)) }, e.title || e.description || e._id),
        e.kind ? h('span', { class: 'tag' }, e.kind) : null),
      h('td', {}, actor(e)),
      h('td', {}, e.comment || '')))));

  const base = { q: f.q, spec: f.spec, after: f.after, before: f.before, limit: f.limit };
  const nav = h('nav', { class: 'row', 'aria-label': 'Pages' },
    query.cursor ? h('a', { href: href('/audit', base) }, 'Newest') : null,
    next ? h('a', { href: href('/audit', { ...base, cursor: next }), id: 'audit-next' }, 'Older entries') : h('span', { class: 'muted' }, 'No older entries'));
  mount(main, h('h1', {}, 'Audit log'), form, table, nav);
}

async function renderEntry({ params, main, stale }) {
  const e = await get('/api/v2/auditlog/' + enc(params.id));
  if (stale()) return;
  let prev = e.previousVersion;
  let cur = e.currentVersion;
  // A create has no previous version and a delete no current one: diff
  // against an empty object, so each field reads as added or removed.
  if (prev == null && cur && typeof cur === 'object') prev = {};
  if (cur == null && prev && typeof prev === 'object') cur = {};
  const changes = prev === undefined && cur === undefined ? [] : diff(prev, cur);
  mount(main,
    h('p', {}, h('a', { href: href('/audit') }, '← Audit log')),
    h('h1', {}, e.title || e.description || e._id),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Date'), h('dd', {}, when(e.date)),
      h('dt', {}, 'By'), h('dd', {}, actor(e)),
      h('dt', {}, 'Kind'), h('dd', {}, e.kind || ''),
      h('dt', {}, 'Comment'), h('dd', { id: 'audit-comment' }, e.comment || '—'),
      h('dt', {}, 'Actions'), h('dd', {}, (e.accesses || []).map((a) => h('div', {}, h('code', {}, a.action), ' on ', h('code', {}, a.resource))))),
    h('h2', {}, 'What changed'),
    e.previousVersion == null && e.currentVersion == null ? h('p', { class: 'muted' }, 'This entry holds no versions to compare.') :
      diffTable(changes, { caption: 'Fields changed by this entry', id: 'audit-diff' }),
    e.delta ? [h('h2', {}, 'Patch sent'), h('pre', { id: 'audit-delta' }, JSON.stringify(e.delta, null, 2))] : null);
}
