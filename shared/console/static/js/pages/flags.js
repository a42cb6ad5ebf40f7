// Flags of a project: search, tag filter, sort and pages of 50, with one
// on/off switch per environment side by side. A switch sends the semantic
// patch turnFlagOn/turnFlagOff, asking first where the environment wants
// changes confirmed or commented.
import { h, mount, announce } from '../dom.js';
import { get, enc, semanticPatch, api } from '../api.js';
import { href, navigate } from '../router.js';
import { errorBox, pager, ask as dialog } from '../ui.js';
import { guard } from '../access.js';

const PAGE = 50;

export function register(route) {
  route('/projects/:project/flags', render, (p) => `Flags of ${p.project}`);
}

// listQuery is the API's query for the page's own: filter=query:x,tags:a+b,
// each environment by env (a list shows none unless named).
function listQuery(query, envs) {
  const filter = [];
  const q = (query.q || '').trim();
  // The filter's separators cannot be escaped: drop them from a search.
  if (q) filter.push('query:' + q.replace(/[,:+]/g, ' ').trim());
  const tags = (query.tag || '').split(/[\s,+]+/).filter(Boolean);
  if (tags.length) filter.push('tags:' + tags.join('+'));
  const p = new URLSearchParams({ summary: 'true', limit: String(PAGE), offset: String(Number(query.offset) || 0), expand: 'access' });
  if (filter.length) p.set('filter', filter.join(','));
  if (query.sort) p.set('sort', query.sort);
  for (const e of envs) p.append('env', e.key);
  return p.toString();
}

async function render({ params, query, main, stale }) {
  const project = params.project;
  const offset = Math.max(0, Number(query.offset) || 0);
  const envList = await get(`/api/v2/projects/${enc(project)}/environments?limit=1000`);
  if (stale()) return;
  const envs = envList.items || [];
  const list = await get(`/api/v2/flags/${enc(project)}?${listQuery(query, envs)}`);
  if (stale()) return;
  const byKey = new Map(envs.map((e) => [e.key, e]));
  const flags = list.items || [];
  const msg = h('div', { id: 'flags-msg' });
  const go = (q) => navigate(`/projects/${enc(project)}/flags`, { q: query.q, tag: query.tag, sort: query.sort, ...q });

  const search = h('input', { id: 'flag-search', type: 'search', value: query.q || '', size: 24 });
  const tag = h('input', { id: 'flag-tag', type: 'text', value: query.tag || '', size: 14, placeholder: 'e.g. beta' });
  const sort = h('select', { id: 'flag-sort' },
    [['', 'Oldest first'], ['-creationDate', 'Newest first'], ['name', 'Name A–Z'], ['-name', 'Name Z–A'], ['key', 'Key A–Z']]
      .map(([v, label]) => h('option', { value: v, selected: (query.sort || '') === v }, label)));
  const tools = h('form', {
    class: 'row', role: 'search', id: 'flag-filter',
    onsubmit: (e) => { e.preventDefault(); go({ q: search.value.trim(), tag: tag.value.trim(), sort: sort.value, offset: undefined }); },
  },
    h('span', {}, h('label', { for: 'flag-search' }, 'Search key or name'), search),
    h('span', {}, h('label', { for: 'flag-tag' }, 'Tag'), tag),
    h('span', {}, h('label', { for: 'flag-sort' }, 'Sort'), sort),
    h('span', { style: 'align-self: flex-end' }, h('button', { type: 'submit' }, 'Apply')),
    (query.q || query.tag) ? h('span', { style: 'align-self: flex-end' }, h('a', { href: href(`/projects/${enc(project)}/flags`, { sort: query.sort }) }, 'Clear filters')) : null);

  // One pass over the page into a fragment; one listener for every switch
  // (a page of 50 flags in 10 environments is 500 buttons).
  const body = h('tbody');
  const frag = document.createDocumentFragment();
  for (const f of flags) frag.appendChild(row(project, f, envs));
  body.appendChild(frag);
  body.addEventListener('click', (e) => {
    const btn = e.target.closest('button.switch');
    if (btn && !btn.disabled) toggle(project, flags, byKey, btn, msg);
    const t = e.target.closest('button.tag-filter');
    if (t) go({ tag: t.dataset.tag, offset: undefined });
  });

  const summary = `${list.totalCount} flag${list.totalCount === 1 ? '' : 's'}` +
    (query.q ? ` matching “${query.q}”` : '') + (query.tag ? ` tagged ${query.tag}` : '');
  mount(main,
    h('h1', {}, `Flags of ${project}`),
    h('p', { class: 'row' },
      h('a', { href: href(`/projects/${enc(project)}/segments`) }, 'Segments'),
      h('a', { href: href(`/projects/${enc(project)}/environments`) }, 'Environments')),
    tools,
    h('p', { id: 'flags-total', 'aria-live': 'polite' }, summary),
    msg,
    flags.length === 0 ? h('p', { class: 'notice' }, list.totalCount ? 'No flag on this page.' :
      (query.q || query.tag) ? 'No flag matches these filters.' : 'No flag yet. Create one through the API (POST /api/v2/flags/' + project + ').') :
      h('table', { id: 'flags' },
        h('caption', { class: 'sr-only' }, 'Flags, with their state in each environment'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Flag'), h('th', { scope: 'col' }, 'Tags'),
          envs.map((e) => h('th', { scope: 'col' }, e.name, notes(e))))),
        body),
    pager({ offset, limit: PAGE, total: list.totalCount, go: (o) => go({ offset: o || undefined }) }));
}

