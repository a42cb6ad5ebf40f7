// One flag: its settings and variations, and per environment its
// targeting (on/off, individual targets, rules, prerequisites, default
// rule, off variation). Every edit is staged as a semantic patch
// instruction and previewed (the JSON, and the affected part before and
// after) before it is sent. Staged instructions live in sessionStorage, so
// a reload, another page or a conflicting writer loses nothing typed.
import { h, mount, announce, when } from '../dom.js';
import { get, api, enc, semanticPatch } from '../api.js';
import { href, navigate } from '../router.js';
import { errorBox, ask, loading } from '../ui.js';
import { guard, denial } from '../access.js';
import { refusal } from './flags.js';
import { flagEnv } from '../simulate.js';
import { evaluationsChart, usage as readUsage, totals } from './usage.js';

export function register(route) {
  route('/projects/:project/flags/:flag', render, (p) => p.flag);
}

const OPS = ['in', 'endsWith', 'startsWith', 'matches', 'contains', 'lessThan', 'lessThanOrEqual', 'greaterThan',
  'greaterThanOrEqual', 'before', 'after', 'segmentMatch', 'semVerEqual', 'semVerLessThan', 'semVerGreaterThan'];
const TOTAL = 100000; // a rollout's weights add up to this (100%)
const SECTIONS = [['on', 'State'], ['targets', 'Individual targets'], ['rules', 'Rules'], ['prerequisites', 'Prerequisites'],
  ['fallthrough', 'Default rule'], ['offVariation', 'Off variation']];

// other flags of the project, by key, read for their variations (prerequisites).
const others = new Map();

const pendingKey = (s) => `flagplane.pending.${s.project}/${s.key}/${s.envKey}`;
function loadPending(s) {
  try { return JSON.parse(sessionStorage.getItem(pendingKey(s)) || '[]'); } catch { return []; }
}
function savePending(s) {
  if (s.pending.length) sessionStorage.setItem(pendingKey(s), JSON.stringify(s.pending));
  else sessionStorage.removeItem(pendingKey(s));
}

async function render({ params, query, main, stale }) {
  const path = `/api/v2/flags/${enc(params.project)}/${enc(params.flag)}`;
  // expand=access: the page decides its controls by the flag's _access.
  const [flag, envList] = await Promise.all([get(path + '?expand=access'), get(`/api/v2/projects/${enc(params.project)}/environments?limit=1000`)]);
  if (stale()) return;
  const envs = envList.items || [];
  const envKey = envs.some((e) => e.key === query.env) ? query.env : (envs[0] && envs[0].key);
  const s = { project: params.project, key: params.flag, path, flag, envs, envKey, env: envs.find((e) => e.key === envKey) };
  s.pending = loadPending(s);
  s.head = h('section', { 'aria-labelledby': 'flag-name' });
  s.area = h('section', { id: 'env-area', 'aria-label': 'Targeting' });
  s.panel = h('section', { id: 'pending', 'aria-labelledby': 'pending-title' });
  s.msg = h('div', { id: 'flag-msg' });
  s.jump = h('span', { id: 'pending-jump' });
  const insights = h('section', { id: 'insights', 'aria-labelledby': 'insights-title' });
  const select = h('select', { id: 'env-select', onchange: () => navigate(`/projects/${enc(s.project)}/flags/${enc(s.key)}`, { env: select.value }) },
    envs.map((e) => h('option', { value: e.key, selected: e.key === envKey }, e.name)));
  await prerequisiteFlags(s);
  drawHead(s);
  drawArea(s);
  drawPanel(s);
  mount(main,
    h('p', {}, h('a', { href: href(`/projects/${enc(s.project)}/flags`) }, `← Flags of ${s.project}`)),
    s.head, s.msg,
    h('h2', {}, 'Targeting'),
    envs.length ? h('div', { class: 'row' }, h('label', { for: 'env-select' }, 'Environment'), select, notesOf(s.env), s.jump) : h('p', {}, 'The project has no environment.'),
    envs.length ? [s.area, s.panel] : null,
    insights);
  loading(insights, () => drawInsights(s));
}

function notesOf(env) {
  if (!env) return null;
  const n = [];
  if (env.requireComments) n.push('requires a comment for each change');
  if (env.confirmChanges) n.push('asks to confirm each change');
  if (env.approvalSettings && env.approvalSettings.required) n.push('requires approvals');
  return n.length ? h('span', { class: 'reason', id: 'env-notes' }, `${env.name} ${n.join(', ')}.`) : null;
}

// ---- reading a flag for people

function varLabel(flag, i) {
  const v = (flag.variations || [])[i];
  if (!v) return `variation ${i}`;
  return v.name ? `${v.name} (${JSON.stringify(v.value)})` : JSON.stringify(v.value);
}

