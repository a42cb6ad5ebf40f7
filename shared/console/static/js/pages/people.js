// People and rights: members, teams, custom roles and access tokens. Every
// change goes through the public API; what a resource's _access denies is
// disabled with the reason, and creations (which no resource guards yet)
// show the API's 403 as it is.
import { h, mount, announce, when } from '../dom.js';
import { api, get, semanticPatch, jsonPatch, enc } from '../api.js';
import { href, navigate } from '../router.js';
import { guard } from '../access.js';
import { errorBox, ask, pager, secretOnce } from '../ui.js';

export function register(route) {
  route('/members', members, () => 'Members');
  route('/teams', teams, () => 'Teams');
  route('/teams/:key', team, (p) => `Team ${p.key}`);
  route('/roles', roles, () => 'Roles');
  route('/tokens', tokens, () => 'Access tokens');
}

const BUILT_IN = ['reader', 'writer', 'admin', 'no_access'];
const PAGE = 20;

// statementText reads a policy statement as a sentence: "allow updateOn,
// createFlag on proj/*:env/production:flag/*".
export function statementText(s) {
  const acts = s.actions && s.actions.length ? s.actions.join(', ') : `every action but ${(s.notActions || []).join(', ')}`;
  const res = s.resources && s.resources.length ? s.resources.join(', ') : `every resource but ${(s.notResources || []).join(', ')}`;
  return `${s.effect || 'allow'} ${acts} on ${res}`;
}

function policyList(statements) {
  if (!statements || statements.length === 0) return h('span', { class: 'muted' }, 'No statements');
  return h('ul', { class: 'policy' }, statements.map((s) => h('li', { class: s.effect === 'deny' ? 'deny' : 'allow' }, statementText(s))));
}

function roleCell(role, customRoles) {
  return [role ? h('span', {}, role) : null, ...(customRoles || []).map((k) => h('span', { class: 'tag' }, k))];
}

// field is a labelled control; id names both.
function field(label, control) {
  return [h('label', { for: control.id }, label), control];
}

function roleSelect(id, value, withNone) {
  return h('select', { id }, withNone ? h('option', { value: '' }, 'none (custom roles only)') : null,
    BUILT_IN.map((r) => h('option', { value: r, selected: r === value }, r)));
}

// roleChecks offers the account's custom roles as checkboxes in a fieldset.
function roleChecks(prefix, all, chosen, valueOf = (r) => r.key) {
  if (!all.length) return null;
  return h('fieldset', {}, h('legend', {}, 'Custom roles'),
    all.map((r, i) => h('div', { class: 'row' },
      h('input', { type: 'checkbox', id: `${prefix}-${i}`, value: valueOf(r), checked: chosen.includes(r.key) || chosen.includes(r._id) }),
      h('label', { for: `${prefix}-${i}`, class: 'inline' }, `${r.name} (${r.key})`))));
}

function checked(container) {
  return container ? [...container.querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value) : [];
}

// rerun draws the page again after a change, keeping its error visible.
async function rerun(render, ctx, message) {
  try { await render(ctx); } catch (e) { mount(ctx.main, errorBox(e)); }
  if (message) announce(message);
}

// ---- Members ----