// notes says what an environment asks before a change.
function notes(env) {
  const n = [];
  if (env.approvalSettings && env.approvalSettings.required) n.push('approvals');
  if (env.requireComments) n.push('comments');
  else if (env.confirmChanges) n.push('confirm');
  return n.length ? h('span', { class: 'reason' }, ` (${n.join(', ')})`) : null;
}

function row(project, f, envs) {
  const cells = envs.map((e) => {
    const c = (f.environments || {})[e.key];
    if (!c) return h('td', { class: 'muted' }, '—');
    const on = !!c.on;
    const b = h('button', {
      type: 'button', class: 'switch', 'aria-pressed': String(on), 'data-flag': f.key, 'data-env': e.key,
      'aria-label': `${f.name || f.key} in ${e.name}`,
    }, on ? 'On' : 'Off');
    if (f.archived) { b.disabled = true; b.title = 'The flag is archived: restore it to change it.'; }
    return h('td', {}, guard(b, c, 'updateOn'));
  });
  return h('tr', { 'data-flag': f.key },
    h('th', { scope: 'row' },
      h('a', { href: href(`/projects/${enc(project)}/flags/${enc(f.key)}`) }, f.name || f.key), ' ',
      h('code', { class: 'muted' }, f.key),
      f.archived ? h('span', { class: 'tag' }, 'archived') : null),
    h('td', {}, (f.tags || []).map((t) => h('button', { type: 'button', class: 'secondary tag tag-filter', 'data-tag': t, 'aria-label': `Show flags tagged ${t}` }, t))),
    cells);
}

// toggle turns one flag on or off in one environment, with a comment
// where the environment requires one and a confirmation where it asks.
async function toggle(project, flags, envs, btn, msg) {
  const f = flags.find((x) => x.key === btn.dataset.flag);
  const env = envs.get(btn.dataset.env);
  const on = btn.getAttribute('aria-pressed') !== 'true';
  const what = `Turn ${f.name || f.key} ${on ? 'on' : 'off'} in ${env.name}`;
  let comment = '';
  if (env.confirmChanges || env.requireComments) {
    const ok = await ask(what, env);
    if (!ok) { btn.focus(); return; }
    comment = ok.comment;
  }
  mount(msg);
  btn.disabled = true;
  btn.setAttribute('aria-busy', 'true');
  const instructions = [{ kind: on ? 'turnFlagOn' : 'turnFlagOff' }];
  try {
    const next = await semanticPatch(`/api/v2/flags/${enc(project)}/${enc(f.key)}`, { environmentKey: env.key, comment, instructions });
    const now = !!(next.environments && next.environments[env.key] && next.environments[env.key].on);
    btn.setAttribute('aria-pressed', String(now));
    btn.textContent = now ? 'On' : 'Off';
    announce(`${f.name || f.key} is ${now ? 'on' : 'off'} in ${env.name}.`);
  } catch (e) {
    mount(msg, refusal(e, { project, flag: f, env, instructions, comment }));
    announce(`Not changed: ${e.message}`);
  } finally {
    btn.disabled = false;
    btn.removeAttribute('aria-busy');
    btn.focus();
  }
}

function ask(title, env) {
  return dialog({
    title: title + '?',
    message: env.requireComments ? `${env.name} requires a comment for every change.` : `${env.name} asks to confirm every change.`,
    confirmLabel: title.split(' ').slice(0, 2).join(' '),
    comment: true,
    requireComment: !!env.requireComments,
  });
}

// refusal explains a refused change; an environment that requires
// approvals gets the way to ask for one.
export function refusal(err, { project, flag, env, instructions, comment }) {
  if (!isApprovalRequired(err)) return errorBox(err);
  const out = h('div', { class: 'notice', role: 'alert', id: 'approval-needed' });
  const request = h('button', {
    type: 'button',
    onclick: async () => {
      request.disabled = true;
      try {
        const body = {
          resourceId: `proj/${project}:env/${env.key}:flag/${flag.key}`,
          description: comment || `${instructions.map((i) => i.kind).join(', ')} in ${env.name}`,
          instructions, comment,
        };
        const made = await api('POST', '/api/v2/approval-requests', { body });
        mount(out, h('p', {}, 'Approval requested. ', h('a', { href: href('/approvals', { id: made._id }) }, 'See the request')));
        announce('Approval requested.');
      } catch (e) {
        request.disabled = false;
        out.appendChild(errorBox(e));
      }
    },
  }, 'Request approval');
  return mount(out,
    h('p', {}, h('strong', {}, `${env.name} requires approval for changes to this flag. `), 'Nothing was changed. ', err.message),
    h('p', { class: 'row' }, request, h('a', { href: href('/approvals') }, 'Pending approvals')));
}

// isApprovalRequired: the API answers a change that needs an approval
// request with 405 (LaunchDarkly's answer) naming the approval path.
export function isApprovalRequired(err) {
  return !!err && (err.status === 405 || err.status === 403) && /approval/i.test(err.message || '');
}