function serveText(flag, vor) {
  if (!vor) return 'nothing';
  if (vor.rollout) {
    const r = vor.rollout;
    const parts = (r.variations || []).map((w) => `${w.weight / 1000}% ${varLabel(flag, w.variation)}`);
    return `a rollout: ${parts.join(', ')}, by ${r.contextKind || 'user'} ${r.bucketBy || 'key'}`;
  }
  return varLabel(flag, vor.variation);
}

function clauseText(c) {
  return `${c.contextKind || 'user'} ${c.attribute} ${c.negate ? 'not ' : ''}${c.op} ${(c.values || []).map((v) => JSON.stringify(v)).join(', ')}`;
}

// targetGroups merges targets (user) and contextTargets (other kinds; a
// user entry there only marks the order) into [{kind, variation, values}].
function targetGroups(env) {
  const out = [];
  for (const t of env.targets || []) out.push({ kind: t.contextKind || 'user', variation: t.variation, values: t.values || [] });
  for (const t of env.contextTargets || []) {
    if ((t.contextKind || 'user') === 'user' && !(t.values || []).length) continue;
    out.push({ kind: t.contextKind || 'user', variation: t.variation, values: t.values || [] });
  }
  return out.filter((g) => g.values.length);
}

function prereqText(p) {
  const o = others.get(p.key);
  return `${p.key} serves ${o ? varLabel(o, p.variation) : 'variation ' + p.variation}`;
}

// lines describes one section of an environment's targeting, a line per
// fact, so two states compare line by line.
function lines(flag, env, section) {
  switch (section) {
    case 'on': return [env.on ? 'On' : 'Off'];
    case 'targets': return targetGroups(env).map((g) => `${g.kind} ${g.values.join(', ')} → ${varLabel(flag, g.variation)}`);
    case 'rules': return (env.rules || []).map((r, i) => `Rule ${i + 1}${r.description ? ' “' + r.description + '”' : ''}: if ${(r.clauses || []).map(clauseText).join(' and ')} serve ${serveText(flag, r)}`);
    case 'prerequisites': return (env.prerequisites || []).map(prereqText);
    case 'fallthrough': return [`Serve ${serveText(flag, env.fallthrough)}`];
    case 'offVariation': return [`Serve ${env.offVariation === undefined || env.offVariation === null ? 'nothing (the SDK default)' : varLabel(flag, env.offVariation)}`];
  }
  return [];
}

// ---- applying instructions locally, for the preview (simulate.js; the
// server's answer is what counts)

const varIndex = (flag, id) => (flag.variations || []).findIndex((v) => v._id === id);

function simulate(flag, env, list) {
  const { after } = flagEnv({ ...flag, environments: { [ENV]: env } }, ENV, list);
  // Prerequisites name the other flag's variation by id: its index here.
  after.prerequisites = (after.prerequisites || []).map((p) => (typeof p.variation === 'string'
    ? { key: p.key, variation: others.has(p.key) ? varIndex(others.get(p.key), p.variation) : -1 } : p));
  return after;
}
const ENV = 'preview';

// diffView shows, for each section that differs between two states, its
// lines: removed ones struck (diff-del), added ones marked (diff-add).
function diffView(flagA, a, flagB, b, id) {
  const parts = [];
  for (const [sec, title] of SECTIONS) {
    const before = lines(flagA, a, sec);
    const after = lines(flagB, b, sec);
    if (before.join('\n') === after.join('\n')) continue;
    const items = [];
    for (const l of before) if (!after.includes(l)) items.push(h('li', { class: 'diff-del' }, h('span', { class: 'sr-only' }, 'Before: '), '− ', l));
    for (const l of after) if (!before.includes(l)) items.push(h('li', { class: 'diff-add' }, h('span', { class: 'sr-only' }, 'After: '), '+ ', l));
    for (const l of after) if (before.includes(l)) items.push(h('li', {}, '  ', l));
    parts.push(h('h4', {}, title), h('ul', { class: 'diff' }, items));
  }
  return h('div', { id }, parts.length ? parts : h('p', { class: 'muted' }, 'No difference in this environment.'));
}

// ---- the flag's header and settings

