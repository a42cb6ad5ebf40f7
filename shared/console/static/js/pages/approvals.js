// Approvals: the requests to change a flag (or segment) in an environment
// that requires approval. A request's page shows its instructions, what
// applying them would change now (a preview worked out from the flag as it
// is, see simulate.js), its reviews, and review, apply and delete, which
// the API judges (a requester may not approve their own request unless
// the environment allows it; its refusal is shown as it comes).
import { h, mount, announce, when } from '../dom.js';
import { api, get, enc } from '../api.js';
import { href, navigate } from '../router.js';
import { guard } from '../access.js';
import { errorBox, ask } from '../ui.js';
import { diff, diffTable } from '../jsondiff.js';
import { flagEnv, segment as segmentSim, describe } from '../simulate.js';

export function register(route) {
  route('/approvals', renderList, () => 'Approvals');
  route('/approvals/:id', renderRequest, () => 'Approval request');
}

// parseResource reads "proj/p:env/e:flag/f" into its parts.
export function parseResource(id) {
  const out = {};
  for (const part of String(id || '').split(':')) {
    const i = part.indexOf('/');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1);
  }
  const kind = out.flag !== undefined ? 'flag' : out.segment !== undefined ? 'segment' : out.aiconfig !== undefined ? 'aiconfig' : '';
  return { project: out.proj, env: out.env, kind, key: out[kind] };
}

// members maps member ids to emails, when the caller may list members
// (a reader of flags only may not: ids are shown then).
async function members() {
  try {
    const list = await get('/api/v2/members?limit=1000');
    return Object.fromEntries((list.items || []).map((m) => [m._id, m.email]));
  } catch { return {}; }
}

function requester(r, names) {
  if (r.requestorId) return names[r.requestorId] || `member ${r.requestorId}`;
  if (r.requestorServiceTokenId) return `service token ${r.requestorServiceTokenId}`;
  return '';
}

function resourceLink(res) {
  const label = `${res.kind} ${res.key} in ${res.project}/${res.env}`;
  if (res.kind === 'flag') return h('a', { href: href(`/projects/${enc(res.project)}/flags/${enc(res.key)}`) }, label);
  if (res.kind === 'segment') return h('a', { href: href(`/projects/${enc(res.project)}/segments/${enc(res.env)}/${enc(res.key)}`) }, label);
  return label;
}

const FILTERS = {
  open: { label: 'Open', filter: 'status anyOf ["pending","scheduled"]' },
  completed: { label: 'Applied', filter: 'status anyOf ["completed"]' },
  failed: { label: 'Failed', filter: 'status anyOf ["failed"]' },
  all: { label: 'All', filter: '' },
};
const LIMIT = 50;

