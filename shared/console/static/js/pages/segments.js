// Segments of a project, per environment: the list (search, paging), and a
// segment's page with its included and excluded targets by context kind,
// rules, big segment facts and the flags using it. Targets are added and
// removed through semantic patch, after a preview of the change; the
// segment is deleted after a confirmation. What _access denies is disabled.
import { h, mount, announce, when } from '../dom.js';
import { api, get, enc, semanticPatch } from '../api.js';
import { href, navigate } from '../router.js';
import { guard } from '../access.js';
import { errorBox, ask, pager } from '../ui.js';
import { diff, diffTable } from '../jsondiff.js';
import { segment as simulate, describe } from '../simulate.js';

export function register(route) {
  route('/projects/:project/segments', renderList, (p) => `Segments of ${p.project}`);
  route('/projects/:project/segments/:env/:segment', renderSegment, (p) => `Segment ${p.segment}`);
}

const LIMIT = 50;

async function renderList({ params, query, main, stale }) {
  const p = enc(params.project);
  const envs = (await get(`/api/v2/projects/${p}/environments?limit=1000`)).items || [];
  if (stale()) return;
  if (envs.length === 0) { mount(main, h('h1', {}, `Segments of ${params.project}`), h('p', {}, 'This project has no environment.')); return; }
  const env = envs.find((e) => e.key === query.env) || envs[0];
  const offset = Math.max(0, Number(query.offset) || 0);
  const qs = new URLSearchParams({ limit: String(LIMIT), offset: String(offset), sort: 'name' });
  if (query.q) qs.set('filter', `query equals ${JSON.stringify(query.q)}`);
  const list = await get(`/api/v2/segments/${p}/${enc(env.key)}?${qs}`);
  if (stale()) return;
  const items = list.items || [];
  const go = (o) => navigate(`/projects/${params.project}/segments`, { env: env.key, q: query.q, offset: o || undefined });
  const envSelect = h('select', { id: 'segment-env', onchange: (e) => navigate(`/projects/${params.project}/segments`, { env: e.target.value }) },
    envs.map((e) => h('option', { value: e.key, selected: e.key === env.key }, e.name)));
  const search = h('input', { id: 'segment-q', type: 'search', value: query.q || '', placeholder: 'key, name or description' });
  mount(main,
    h('p', {}, h('a', { href: href('/') }, '← Projects'), ' · ', h('a', { href: href(`/projects/${p}/flags`) }, 'Flags'), ' · ',
      h('a', { href: href(`/projects/${p}/environments`) }, 'Environments')),
    h('h1', {}, `Segments of ${params.project}`),
    h('form', { class: 'row', role: 'search', 'aria-label': 'Find segments', onsubmit: (e) => { e.preventDefault(); navigate(`/projects/${params.project}/segments`, { env: env.key, q: search.value.trim() }); } },
      h('div', {}, h('label', { for: 'segment-env' }, 'Environment'), envSelect),
      h('div', {}, h('label', { for: 'segment-q' }, 'Search'), search),
      h('button', { id: 'segment-find', type: 'submit' }, 'Find')),
    items.length === 0 ? h('p', { id: 'segments-empty' }, query.q ? 'No segment matches.' : 'No segment in this environment. Create one through the API (POST /api/v2/segments/{project}/{environment}).') :
      h('table', { id: 'segments-list' },
        h('caption', { class: 'sr-only' }, `Segments in ${env.name}`),
        h('thead', {}, h('tr', {}, ['Segment', 'Key', 'Tags', 'Included', 'Excluded', 'Rules', 'Changed'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((s) => h('tr', { 'data-key': s.key },
          h('td', {}, h('a', { href: href(`/projects/${p}/segments/${enc(env.key)}/${enc(s.key)}`) }, s.name || s.key),
            s.unbounded ? h('span', { class: 'tag' }, 'big') : null),
          h('td', {}, h('code', {}, s.key)),
          h('td', {}, (s.tags || []).map((t) => h('span', { class: 'tag' }, t))),
          h('td', {}, s.unbounded ? 'big segment' : String(count(s, 'included'))),
          h('td', {}, s.unbounded ? '' : String(count(s, 'excluded'))),
          h('td', {}, String((s.rules || []).length)),
          h('td', {}, when(s.lastModifiedDate)))))),
    (list.totalCount || 0) > LIMIT ? pager({ offset, limit: LIMIT, total: list.totalCount, go }) : null);
}

// count adds the user keys and other kinds' keys of included or excluded.
function count(s, which) {
  return (s[which] || []).length + (s[which + 'Contexts'] || []).reduce((n, t) => n + (t.values || []).length, 0);
}

// byKind groups a segment's included or excluded keys by context kind.
function byKind(s, which) {
  const out = [];
  if ((s[which] || []).length) out.push({ kind: 'user', values: s[which] });
  for (const t of s[which + 'Contexts'] || []) {
    const same = out.find((x) => x.kind === t.contextKind);
    if (same) same.values = [...same.values, ...t.values]; else out.push({ kind: t.contextKind, values: t.values || [] });
  }
  return out;
}

function clause(c) {
  return `${c.contextKind ? c.contextKind + '.' : ''}${c.attribute} ${c.negate ? 'not ' : ''}${c.op} ${(c.values || []).map((v) => JSON.stringify(v)).join(', ')}`;
}

async function renderSegment({ params, main, stale }) {
  const p = enc(params.project);
  const path = `/api/v2/segments/${p}/${enc(params.env)}/${enc(params.segment)}`;
  const [seg, env] = await Promise.all([get(path), get(`/api/v2/projects/${p}/environments/${enc(params.env)}`).catch(() => ({}))]);
  if (stale()) return;
  const out = h('div', { id: 'segment-result' });
  const redraw = () => window.dispatchEvent(new HashChangeEvent('hashchange'));

  // change previews instructions against the segment as read, asks (with
  // the environment's comment rule), sends them, and draws the page anew;
  // a refusal stays on the page with the API's words.
  const change = async (instructions, title) => {
    const { after, skipped } = simulate(seg, instructions);
    const ok = await ask({
      title, confirmLabel: 'Save', comment: true, requireComment: !!env.requireComments,
      body: h('div', { id: 'segment-preview' }, h('ul', {}, instructions.map((i) => h('li', {}, describe(i)))),
        diffTable(diff(seg, after), { caption: 'What saving would change' }),
        skipped.length ? h('p', {}, `Not previewed: ${skipped.join(', ')}`) : null),
    });
    if (!ok) { announce('Nothing changed.'); return; }
    mount(out);
    try {
      await semanticPatch(path, { comment: ok.comment, instructions });
      announce('Segment saved.');
      redraw();
    } catch (e) {
      mount(out, errorBox(e));
      announce(`Not saved: ${e.message}`);
    }
  };

  const targets = (which) => {
    const action = which === 'included' ? 'updateIncluded' : 'updateExcluded';
    const Which = which === 'included' ? 'Included' : 'Excluded';
    const groups = byKind(seg, which);
    return h('section', { 'aria-labelledby': `seg-${which}-h` },
      h('h2', { id: `seg-${which}-h` }, `${Which} targets`),
      groups.length === 0 ? h('p', { class: 'muted' }, `No ${which} target.`) : groups.map((g) => h('div', { class: 'targets', 'data-kind': g.kind, 'data-which': which },
        h('h3', {}, `Context kind ${g.kind}`),
        h('ul', { class: 'keys' }, g.values.map((v) => h('li', { 'data-key': v }, h('code', {}, v), ' ',
          guard(h('button', { class: 'secondary', 'aria-label': `Remove ${g.kind} ${v} from ${which}`,
            onclick: () => change([{ kind: `remove${Which}Targets`, contextKind: g.kind, values: [v] }], `Remove ${v} from ${which} targets?`) }, 'Remove'), seg, action)))))),
      seg.unbounded ? null : addForm(which, Which, action));
  };

  const addForm = (which, Which, action) => {
    const kindIn = h('input', { id: `seg-${which}-kind`, type: 'text', value: 'user', size: 12, required: true });
    const keysIn = h('input', { id: `seg-${which}-keys`, type: 'text', size: 40, required: true, placeholder: 'key-1, key-2' });
    const btn = guard(h('button', { type: 'submit', id: `seg-${which}-add` }, `Add to ${which}`), seg, action);
    return h('form', {
      class: 'row', 'aria-label': `Add ${which} targets`,
      onsubmit: (e) => {
        e.preventDefault();
        const values = keysIn.value.split(/[\s,]+/).filter(Boolean);
        if (!values.length) { mount(out, errorBox(new Error('Name at least one context key.'))); return; }
        change([{ kind: `add${Which}Targets`, contextKind: kindIn.value.trim() || 'user', values }], `Add ${values.length} ${which} target(s)?`);
      },
    },
    h('div', {}, h('label', { for: `seg-${which}-kind` }, 'Context kind'), kindIn),
    h('div', {}, h('label', { for: `seg-${which}-keys` }, 'Context keys'), keysIn),
    btn);
  };

  const del = guard(h('button', {
    class: 'danger', id: 'segment-delete',
    onclick: async () => {
      const ok = await ask({ title: `Delete segment ${seg.name || seg.key}?`, danger: true, confirmLabel: 'Delete',
        message: 'Its targets and rules go with it. A segment that flags still use is refused.' });
      if (!ok) { announce('Nothing deleted.'); return; }
      mount(out);
      try {
        await api('DELETE', path);
        announce('Segment deleted.');
        navigate(`/projects/${params.project}/segments`, { env: params.env });
      } catch (e) { mount(out, errorBox(e)); }
    },
  }, 'Delete segment'), seg, 'deleteSegment');

  mount(main,
    h('p', {}, h('a', { href: href(`/projects/${p}/segments`, { env: params.env }) }, `← Segments in ${env.name || params.env}`)),
    h('h1', {}, seg.name || seg.key),
    seg.description ? h('p', {}, seg.description) : null,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Key'), h('dd', {}, h('code', {}, seg.key)),
      h('dt', {}, 'Environment'), h('dd', {}, env.name || params.env),
      h('dt', {}, 'Tags'), h('dd', {}, (seg.tags || []).length ? seg.tags.map((t) => h('span', { class: 'tag' }, t)) : '—'),
      h('dt', {}, 'Changed'), h('dd', {}, when(seg.lastModifiedDate), ` (version ${seg.version})`),
      seg.unbounded ? [h('dt', {}, 'Big segment'), h('dd', { id: 'segment-big' }, `Members of kind ${seg.unboundedContextKind || 'user'} are kept apart (import or change them through the API); generation ${seg.generation ?? ''}.`)] : null,
      h('dt', {}, 'Used by flags'), h('dd', { id: 'segment-flags' }, (seg._flags || []).length ? seg._flags.map((f) => h('a', { href: href(`/projects/${p}/flags/${enc(f.key)}`), class: 'tag' }, f.name || f.key)) : 'none')),
    out,
    targets('included'),
    targets('excluded'),
    h('h2', {}, 'Rules'),
    (seg.rules || []).length === 0 ? h('p', { class: 'muted' }, 'No rule.') : h('ol', { id: 'segment-rules' }, seg.rules.map((r) => h('li', {},
      r.description ? h('strong', {}, r.description + ': ') : null,
      (r.clauses || []).map((c, i) => [i ? ' and ' : '', h('code', {}, clause(c))]),
      r.weight !== undefined && r.weight !== null ? ` (${r.weight / 1000}% by ${r.bucketBy || 'key'})` : null))),
    h('h2', {}, 'Delete'),
    h('p', {}, del));
}