function drawHead(s) {
  const f = s.flag;
  const archive = guard(h('button', { type: 'button', class: 'secondary', id: 'archive', onclick: () => archiveFlag(s) }, f.archived ? 'Restore' : 'Archive'), f, 'updateGlobalArchived');
  const del = guard(h('button', { type: 'button', class: 'danger', id: 'delete', onclick: () => deleteFlag(s) }, 'Delete'), f, 'deleteFlag');
  mount(s.head,
    h('h1', { id: 'flag-name' }, f.name || f.key, f.archived ? h('span', { class: 'tag', id: 'archived-badge' }, ' archived') : null),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Key'), h('dd', {}, h('code', { id: 'flag-key' }, f.key)),
      h('dt', {}, 'Kind'), h('dd', {}, `${f.kind}, ${f.temporary ? 'temporary' : 'permanent'}`),
      h('dt', {}, 'Description'), h('dd', {}, f.description || h('span', { class: 'muted' }, 'none')),
      h('dt', {}, 'Tags'), h('dd', {}, (f.tags || []).length ? f.tags.map((t) => h('span', { class: 'tag' }, t)) : h('span', { class: 'muted' }, 'none')),
      h('dt', {}, 'Created'), h('dd', {}, when(f.creationDate)),
      h('dt', {}, 'Version'), h('dd', { id: 'flag-version' }, String(f._version))),
    h('p', { class: 'row' }, archive, denialNote(f, 'updateGlobalArchived'), del, denialNote(f, 'deleteFlag')),
    h('h2', {}, 'Variations'),
    h('table', { id: 'variations' },
      h('thead', {}, h('tr', {}, ['#', 'Name', 'Value', 'Description'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, (f.variations || []).map((v, i) => h('tr', {},
        h('td', {}, String(i)), h('td', {}, v.name || ''), h('td', {}, h('code', {}, JSON.stringify(v.value))), h('td', {}, v.description || ''))))));
}

function denialNote(res, action) {
  const why = denial(res, action);
  return why ? h('span', { class: 'reason' }, why) : null;
}

async function archiveFlag(s) {
  const f = s.flag;
  const verb = f.archived ? 'Restore' : 'Archive';
  const ok = await ask({
    title: `${verb} ${f.name || f.key}?`,
    message: f.archived ? 'The flag comes back to the list and can be changed again.' : 'An archived flag is left out of the list and can no longer be changed until it is restored. SDKs still get it.',
    confirmLabel: verb, comment: true, danger: !f.archived,
  });
  if (!ok) return;
  mount(s.msg);
  try {
    s.flag = await semanticPatch(s.path, { comment: ok.comment, instructions: [{ kind: f.archived ? 'restoreFlag' : 'archiveFlag' }] });
    drawHead(s); drawArea(s); drawPanel(s);
    announce(`${f.name || f.key} is ${s.flag.archived ? 'archived' : 'restored'}.`);
  } catch (e) { mount(s.msg, errorBox(e)); }
}

async function deleteFlag(s) {
  const f = s.flag;
  const ok = await ask({
    title: `Delete ${f.name || f.key}?`,
    message: `This deletes the flag ${f.key} in every environment of ${s.project}. SDKs stop getting it. It cannot be undone.`,
    confirmLabel: 'Delete', danger: true,
  });
  if (!ok) return;
  mount(s.msg);
  try {
    await api('DELETE', s.path);
    for (const e of s.envs) sessionStorage.removeItem(pendingKey({ ...s, envKey: e.key }));
    announce(`${f.name || f.key} is deleted.`);
    navigate(`/projects/${enc(s.project)}/flags`);
  } catch (e) { mount(s.msg, errorBox(e)); }
}

// ---- the environment's targeting, with forms that stage instructions

function stage(s, ins) {
  s.pending.push(ins);
  savePending(s);
  mount(s.msg);
  drawPanel(s);
  announce(`Staged: ${ins.kind}. Review the preview, then send.`);
}

// serveFields: a variation, or a percentage rollout over the variations.
function serveFields(s, prefix, label) {
  const f = s.flag;
  const sel = h('select', { id: `${prefix}-serve` },
    (f.variations || []).map((v, i) => h('option', { value: v._id }, varLabel(f, i))),
    h('option', { value: 'rollout' }, 'A percentage rollout'));
  const weights = (f.variations || []).map((v, i) => h('input', { id: `${prefix}-w${i}`, type: 'number', min: 0, max: 100, step: 'any', size: 5, value: i === 0 ? 100 : 0 }));
  const bucket = h('input', { id: `${prefix}-bucket`, type: 'text', size: 10, placeholder: 'key' });
  const roll = h('fieldset', { hidden: true },
    h('legend', {}, 'Rollout weights (%)'),
    (f.variations || []).map((v, i) => h('span', {}, h('label', { for: `${prefix}-w${i}` }, varLabel(f, i)), weights[i])),
    h('label', { for: `${prefix}-bucket` }, 'Bucket by attribute'), bucket);
  sel.addEventListener('change', () => { roll.hidden = sel.value !== 'rollout'; });
  return {
    el: h('div', {}, h('label', { for: `${prefix}-serve` }, label), sel, roll),
    read() {
      if (sel.value !== 'rollout') return { variationId: sel.value };
      const w = {};
      let total = 0;
      (f.variations || []).forEach((v, i) => { const n = Math.round(Number(weights[i].value || 0) * 1000); total += n; if (n) w[v._id] = n; });
      if (total !== TOTAL) throw new Error(`The rollout's weights add up to ${total / 1000}%; they must add up to 100%.`);
      const out = { rolloutWeights: w };
      if (bucket.value.trim()) out.rolloutBucketBy = bucket.value.trim();
      return out;
    },
  };
}

// clauseFields: one clause (context kind, attribute, operator, values, negate).
function clauseFields(prefix) {
  const kind = h('input', { id: `${prefix}-kind`, type: 'text', size: 8, value: 'user' });
  const attr = h('input', { id: `${prefix}-attr`, type: 'text', size: 12, placeholder: 'e.g. email' });
  const op = h('select', { id: `${prefix}-op` }, OPS.map((o) => h('option', { value: o }, o)));
  const values = h('input', { id: `${prefix}-values`, type: 'text', size: 24, placeholder: 'comma-separated' });
  const negate = h('input', { id: `${prefix}-negate`, type: 'checkbox' });
  return {
    el: h('div', { class: 'row' },
      h('span', {}, h('label', { for: `${prefix}-kind` }, 'Context kind'), kind),
      h('span', {}, h('label', { for: `${prefix}-attr` }, 'Attribute'), attr),
      h('span', {}, h('label', { for: `${prefix}-op` }, 'Operator'), op),
      h('span', {}, h('label', { for: `${prefix}-values` }, 'Values'), values),
      h('span', {}, h('label', { for: `${prefix}-negate` }, 'Negate'), negate)),
    read() {
      const vals = values.value.split(',').map((v) => v.trim()).filter(Boolean);
      if (!attr.value.trim()) throw new Error('A clause needs an attribute.');
      if (!vals.length) throw new Error('A clause needs at least one value.');
      // Numbers and booleans are sent as such for numeric and date operators.
      const typed = vals.map((v) => (/^(lessThan|greaterThan|before|after)/.test(op.value) && v !== '' && !isNaN(Number(v)) ? Number(v) : v));
      return { contextKind: kind.value.trim() || 'user', attribute: attr.value.trim(), op: op.value, values: typed, negate: negate.checked };
    },
  };
}

// form wraps fields in a form whose submit stages what make() answers
// (an error thrown shows next to it).
function form(id, title, fields, submit, make, s, action) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const btn = h('button', { type: 'submit' }, submit);
  guard(btn, s.config, action);
  return h('form', {
    id, class: 'edit',
    onsubmit: (e) => {
      e.preventDefault();
      err.hidden = true;
      try { stage(s, make()); } catch (x) { err.hidden = false; err.textContent = x.message; }
    },
  }, h('h4', {}, title), fields, err, h('p', {}, btn, denialNote(s.config, action)));
}