async function renderList({ query, main, stale }) {
  const show = FILTERS[query.show] ? query.show : 'open';
  const offset = Math.max(0, Number(query.offset) || 0);
  const params = new URLSearchParams({ limit: String(LIMIT), offset: String(offset) });
  if (FILTERS[show].filter) params.set('filter', FILTERS[show].filter);
  const [list, names] = await Promise.all([get('/api/v2/approval-requests?' + params), members()]);
  if (stale()) return;
  const items = list.items || [];
  const total = list.totalCount ?? items.length;
  mount(main,
    h('h1', {}, 'Approvals'),
    h('nav', { class: 'row', 'aria-label': 'Which requests' }, Object.entries(FILTERS).map(([k, f]) =>
      h('a', { href: href('/approvals', { show: k === 'open' ? undefined : k }), 'aria-current': k === show ? 'page' : false }, f.label))),
    items.length === 0 ? h('p', { id: 'approvals-empty' }, show === 'open' ? 'No request waits for review.' : 'No request here.') :
      h('table', { id: 'approvals-list' },
        h('caption', { class: 'sr-only' }, `${FILTERS[show].label} approval requests`),
        h('thead', {}, h('tr', {}, ['Request', 'Status', 'Review', 'Resource', 'Environment', 'Requested by', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((r) => {
          const res = parseResource(r.resourceId);
          return h('tr', { 'data-id': r._id },
            h('td', {}, h('a', { href: href('/approvals/' + enc(r._id)) }, r.description || `Request ${r._id}`)),
            h('td', {}, r.status),
            h('td', {}, r.reviewStatus),
            h('td', {}, `${res.kind} ${res.key}`, h('div', { class: 'muted' }, res.project)),
            h('td', {}, res.env),
            h('td', {}, requester(r, names)),
            h('td', {}, when(r.creationDate)));
        }))),
    total > LIMIT ? h('nav', { class: 'row', 'aria-label': 'Pages' },
      offset > 0 ? h('a', { href: href('/approvals', { show: query.show, offset: Math.max(0, offset - LIMIT) || undefined }) }, 'Previous') : null,
      h('span', {}, `${offset + 1}–${Math.min(offset + LIMIT, total)} of ${total}`),
      offset + LIMIT < total ? h('a', { href: href('/approvals', { show: query.show, offset: offset + LIMIT }) }, 'Next') : null) : null);
}

// preview answers the section showing what applying the request would
// change now, and the resource whose _access guards the actions.
async function preview(r, res) {
  const open = r.status === 'pending' || r.status === 'scheduled';
  try {
    if (res.kind === 'flag') {
      const flag = await get(`/api/v2/flags/${enc(res.project)}/${enc(res.key)}?env=${enc(res.env)}&expand=access`);
      const before = (flag.environments || {})[res.env] || {};
      if (!open) return { node: h('p', { class: 'muted' }, `This request is ${r.status}; its change is in the audit log.`), guardOn: before };
      const { after, skipped } = flagEnv(flag, res.env, r.instructions);
      return { node: [diffTable(diff(before, after, `/environments/${res.env}`), { caption: 'What applying would change', id: 'approval-diff' }), notPreviewed(skipped)], guardOn: before };
    }
    if (res.kind === 'segment') {
      const seg = await get(`/api/v2/segments/${enc(res.project)}/${enc(res.env)}/${enc(res.key)}`);
      if (!open) return { node: h('p', { class: 'muted' }, `This request is ${r.status}; its change is in the audit log.`), guardOn: null };
      const { after, skipped } = segmentSim(seg, r.instructions);
      return { node: [diffTable(diff(seg, after), { caption: 'What applying would change', id: 'approval-diff' }), notPreviewed(skipped)], guardOn: null };
    }
  } catch (e) {
    return { node: [h('p', {}, 'The change cannot be previewed:'), errorBox(e)], guardOn: null };
  }
  return { node: h('p', { class: 'muted' }, 'This kind of request is not previewed; its instructions are above.'), guardOn: null };
}

function notPreviewed(kinds) {
  return kinds.length ? h('p', { class: 'notice' }, `Not previewed here (the server applies them): ${kinds.join(', ')}.`) : null;
}

async function renderRequest({ params, main, stale }) {
  const [r, names] = await Promise.all([get('/api/v2/approval-requests/' + enc(params.id)), members()]);
  if (stale()) return;
  const res = parseResource(r.resourceId);
  const { node: change, guardOn } = await preview(r, res);
  if (stale()) return;
  const out = h('div', { id: 'approval-result' });
  const path = '/api/v2/approval-requests/' + enc(r._id);
  const open = r.status === 'pending' || r.status === 'scheduled';

  // act asks first (with an optional comment), then sends, and shows the
  // API's answer: the page drawn anew, or its refusal kept on screen.
  const act = (label, opts, send) => async () => {
    const ok = await ask({ title: `${label}?`, comment: true, ...opts });
    if (!ok) return;
    mount(out);
    try {
      await send(ok.comment);
      announce(`${label}: done`);
      if (label === 'Delete the request') navigate('/approvals'); else window.dispatchEvent(new HashChangeEvent('hashchange'));
    } catch (e) {
      mount(out, errorBox(e));
      announce(`${label}: refused (${e.status || ''} ${e.message})`);
    }
  };
  const review = (kind, label) => guard(h('button', { id: 'approval-' + kind, class: kind === 'decline' ? 'danger' : kind === 'comment' ? 'secondary' : '', disabled: !open,
    onclick: act(label, { message: `Your review is recorded on request “${r.description || r._id}”.`, confirmLabel: label },
      (comment) => api('POST', path + '/reviews', { body: { kind, comment } })) }, label), guardOn, 'reviewApprovalRequest');
  const applyBtn = guard(h('button', { id: 'approval-apply', disabled: !open,
    onclick: act('Apply', { message: `Apply these instructions to ${res.kind} ${res.key} in ${res.env} now.`, confirmLabel: 'Apply' },
      (comment) => api('POST', path + '/apply', { body: { comment } })) }, 'Apply'), guardOn, 'applyApprovalRequest');
  const deleteBtn = guard(h('button', { id: 'approval-delete', class: 'danger',
    onclick: act('Delete the request', { message: 'The request goes; nothing is applied.', confirmLabel: 'Delete', danger: true, comment: false },
      () => api('DELETE', path)) }, 'Delete'), guardOn, 'deleteApprovalRequest');

  mount(main,
    h('p', {}, h('a', { href: href('/approvals') }, '← Approvals')),
    h('h1', {}, r.description || `Request ${r._id}`),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Status'), h('dd', { id: 'approval-status' }, r.status),
      h('dt', {}, 'Review'), h('dd', { id: 'approval-review-status' }, r.reviewStatus,
        h('span', { class: 'muted' }, ` (${r.approvalSettings?.minNumApprovals ?? 1} approval(s) needed${r.approvalSettings?.canReviewOwnRequest ? '' : '; requesters may not review their own'})`)),
      h('dt', {}, 'Resource'), h('dd', {}, resourceLink(res)),
      h('dt', {}, 'Environment'), h('dd', {}, res.env || ''),
      h('dt', {}, 'Requested by'), h('dd', {}, requester(r, names)),
      h('dt', {}, 'Created'), h('dd', {}, when(r.creationDate)),
      r.executionDate ? [h('dt', {}, 'Scheduled for'), h('dd', {}, when(r.executionDate))] : null,
      r.appliedDate ? [h('dt', {}, 'Applied'), h('dd', {}, when(r.appliedDate))] : null,
      r.failureReason ? [h('dt', {}, 'Failed because'), h('dd', { class: 'error' }, r.failureReason)] : null),
    h('h2', {}, 'Instructions'),
    h('ol', { id: 'approval-instructions' }, (r.instructions || []).map((ins) => h('li', {},
      describe(ins), h('details', {}, h('summary', {}, 'As sent'), h('pre', {}, JSON.stringify(ins, null, 2)))))),
    (r.conflicts || []).length ? h('div', { class: 'error', role: 'alert', id: 'approval-conflicts' },
      h('strong', {}, 'No longer applies: '), r.conflicts.map((c) => h('div', {}, `${c.instruction?.kind}: ${c.reason}`))) : null,
    h('h2', {}, 'What applying would change'),
    change,
    h('h2', {}, 'Reviews'),
    (r.allReviews || []).length === 0 ? h('p', { class: 'muted' }, 'No review yet.') :
      h('ul', { id: 'approval-reviews' }, r.allReviews.map((v) => h('li', {},
        h('strong', {}, v.kind), ' by ', v.memberId ? names[v.memberId] || `member ${v.memberId}` : `token ${v.serviceTokenId || ''}`,
        ', ', when(v.creationDate), v.comment ? `: ${v.comment}` : ''))),
    h('h2', {}, 'Actions'),
    open ? null : h('p', { class: 'muted' }, `This request is ${r.status}: it can no longer be reviewed or applied.`),
    h('div', { class: 'row' }, review('approve', 'Approve'), review('decline', 'Decline'), review('comment', 'Comment'), applyBtn, deleteBtn),
    out);
}