async function members(ctx) {
  const { query, main } = ctx;
  const offset = Number(query.offset) || 0;
  const q = query.q || '';
  const [list, teamList, roleList] = await Promise.all([
    get(`/api/v2/members?limit=${PAGE}&offset=${offset}${q ? '&filter=' + enc('query:' + q) : ''}`),
    get('/api/v2/teams?limit=1000').catch(() => ({ items: [] })),
    get('/api/v2/roles?limit=1000').catch(() => ({ items: [] })),
  ]);
  const teamsOf = {};
  for (const t of teamList.items || []) for (const id of t.memberIds || []) (teamsOf[id] = teamsOf[id] || []).push(t);
  const allRoles = roleList.items || [];
  const items = list.items || [];

  const search = h('form', { class: 'row', role: 'search', onsubmit: (e) => { e.preventDefault(); navigate('/members', { q: e.target.elements.q.value.trim() }); } },
    h('label', { for: 'member-q', class: 'inline' }, 'Search members'),
    h('input', { id: 'member-q', name: 'q', type: 'search', value: q }),
    h('button', { type: 'submit', class: 'secondary' }, 'Search'));

  const changeRole = async (m) => {
    const sel = roleSelect('member-role', m.role);
    const boxes = roleChecks('member-cr', allRoles, m.customRoles || []);
    const ok = await ask({ title: `Role of ${m.email}`, confirmLabel: 'Save role', body: h('div', {}, field('Built-in role', sel), boxes) });
    if (!ok) return;
    try {
      await jsonPatch(`/api/v2/members/${enc(m._id)}`, [
        { op: 'replace', path: '/role', value: sel.value },
        { op: 'replace', path: '/customRoles', value: checked(boxes) },
      ]);
      await rerun(members, ctx, `${m.email} is now ${sel.value}.`);
    } catch (e) { mount(status, errorBox(e)); }
  };
  const remove = async (m) => {
    const ok = await ask({ title: 'Remove member', message: `Remove ${m.email} from the account? Their access tokens stop working.`, confirmLabel: 'Remove', danger: true });
    if (!ok) return;
    try {
      await api('DELETE', `/api/v2/members/${enc(m._id)}`);
      await rerun(members, ctx, `${m.email} is removed.`);
    } catch (e) { mount(status, errorBox(e)); }
  };

  const status = h('div', {});
  const table = items.length === 0 ? h('p', {}, q ? 'No member matches.' : 'No member.') :
    h('table', { id: 'members' },
      h('thead', {}, h('tr', {}, ['Member', 'Email', 'Role', 'Teams', 'Last seen', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.map((m) => {
        const roleBtn = guard(h('button', { class: 'secondary', onclick: () => changeRole(m), 'aria-label': `Change role of ${m.email}` }, 'Change role'), m, 'updateMemberRole');
        const delBtn = guard(h('button', { class: 'danger', onclick: () => remove(m), 'aria-label': `Remove ${m.email}` }, 'Remove'), m, 'deleteMember');
        if (m.role === 'owner') {
          for (const b of [roleBtn, delBtn]) if (!b.disabled) { b.disabled = true; b.title = 'The owner keeps the owner role and cannot be removed.'; b.setAttribute('aria-description', b.title); }
        }
        return h('tr', { 'data-id': m._id },
          h('th', { scope: 'row' }, `${m.firstName || ''} ${m.lastName || ''}`.trim() || m.email, m._pendingInvite ? h('span', { class: 'tag' }, 'invited') : null),
          h('td', {}, m.email),
          h('td', { class: 'role' }, roleCell(m.role, m.customRoles)),
          h('td', {}, (teamsOf[m._id] || []).map((t) => h('a', { href: href(`/teams/${enc(t.key)}`), class: 'tag' }, t.name))),
          h('td', {}, m._lastSeen ? when(m._lastSeen) : h('span', { class: 'muted' }, 'never')),
          h('td', { class: 'row' }, roleBtn, delBtn));
      })));

  const formErr = h('div', {});
  const invite = h('form', {
    id: 'invite', onsubmit: async (e) => {
      e.preventDefault();
      const f = e.target.elements;
      mount(formErr);
      try {
        await api('POST', '/api/v2/members', { body: [{ email: f.email.value.trim(), firstName: f.firstName.value.trim(), lastName: f.lastName.value.trim(), role: f.role.value }] });
        await rerun(members, ctx, `${f.email.value.trim()} is invited.`);
      } catch (err) { mount(formErr, errorBox(err)); }
    },
  },
    h('h2', {}, 'Invite a member'),
    field('Email', h('input', { id: 'invite-email', name: 'email', type: 'email', required: true, autocomplete: 'off' })),
    field('First name', h('input', { id: 'invite-first', name: 'firstName' })),
    field('Last name', h('input', { id: 'invite-last', name: 'lastName' })),
    field('Role', Object.assign(roleSelect('invite-role', 'reader'), { name: 'role' })),
    h('p', {}, h('button', { type: 'submit' }, 'Invite')),
    formErr);

  mount(main, h('h1', {}, 'Members'), search, status, table,
    pager({ offset, limit: PAGE, total: list.totalCount || 0, go: (o) => navigate('/members', { q, offset: o }) }), invite);
}

// ---- Teams ----

async function teams(ctx) {
  const { query, main } = ctx;
  const offset = Number(query.offset) || 0;
  const list = await get(`/api/v2/teams?limit=${PAGE}&offset=${offset}`);
  const items = list.items || [];
  const formErr = h('div', {});
  const create = h('form', {
    id: 'create-team', onsubmit: async (e) => {
      e.preventDefault();
      const f = e.target.elements;
      mount(formErr);
      try {
        const t = await api('POST', '/api/v2/teams', { body: { key: f.key.value.trim(), name: f.name.value.trim(), description: f.description.value.trim() } });
        announce(`Team ${t.name} is created.`);
        navigate(`/teams/${enc(t.key)}`);
      } catch (err) { mount(formErr, errorBox(err)); }
    },
  },
    h('h2', {}, 'Create a team'),
    field('Key', h('input', { id: 'team-key', name: 'key', required: true, pattern: '[A-Za-z0-9._-]+', autocomplete: 'off' })),
    field('Name', h('input', { id: 'team-name', name: 'name', required: true })),
    field('Description', h('input', { id: 'team-description', name: 'description' })),
    h('p', {}, h('button', { type: 'submit' }, 'Create team')),
    formErr);
  mount(main, h('h1', {}, 'Teams'),
    items.length === 0 ? h('p', {}, 'No team yet.') :
      h('table', { id: 'teams' },
        h('thead', {}, h('tr', {}, ['Team', 'Key', 'Description', 'Members', 'Custom roles'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((t) => h('tr', {},
          h('th', { scope: 'row' }, h('a', { href: href(`/teams/${enc(t.key)}`) }, t.name)),
          h('td', {}, h('code', {}, t.key)),
          h('td', {}, t.description),
          h('td', {}, String((t.memberIds || []).length)),
          h('td', {}, (t.customRoleKeys || []).map((k) => h('span', { class: 'tag' }, k))))))),
    pager({ offset, limit: PAGE, total: list.totalCount || 0, go: (o) => navigate('/teams', { offset: o }) }),
    create);
}

async function team(ctx) {
  const { params, main } = ctx;
  const path = `/api/v2/teams/${enc(params.key)}`;
  const [t, memberList, roleList] = await Promise.all([
    get(path),
    get('/api/v2/members?limit=1000').catch(() => ({ items: [] })),
    get('/api/v2/roles?limit=1000').catch(() => ({ items: [] })),
  ]);
  const byID = Object.fromEntries((memberList.items || []).map((m) => [m._id, m]));
  const roleByKey = Object.fromEntries((roleList.items || []).map((r) => [r.key, r]));
  const status = h('div', {});
  const change = async (instructions, message) => {
    mount(status);
    try {
      await semanticPatch(path, { instructions });
      await rerun(team, ctx, message);
    } catch (e) { mount(status, errorBox(e)); }
  };
  const name = (id) => (byID[id] ? `${byID[id].firstName || ''} ${byID[id].lastName || ''}`.trim() || byID[id].email : id);

  const outside = (memberList.items || []).filter((m) => !(t.memberIds || []).includes(m._id));
  const addMember = h('select', { id: 'team-add-member' }, outside.map((m) => h('option', { value: m._id }, `${name(m._id)} <${m.email}>`)));
  const addMemberBtn = guard(h('button', { type: 'submit', disabled: outside.length === 0 }, 'Add member'), t, 'updateTeamMembers');
  const freeRoles = (roleList.items || []).filter((r) => !(t.customRoleKeys || []).includes(r.key));
  const addRole = h('select', { id: 'team-add-role' }, freeRoles.map((r) => h('option', { value: r.key }, `${r.name} (${r.key})`)));
  const addRoleBtn = guard(h('button', { type: 'submit', disabled: freeRoles.length === 0 }, 'Add role'), t, 'updateTeamCustomRoles');
  const del = guard(h('button', {
    class: 'danger', onclick: async () => {
      const ok = await ask({ title: 'Delete team', message: `Delete the team ${t.name}? Its members lose the rights its roles gave them.`, confirmLabel: 'Delete team', danger: true });
      if (!ok) return;
      try { await api('DELETE', path); announce(`Team ${t.name} is deleted.`); navigate('/teams'); } catch (e) { mount(status, errorBox(e)); }
    },
  }, 'Delete team'), t, 'deleteTeam');

  mount(main,
    h('p', {}, h('a', { href: href('/teams') }, 'Teams')),
    h('h1', {}, t.name),
    h('p', {}, h('code', {}, t.key), t.description ? ` — ${t.description}` : ''),
    status,
    h('h2', {}, 'Members'),
    (t.memberIds || []).length === 0 ? h('p', {}, 'No member yet.') :
      h('table', { id: 'team-members' },
        h('thead', {}, h('tr', {}, ['Member', 'Email', 'Role', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, t.memberIds.map((id) => h('tr', {},
          h('th', { scope: 'row' }, name(id)),
          h('td', {}, byID[id] ? byID[id].email : ''),
          h('td', {}, byID[id] ? roleCell(byID[id].role, byID[id].customRoles) : ''),
          h('td', {}, guard(h('button', { class: 'secondary', 'aria-label': `Remove ${name(id)} from the team`, onclick: () => change([{ kind: 'removeMembers', values: [id] }], `${name(id)} left ${t.name}.`) }, 'Remove'), t, 'updateTeamMembers')))))),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (addMember.value) change([{ kind: 'addMembers', values: [addMember.value] }], `${name(addMember.value)} joined ${t.name}.`); } },
      h('label', { for: 'team-add-member', class: 'inline' }, 'Member to add'), addMember, addMemberBtn),
    h('h2', {}, 'Custom roles'),
    h('p', { class: 'muted' }, 'Members of the team hold these roles on top of their own.'),
    (t.customRoleKeys || []).length === 0 ? h('p', {}, 'No custom role.') :
      h('table', { id: 'team-roles' },
        h('thead', {}, h('tr', {}, ['Role', 'Policy', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, t.customRoleKeys.map((k) => h('tr', {},
          h('th', { scope: 'row' }, roleByKey[k] ? `${roleByKey[k].name} (${k})` : k),
          h('td', {}, roleByKey[k] ? policyList(roleByKey[k].policy) : ''),
          h('td', {}, guard(h('button', { class: 'secondary', 'aria-label': `Remove role ${k} from the team`, onclick: () => change([{ kind: 'removeCustomRoles', values: [k] }], `${t.name} no longer holds ${k}.`) }, 'Remove'), t, 'updateTeamCustomRoles')))))),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (addRole.value) change([{ kind: 'addCustomRoles', values: [addRole.value] }], `${t.name} holds ${addRole.value}.`); } },
      h('label', { for: 'team-add-role', class: 'inline' }, 'Role to add'), addRole, addRoleBtn),
    h('h2', {}, 'Danger zone'),
    del);
}

// ---- Custom roles ----

const POLICY_EXAMPLE = '[\n  {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]}\n]';

async function roles(ctx) {
  const { main } = ctx;
  const list = await get('/api/v2/roles?limit=1000');
  const items = list.items || [];
  const status = h('div', {});
  const formErr = h('div', { id: 'role-error' });
  const remove = async (r) => {
    const ok = await ask({ title: 'Delete role', message: `Delete the custom role ${r.name} (${r.key})? Members, teams and tokens holding it lose its rights.`, confirmLabel: 'Delete role', danger: true });
    if (!ok) return;
    try { await api('DELETE', `/api/v2/roles/${enc(r.key)}`); await rerun(roles, ctx, `Role ${r.key} is deleted.`); } catch (e) { mount(status, errorBox(e)); }
  };
  const policy = h('textarea', { id: 'role-policy', name: 'policy', rows: 6, cols: 70, spellcheck: 'false', 'aria-describedby': 'role-policy-help' });
  policy.value = POLICY_EXAMPLE;
  const create = h('form', {
    id: 'create-role', onsubmit: async (e) => {
      e.preventDefault();
      const f = e.target.elements;
      mount(formErr);
      let statements;
      try {
        statements = JSON.parse(policy.value);
      } catch (err) {
        mount(formErr, h('div', { class: 'error', role: 'alert' }, `The policy is not JSON: ${err.message}`));
        policy.focus();
        return;
      }
      if (!Array.isArray(statements)) {
        mount(formErr, h('div', { class: 'error', role: 'alert' }, 'The policy must be a JSON array of statements.'));
        policy.focus();
        return;
      }
      try {
        const r = await api('POST', '/api/v2/roles', { body: { key: f.key.value.trim(), name: f.name.value.trim(), description: f.description.value.trim(), policy: statements } });
        await rerun(roles, ctx, `Role ${r.key} is created.`);
      } catch (err) { mount(formErr, errorBox(err)); }
    },
  },
    h('h2', {}, 'Create a custom role'),
    field('Key', h('input', { id: 'role-key', name: 'key', required: true, autocomplete: 'off' })),
    field('Name', h('input', { id: 'role-name', name: 'name', required: true })),
    field('Description', h('input', { id: 'role-description', name: 'description' })),
    field('Policy (JSON statements)', policy),
    h('p', { id: 'role-policy-help', class: 'muted' }, 'Each statement has an effect (allow or deny), actions or notActions, and resources or notResources, e.g. proj/*:env/production:flag/*.'),
    h('p', {}, h('button', { type: 'submit' }, 'Create role')),
    formErr);
  mount(main, h('h1', {}, 'Custom roles'), status,
    items.length === 0 ? h('p', {}, 'No custom role yet.') :
      h('table', { id: 'roles' },
        h('thead', {}, h('tr', {}, ['Role', 'Key', 'Description', 'Policy', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((r) => h('tr', { 'data-key': r.key },
          h('th', { scope: 'row' }, r.name),
          h('td', {}, h('code', {}, r.key)),
          h('td', {}, r.description),
          h('td', {}, policyList(r.policy)),
          h('td', {}, guard(h('button', { class: 'danger', 'aria-label': `Delete role ${r.key}`, onclick: () => remove(r) }, 'Delete'), r, 'deleteRole')))))),
    create);
}

// ---- Access tokens ----

async function tokens(ctx) {
  const { query, main } = ctx;
  const all = query.all === '1';
  const offset = Number(query.offset) || 0;
  // The secret of a create or reset lives in this slot only.
  const secretSlot = h('div', { id: 'token-secret' });
  const status = h('div', {});
  const listBox = h('div', {});
  const roleList = await get('/api/v2/roles?limit=1000').catch(() => ({ items: [] }));
  const allRoles = roleList.items || [];
  const roleName = Object.fromEntries(allRoles.flatMap((r) => [[r._id, r.key], [r.key, r.key]]));

  const reset = async (t) => {
    const ok = await ask({ title: 'Reset token', message: `Reset ${t.name || 'this token'}? Its current value stops working at once; the new one is shown once.`, confirmLabel: 'Reset', danger: true });
    if (!ok) return;
    try {
      const fresh = await api('POST', `/api/v2/tokens/${enc(t._id)}/reset`);
      mount(secretSlot, secretOnce(fresh.token, { what: `value of ${t.name || 'the token'}`, id: 'token-value' }));
      await load();
      announce(`${t.name || 'The token'} is reset; copy its new value now.`);
      secretSlot.querySelector('input').focus();
    } catch (e) { mount(status, errorBox(e)); }
  };
  const remove = async (t) => {
    const ok = await ask({ title: 'Delete token', message: `Delete ${t.name || 'this token'}? Whatever uses it is refused from now on.`, confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try { await api('DELETE', `/api/v2/tokens/${enc(t._id)}`); mount(secretSlot); await load(); announce(`${t.name || 'The token'} is deleted.`); } catch (e) { mount(status, errorBox(e)); }
  };

  async function load() {
    let list;
    try {
      list = await get(`/api/v2/tokens?limit=${PAGE}&offset=${offset}${all ? '&showAll=true' : ''}`);
    } catch (e) { mount(listBox, errorBox(e)); return; }
    const items = list.items || [];
    mount(listBox, items.length === 0 ? h('p', {}, 'No token.') :
      h('table', { id: 'tokens' },
        h('thead', {}, h('tr', {}, ['Token', 'Owner', 'Role', 'Ends with', 'Last used', 'Created', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, items.map((t) => h('tr', { 'data-id': t._id },
          h('th', { scope: 'row' }, t.name || h('span', { class: 'muted' }, 'unnamed'), t.description ? h('div', { class: 'muted' }, t.description) : null),
          h('td', {}, t.serviceToken ? 'service token' : (t._member ? t._member.email : t.memberId)),
          h('td', {}, roleCell(t.role, (t.customRoleIds || []).map((id) => roleName[id] || id)),
            (t.inlineRole || []).length ? h('div', {}, 'Inline policy: ', policyList(t.inlineRole)) : null),
          h('td', {}, h('code', {}, `…${t.token}`)),
          h('td', {}, t.lastUsed ? when(t.lastUsed) : h('span', { class: 'muted' }, 'never')),
          h('td', {}, when(t.creationDate)),
          h('td', { class: 'row' },
            guard(h('button', { class: 'secondary', 'aria-label': `Reset ${t.name || t._id}`, onclick: () => reset(t) }, 'Reset'), t, 'resetAccessToken'),
            guard(h('button', { class: 'danger', 'aria-label': `Delete ${t.name || t._id}`, onclick: () => remove(t) }, 'Delete'), t, 'deleteAccessToken')))))),
    pager({ offset, limit: PAGE, total: list.totalCount || 0, go: (o) => navigate('/tokens', { all: all ? '1' : undefined, offset: o }) }));
  }

  const formErr = h('div', {});
  const boxes = roleChecks('token-cr', allRoles, [], (r) => r._id);
  const create = h('form', {
    id: 'create-token', onsubmit: async (e) => {
      e.preventDefault();
      const f = e.target.elements;
      mount(formErr);
      const body = { name: f.name.value.trim(), description: f.description.value.trim(), serviceToken: f.serviceToken.checked };
      if (f.role.value) body.role = f.role.value;
      const custom = checked(boxes);
      if (custom.length) body.customRoleIds = custom;
      try {
        const t = await api('POST', '/api/v2/tokens', { body });
        e.target.reset();
        mount(secretSlot, secretOnce(t.token, { what: `token ${t.name || ''}`.trim(), id: 'token-value' }));
        await load();
        announce(`Token ${t.name} is created; copy its value now.`);
        secretSlot.querySelector('input').focus();
      } catch (err) { mount(formErr, errorBox(err)); }
    },
  },
    h('h2', {}, 'Create a token'),
    field('Name', h('input', { id: 'token-name', name: 'name', required: true, autocomplete: 'off' })),
    field('Description', h('input', { id: 'token-description', name: 'description' })),
    field('Built-in role', Object.assign(roleSelect('token-role', 'reader', true), { name: 'role' })),
    boxes,
    h('div', { class: 'row' }, h('input', { type: 'checkbox', id: 'token-service', name: 'serviceToken' }),
      h('label', { for: 'token-service', class: 'inline' }, 'Service token (belongs to the account, not to you)')),
    h('p', {}, h('button', { type: 'submit' }, 'Create token')),
    formErr);

  mount(main, h('h1', {}, 'Access tokens'),
    h('p', {}, all ? h('a', { href: href('/tokens') }, 'Show my tokens only') : h('a', { href: href('/tokens', { all: '1' }) }, "Show every member's tokens (admins)")),
    secretSlot, status, listBox, create);
  await load();
}