function drawArea(s) {
  const f = s.flag;
  const c = (f.environments || {})[s.envKey];
  s.config = c;
  if (!c) { mount(s.area, h('p', {}, 'This flag has no targeting in this environment.')); return; }
  const btn = (label, attrs, action, make) => guard(h('button', { type: 'button', class: 'secondary', ...attrs, onclick: () => stage(s, make()) }, label), c, action);
  const variationSelect = (id) => h('select', { id }, (f.variations || []).map((v, i) => h('option', { value: v._id }, varLabel(f, i))));

  // State.
  const state = h('div', {},
    h('h3', {}, 'State'),
    h('p', { class: 'row' }, h('span', { id: 'env-state' }, c.on ? 'On' : 'Off'),
      btn(c.on ? 'Turn off' : 'Turn on', { id: 'stage-toggle' }, 'updateOn', () => ({ kind: c.on ? 'turnFlagOff' : 'turnFlagOn' })),
      denialNote(c, 'updateOn')));

  // Individual targets.
  const groups = targetGroups(c);
  const tkind = h('input', { id: 'target-kind', type: 'text', size: 8, value: 'user' });
  const tkeys = h('input', { id: 'target-keys', type: 'text', size: 30, placeholder: 'comma-separated keys' });
  const tvar = variationSelect('target-variation');
  const targets = h('div', {},
    h('h3', {}, 'Individual targets'),
    groups.length ? h('table', { id: 'targets' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Context kind'), h('th', { scope: 'col' }, 'Serve'), h('th', { scope: 'col' }, 'Keys'))),
      h('tbody', {}, groups.map((g) => h('tr', {}, h('td', {}, g.kind), h('td', {}, varLabel(f, g.variation)),
        h('td', {}, g.values.map((k) => h('span', { class: 'row', style: 'display: inline-flex; margin-right: .8em' }, h('code', {}, k),
          btn('Remove', { 'aria-label': `Remove target ${g.kind} ${k}` }, 'updateTargets',
            () => ({ kind: 'removeTargets', contextKind: g.kind, variationId: f.variations[g.variation]._id, values: [k] })))))))))
      : h('p', { class: 'muted' }, 'No individual target.'),
    form('add-targets', 'Add targets', h('div', { class: 'row' },
      h('span', {}, h('label', { for: 'target-kind' }, 'Context kind'), tkind),
      h('span', {}, h('label', { for: 'target-keys' }, 'Keys'), tkeys),
      h('span', {}, h('label', { for: 'target-variation' }, 'Serve'), tvar)),
    'Stage targets', () => {
      const values = tkeys.value.split(',').map((k) => k.trim()).filter(Boolean);
      if (!values.length) throw new Error('Give at least one key.');
      return { kind: 'addTargets', contextKind: tkind.value.trim() || 'user', variationId: tvar.value, values };
    }, s, 'updateTargets'));

  // Rules.
  const rules = c.rules || [];
  const ids = rules.map((r) => r._id);
  const move = (i, d) => { const o = ids.slice(); [o[i], o[i + d]] = [o[i + d], o[i]]; return { kind: 'reorderRules', ruleIds: o }; };
  const ruleItems = rules.map((r, i) => {
    const serve = serveFields(s, `rule${i}`, 'Serve');
    const clause = clauseFields(`rule${i}-clause`);
    return h('li', { class: 'rule', 'data-rule': r._id },
      h('h4', {}, `Rule ${i + 1}`, r.description ? ` — ${r.description}` : ''),
      h('ul', {}, (r.clauses || []).map((cl) => h('li', { class: 'row' }, h('span', {}, 'If ', clauseText(cl)),
        btn('Remove clause', { 'aria-label': `Remove clause ${clauseText(cl)} of rule ${i + 1}` }, 'updateRules',
          () => ({ kind: 'removeClauses', ruleId: r._id, clauseIds: [cl._id] }))))),
      h('p', {}, 'Serve ', h('strong', {}, serveText(f, r))),
      h('p', { class: 'row' },
        i > 0 ? btn('Move up', { 'aria-label': `Move rule ${i + 1} up` }, 'updateRules', () => move(i, -1)) : null,
        i < rules.length - 1 ? btn('Move down', { 'aria-label': `Move rule ${i + 1} down` }, 'updateRules', () => move(i, 1)) : null,
        btn('Remove rule', { 'aria-label': `Remove rule ${i + 1}` }, 'updateRules', () => ({ kind: 'removeRule', ruleId: r._id }))),
      h('details', {}, h('summary', {}, `Change rule ${i + 1}`),
        form(`rule${i}-serve-form`, 'What it serves', serve.el, 'Stage serve', () => ({ kind: 'updateRuleVariationOrRollout', ruleId: r._id, ...serve.read() }), s, 'updateRules'),
        form(`rule${i}-clause-form`, 'Add a clause', clause.el, 'Stage clause', () => ({ kind: 'addClauses', ruleId: r._id, clauses: [clause.read()] }), s, 'updateRules')));
  });
  const newClause = clauseFields('new-rule-clause');
  const newServe = serveFields(s, 'new-rule', 'Serve');
  const newDesc = h('input', { id: 'new-rule-description', type: 'text', size: 30 });
  const rulesEl = h('div', {},
    h('h3', {}, 'Rules'),
    rules.length ? h('ol', { id: 'rules' }, ruleItems) : h('p', { class: 'muted' }, 'No rule.'),
    form('add-rule', 'Add a rule', [h('label', { for: 'new-rule-description' }, 'Description (optional)'), newDesc, newClause.el, newServe.el],
      'Stage rule', () => {
        const ins = { kind: 'addRule', clauses: [newClause.read()], ...newServe.read() };
        if (newDesc.value.trim()) ins.description = newDesc.value.trim();
        return ins;
      }, s, 'updateRules'));

  // Prerequisites.
  const pkey = h('input', { id: 'prereq-key', type: 'text', size: 20 });
  const pvar = h('select', { id: 'prereq-variation' }, h('option', { value: '' }, 'Give the flag key first'));
  pkey.addEventListener('change', async () => {
    const k = pkey.value.trim();
    mount(pvar, h('option', { value: '' }, k ? 'Reading…' : 'Give the flag key first'));
    if (!k) return;
    try {
      const o = await otherFlag(s, k);
      mount(pvar, (o.variations || []).map((v, i) => h('option', { value: v._id }, varLabel(o, i))));
    } catch (e) { mount(pvar, h('option', { value: '' }, `No flag ${k} here (${e.status || e.message})`)); }
  });
  const prereqs = h('div', {},
    h('h3', {}, 'Prerequisites'),
    (c.prerequisites || []).length ? h('ul', { id: 'prerequisites' }, c.prerequisites.map((p) => h('li', { class: 'row' }, prereqText(p),
      btn('Remove', { 'aria-label': `Remove prerequisite ${p.key}` }, 'updatePrerequisites', () => ({ kind: 'removePrerequisite', key: p.key })))))
      : h('p', { class: 'muted' }, 'No prerequisite.'),
    form('add-prereq', 'Add or change a prerequisite', h('div', { class: 'row' },
      h('span', {}, h('label', { for: 'prereq-key' }, 'Flag key'), pkey),
      h('span', {}, h('label', { for: 'prereq-variation' }, 'Must serve'), pvar)),
    'Stage prerequisite', () => {
      const k = pkey.value.trim();
      if (!k || !pvar.value) throw new Error('Give the key of another flag of the project and the variation it must serve.');
      const exists = (c.prerequisites || []).some((p) => p.key === k);
      return { kind: exists ? 'updatePrerequisite' : 'addPrerequisite', key: k, variationId: pvar.value };
    }, s, 'updatePrerequisites'));

  // Default rule and off variation.
  const fall = serveFields(s, 'fallthrough', 'Serve');
  const offSel = variationSelect('off-variation');
  const defaults = h('div', {},
    h('h3', {}, 'Default rule'),
    h('p', { id: 'fallthrough' }, 'When on and no target or rule matches, serve ', h('strong', {}, serveText(f, c.fallthrough)), '.'),
    form('fallthrough-form', 'Change the default rule', fall.el, 'Stage default rule', () => ({ kind: 'updateFallthroughVariationOrRollout', ...fall.read() }), s, 'updateFallthrough'),
    h('h3', {}, 'Off variation'),
    h('p', { id: 'off' }, 'When off, serve ', h('strong', {}, lines(f, c, 'offVariation')[0].replace(/^Serve /, '')), '.'),
    form('off-form', 'Change the off variation', [h('label', { for: 'off-variation' }, 'Serve'), offSel], 'Stage off variation', () => ({ kind: 'updateOffVariation', variationId: offSel.value }), s, 'updateOffVariation'));

  mount(s.area, f.archived ? h('p', { class: 'notice' }, 'The flag is archived: restore it to change its targeting.') : null,
    state, targets, rulesEl, prereqs, defaults);
}

async function otherFlag(s, key) {
  if (!others.has(key)) others.set(key, await get(`/api/v2/flags/${enc(s.project)}/${enc(key)}?summary=true`));
  return others.get(key);
}

// prerequisiteFlags reads the flags the environment's prerequisites name
// (for their variations' names); a missing one shows its index.
async function prerequisiteFlags(s) {
  const c = (s.flag.environments || {})[s.envKey];
  const keys = [...new Set([...((c && c.prerequisites) || []).map((p) => p.key), ...s.pending.filter((i) => i.key).map((i) => i.key)])];
  await Promise.all(keys.map((k) => otherFlag(s, k).catch(() => null)));
}

// ---- the pending changes: preview, send, conflicts

function drawPanel(s) {
  if (!s.env) return;
  // The panel is below the forms: a link near the environment leads there.
  mount(s.jump, s.pending.length ? h('a', { href: '#pending', onclick: (e) => { e.preventDefault(); s.panel.scrollIntoView(); const b = document.getElementById('send'); if (b) b.focus(); } },
    `${s.pending.length} pending change${s.pending.length > 1 ? 's' : ''}: review and send`) : null);
  const c = (s.flag.environments || {})[s.envKey];
  const list = s.pending;
  const env = s.env;
  if (!list.length) {
    mount(s.panel, h('h2', { id: 'pending-title' }, 'Pending changes'),
      s.conflict || null,
      h('p', { class: 'muted', id: 'no-pending' }, 'No pending change. What you stage above is listed here with a preview before anything is sent.'));
    return;
  }
  const comment = h('textarea', { id: 'send-comment', rows: 2, cols: 50 });
  if (s.draftComment) comment.value = s.draftComment;
  comment.addEventListener('input', () => { s.draftComment = comment.value; });
  const err = h('div', { id: 'send-msg' });
  const send = h('button', { type: 'button', id: 'send', onclick: () => sendPending(s, comment, err, send) }, `Send ${list.length} change${list.length > 1 ? 's' : ''}`);
  let after;
  let previewError = null;
  try { after = simulate(s.flag, c, list); } catch (e) {
    after = c;
    previewError = h('p', { class: 'error', role: 'alert' }, `No preview: ${e.message}. The flag may have changed; discard the change that names what is gone.`);
  }
  mount(s.panel,
    h('h2', { id: 'pending-title' }, `Pending changes in ${env.name}`),
    s.conflict || null,
    h('ol', { id: 'pending-list' }, list.map((ins, i) => h('li', { class: 'row' }, h('code', {}, ins.kind),
      h('button', { type: 'button', class: 'secondary', 'aria-label': `Discard change ${i + 1}, ${ins.kind}`, onclick: () => { s.pending.splice(i, 1); savePending(s); drawPanel(s); announce('Change discarded.'); } }, 'Discard')))),
    h('h3', {}, 'Preview: the instructions sent'),
    h('pre', { id: 'preview-json', tabindex: 0, 'aria-label': 'Semantic patch instructions' }, JSON.stringify({ environmentKey: s.envKey, instructions: list }, null, 2)),
    h('h3', {}, 'Preview: before and after'),
    previewError || diffView(s.flag, c, s.flag, after, 'preview-diff'),
    h('label', { for: 'send-comment' }, env.requireComments ? `Comment (required in ${env.name})` : 'Comment (optional)'), comment,
    err,
    h('p', { class: 'row' }, send,
      h('button', { type: 'button', class: 'secondary', id: 'discard-all', onclick: () => { s.pending = []; savePending(s); drawPanel(s); announce('Pending changes discarded.'); } }, 'Discard all')));
}

async function sendPending(s, commentEl, err, btn) {
  const env = s.env;
  const comment = commentEl.value.trim();
  mount(err);
  if (env.requireComments && !comment) {
    mount(err, h('p', { class: 'error', role: 'alert' }, `${env.name} requires a comment for every change.`));
    commentEl.focus();
    return;
  }
  if (env.confirmChanges) {
    const ok = await ask({ title: `Send ${s.pending.length} change(s) to ${env.name}?`, message: `${env.name} asks to confirm every change.`, confirmLabel: 'Send' });
    if (!ok) return;
  }
  btn.disabled = true;
  try {
    // The semantic patch applies to whatever the flag is now; a flag
    // changed since this page read it is shown first, not overwritten.
    const fresh = await get(s.path + '?expand=access');
    if (fresh._version !== s.flag._version) { conflict(s, fresh); return; }
    const next = await semanticPatch(s.path, { environmentKey: s.envKey, comment, instructions: s.pending });
    s.flag = next;
    s.pending = [];
    s.draftComment = '';
    s.conflict = null;
    savePending(s);
    drawHead(s); drawArea(s); drawPanel(s);
    mount(s.msg, h('p', { class: 'notice ok', id: 'sent' }, `Saved in ${env.name}: version ${next._version}.`));
    announce(`Changes saved in ${env.name}.`);
  } catch (e) {
    if (e.status === 409) {
      try { conflict(s, await get(s.path + '?expand=access')); return; } catch { /* show the 409 itself */ }
    }
    mount(err, refusal(e, { project: s.project, flag: s.flag, env, instructions: s.pending, comment }));
    announce(`Not saved: ${e.message}`);
  } finally {
    btn.disabled = false;
  }
}

// conflict shows what another writer changed in this environment since
// the page read the flag; the pending instructions stay, and can be
// re-applied on the new version after a look at the new preview.
function conflict(s, fresh) {
  const a = (s.flag.environments || {})[s.envKey] || {};
  const b = (fresh.environments || {})[s.envKey] || {};
  const flagFields = ['name', 'description', 'archived', 'temporary'].filter((k) => JSON.stringify(s.flag[k]) !== JSON.stringify(fresh[k]));
  if (JSON.stringify(s.flag.variations) !== JSON.stringify(fresh.variations)) flagFields.push('variations');
  if (JSON.stringify(s.flag.tags) !== JSON.stringify(fresh.tags)) flagFields.push('tags');
  s.conflict = h('div', { class: 'error', role: 'alert', id: 'conflict' },
    h('p', {}, h('strong', {}, 'Someone changed this flag since you opened it '), `(version ${s.flag._version} → ${fresh._version}). Nothing was sent; your ${s.pending.length} pending change(s) are kept.`),
    h('h3', {}, `What changed in ${s.env.name}`),
    diffView(s.flag, a, fresh, b, 'conflict-diff'),
    flagFields.length ? h('p', {}, `Also changed on the flag: ${flagFields.join(', ')}.`) : null,
    h('p', {}, h('button', {
      type: 'button', id: 'reapply',
      onclick: async () => {
        s.flag = fresh;
        s.conflict = null;
        await prerequisiteFlags(s);
        drawHead(s); drawArea(s); drawPanel(s);
        announce('Your pending changes are now previewed on the new version. Review, then send.');
        const b2 = document.getElementById('send');
        if (b2) b2.focus();
      },
    }, 'Re-apply my changes on the new version')));
  drawPanel(s);
  announce('The flag changed meanwhile: see what changed.');
  document.getElementById('reapply').focus();
}

// ---- insights: last change, code references, staleness

async function drawInsights(s) {
  const f = s.flag;
  const [last, refs, usage] = await Promise.all([lastChange(s), codeRefs(s), evaluations(s)]);
  return h('div', {},
    h('h2', { id: 'insights-title' }, 'Insights'),
    h('h3', {}, 'Last changed'), last,
    h('h3', {}, 'Stale?'), staleness(f, usage),
    s.env ? [h('h3', {}, `Evaluations in ${s.env.name}, last 7 days`), await evaluationsChart(s.project, s.envKey, s.key, { variations: f.variations }).catch((e) => errorBox(e))] : null,
    h('h3', {}, 'Code references'), refs);
}

async function lastChange(s) {
  const f = s.flag;
  try {
    // Entries about the flag include other resources' (code references
    // uploaded, say): the last change is the flag's own.
    const log = await get(`/api/v2/auditlog?limit=20&spec=${enc(`proj/${s.project}:env/*:flag/${f.key}`)}`);
    const e = (log.items || []).find((x) => x.kind === 'flag');
    if (e) {
      return h('p', { id: 'last-change' }, `${when(e.date)}: ${e.title || e.description || e.kind}`,
        e.comment ? h('span', {}, ' — “', e.comment, '”') : null);
    }
  } catch (e) {
    if (e.status !== 403) throw e;
  }
  // No audit entry readable: the flag's own times.
  const t = Math.max(f.creationDate || 0, ...Object.values(f.environments || {}).map((c) => c.lastModified || 0));
  return h('p', { id: 'last-change' }, when(t), h('span', { class: 'muted' }, ' (from the flag; the audit log is not readable with this token)'));
}

async function codeRefs(s) {
  let repos;
  try {
    repos = await get(`/api/v2/code-refs/repositories?withReferencesForDefaultBranch=1&projKey=${enc(s.project)}&flagKey=${enc(s.key)}`);
  } catch (e) {
    if (e.status === 403) return h('p', { id: 'code-refs' }, 'This token may not read code references.');
    throw e;
  }
  const rows = [];
  for (const r of repos.items || []) {
    for (const b of r.branches || []) {
      for (const ref of b.references || []) {
        const hunks = (ref.hunks || []).filter((x) => !x.flagKey || x.flagKey === s.key);
        if (!hunks.length) continue;
        const lineCount = hunks.reduce((n, x) => n + (x.lines ? x.lines.split('\n').length : 0), 0);
        rows.push(h('tr', {}, h('td', {}, r.name), h('td', {}, b.name), h('td', {}, h('code', {}, ref.path)),
          h('td', {}, String(hunks.length)), h('td', {}, hunks.map((x) => x.startingLineNumber).join(', ')), h('td', {}, String(lineCount))));
      }
    }
  }
  if (!(repos.items || []).length) return h('p', { id: 'code-refs' }, 'No repository reports code references yet (ld-find-code-refs uploads them).');
  if (!rows.length) return h('p', { id: 'code-refs' }, `Not referenced in the default branch of ${repos.items.length} repositor${repos.items.length === 1 ? 'y' : 'ies'}.`);
  return h('table', { id: 'code-refs' },
    h('thead', {}, h('tr', {}, ['Repository', 'Branch', 'File', 'Places', 'Starting lines', 'Lines shown'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
}

// evaluations answers the flag's evaluations of the last 7 days in each
// environment ({env: count}), or null when usage cannot be read.
async function evaluations(s) {
  const since = Date.now() - 7 * 86400000;
  try {
    const out = {};
    await Promise.all(s.envs.map(async (e) => {
      const u = await readUsage(`/api/v2/usage/evaluations/${enc(s.project)}/${enc(e.key)}/${enc(s.key)}?from=${since}&to=${Date.now()}`);
      out[e.key] = totals(u).reduce((n, p) => n + p.value, 0);
    }));
    return out;
  } catch {
    return null;
  }
}

// staleness: a temporary flag is stale when nothing evaluated it for 7
// days, or when every environment serves one variation to everyone
// (launched: ready to remove from code). A flag younger than 7 days, or
// one whose usage cannot be read, is not judged.
function staleness(f, usage) {
  const age = Date.now() - (f.creationDate || 0);
  const p = (text, cls) => h('p', { id: 'stale', class: cls || '' }, text);
  if (!usage) return p('Not enough data: the evaluation counts cannot be read with this token.');
  if (age < 7 * 86400000) return p(`Not enough data: the flag is ${Math.floor(age / 86400000)} day(s) old; flags are judged after 7 days of evaluations.`);
  const total = Object.values(usage).reduce((a, b) => a + b, 0);
  const envs = Object.values(f.environments || {});
  const launched = envs.length && envs.every((c) => c.on && !(c.rules || []).length && !targetGroups(c).length && c.fallthrough && c.fallthrough.variation !== undefined);
  if (total === 0) return p(f.temporary ? 'Stale: no evaluation in the last 7 days. Remove it from code, then archive it.' : 'Inactive: no evaluation in the last 7 days (the flag is permanent).');
  if (launched && f.temporary) return p(`Stale: launched — every environment serves one variation to everyone (${total} evaluations in 7 days). Remove it from code.`);
  return p(`Active: ${total} evaluation(s) in the last 7 days (${Object.entries(usage).map(([k, n]) => `${k} ${n}`).join(', ')}).`);
}
