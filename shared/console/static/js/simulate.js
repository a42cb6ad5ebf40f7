// What semantic patch instructions would do, worked out in the browser
// for a preview: the approvals page diffs a request against the flag or
// segment as it is now, and the segments page shows an edit before it is
// sent. The server stays the judge: it applies the instructions (or
// refuses them); this only tells a person what to expect. Kinds not
// known here are listed as not previewed rather than guessed.

const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// variationIndex maps a variation _id to its index in flag.variations.
function variationIndex(flag, id) {
  const i = (flag.variations || []).findIndex((v) => v._id === id);
  return i < 0 ? id : i;
}

// serve turns an instruction's variationId or rolloutWeights into the
// variation-or-rollout shape the flag stores.
function serve(flag, ins) {
  if (ins.variationId !== undefined) return { variation: variationIndex(flag, ins.variationId) };
  if (ins.rolloutWeights) {
    const rollout = { variations: Object.entries(ins.rolloutWeights).map(([id, weight]) => ({ variation: variationIndex(flag, id), weight })) };
    if (ins.rolloutBucketBy) rollout.bucketBy = ins.rolloutBucketBy;
    if (ins.rolloutContextKind) rollout.contextKind = ins.rolloutContextKind;
    return { rollout };
  }
  return {};
}

// targetList finds (or makes) the list of keys served variation v to
// contexts of kind: user targets live in targets, others in contextTargets.
function targetList(env, kind, v, make) {
  const user = !kind || kind === 'user';
  const field = user ? 'targets' : 'contextTargets';
  env[field] = env[field] || [];
  let t = env[field].find((x) => x.variation === v && (user || x.contextKind === kind));
  if (!t && make) {
    t = user ? { values: [], variation: v } : { contextKind: kind, values: [], variation: v };
    env[field].push(t);
  }
  return t;
}

function addValues(list, values) { for (const x of values || []) if (!list.includes(x)) list.push(x); }
function removeValues(list, values) { return list.filter((x) => !(values || []).includes(x)); }

function rule(env, id) {
  const r = (env.rules || []).find((x) => x._id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
}

// flagEnv applies instructions to a copy of a flag's environment settings
// (flag.environments[envKey]); it answers {after, skipped: [kinds]}.
export function flagEnv(flag, envKey, instructions) {
  const env = clone((flag.environments || {})[envKey] || {});
  const skipped = [];
  for (const ins of instructions || []) {
    const kind = ins.kind;
    switch (kind) {
      case 'turnFlagOn': env.on = true; break;
      case 'turnFlagOff': env.on = false; break;
      case 'addTargets': case 'addUserTargets': {
        const t = targetList(env, kind === 'addUserTargets' ? 'user' : ins.contextKind, variationIndex(flag, ins.variationId), true);
        addValues(t.values, ins.values);
        break;
      }
      case 'removeTargets': case 'removeUserTargets': {
        const t = targetList(env, kind === 'removeUserTargets' ? 'user' : ins.contextKind, variationIndex(flag, ins.variationId), false);
        if (t) t.values = removeValues(t.values, ins.values);
        break;
      }
      case 'clearTargets': case 'clearUserTargets': env.targets = []; if (kind === 'clearTargets') env.contextTargets = []; break;
      case 'updateFallthroughVariationOrRollout': env.fallthrough = serve(flag, ins); break;
      case 'updateOffVariation': env.offVariation = variationIndex(flag, ins.variationId); break;
      case 'addRule': {
        const r = { clauses: clone(ins.clauses || []), ...serve(flag, ins) };
        if (ins.description) r.description = ins.description;
        env.rules = env.rules || [];
        const at = ins.beforeRuleId ? env.rules.findIndex((x) => x._id === ins.beforeRuleId) : -1;
        if (at < 0) env.rules.push(r); else env.rules.splice(at, 0, r);
        break;
      }
      case 'removeRule': env.rules = (env.rules || []).filter((x) => x._id !== ins.ruleId); break;
      case 'reorderRules': env.rules = (ins.ruleIds || []).map((id) => rule(env, id)); break;
      case 'updateRuleDescription': rule(env, ins.ruleId).description = ins.description; break;
      case 'updateRuleVariationOrRollout': {
        const r = rule(env, ins.ruleId);
        delete r.variation; delete r.rollout;
        Object.assign(r, serve(flag, ins));
        break;
      }
      case 'addClauses': rule(env, ins.ruleId).clauses.push(...clone(ins.clauses || [])); break;
      case 'removeClauses': { const r = rule(env, ins.ruleId); r.clauses = r.clauses.filter((c) => !(ins.clauseIds || []).includes(c._id)); break; }
      case 'addValuesToClause': case 'removeValuesFromClause': {
        const c = rule(env, ins.ruleId).clauses.find((x) => x._id === ins.clauseId);
        if (!c) throw new Error(`no clause ${ins.clauseId}`);
        c.values = kind === 'addValuesToClause' ? [...c.values, ...ins.values.filter((v) => !c.values.includes(v))] : removeValues(c.values, ins.values);
        break;
      }
      case 'addPrerequisite': env.prerequisites = [...(env.prerequisites || []), { key: ins.key, variation: ins.variationId }]; break;
      case 'removePrerequisite': env.prerequisites = (env.prerequisites || []).filter((p) => p.key !== ins.key); break;
      case 'updatePrerequisite': env.prerequisites = (env.prerequisites || []).map((p) => (p.key === ins.key ? { key: p.key, variation: ins.variationId } : p)); break;
      default: skipped.push(kind);
    }
  }
  // Empty target lists are dropped, as the server stores them.
  if (env.targets) env.targets = env.targets.filter((t) => t.values.length);
  if (env.contextTargets) env.contextTargets = env.contextTargets.filter((t) => t.values.length);
  return { after: env, skipped };
}

// segment applies target instructions to a copy of a segment; it
// answers {after, skipped: [kinds]}.
export function segment(seg, instructions) {
  const s = clone(seg);
  const skipped = [];
  for (const ins of instructions || []) {
    const m = /^(add|remove)(Included|Excluded)(Targets|Users)$/.exec(ins.kind || '');
    if (!m) { skipped.push(ins.kind); continue; }
    const add = m[1] === 'add';
    const which = m[2].toLowerCase();
    const kind = m[3] === 'Users' ? 'user' : ins.contextKind || 'user';
    if (kind === 'user') {
      s[which] = s[which] || [];
      if (add) addValues(s[which], ins.values); else s[which] = removeValues(s[which], ins.values);
    } else {
      const field = which + 'Contexts';
      s[field] = s[field] || [];
      let t = s[field].find((x) => x.contextKind === kind);
      if (!t && add) { t = { contextKind: kind, values: [] }; s[field].push(t); }
      if (t) { if (add) addValues(t.values, ins.values); else t.values = removeValues(t.values, ins.values); }
      s[field] = s[field].filter((x) => x.values.length);
    }
  }
  return { after: s, skipped };
}

// describe says in a few words what one instruction asks.
export function describe(ins) {
  const vals = (ins.values || []).join(', ');
  switch (ins.kind) {
    case 'turnFlagOn': return 'Turn the flag on';
    case 'turnFlagOff': return 'Turn the flag off';
    case 'addTargets': case 'addUserTargets': return `Target ${ins.contextKind || 'user'} ${vals}`;
    case 'removeTargets': case 'removeUserTargets': return `Stop targeting ${ins.contextKind || 'user'} ${vals}`;
    case 'addIncludedTargets': case 'addIncludedUsers': return `Include ${ins.contextKind || 'user'} ${vals}`;
    case 'removeIncludedTargets': case 'removeIncludedUsers': return `Stop including ${ins.contextKind || 'user'} ${vals}`;
    case 'addExcludedTargets': case 'addExcludedUsers': return `Exclude ${ins.contextKind || 'user'} ${vals}`;
    case 'removeExcludedTargets': case 'removeExcludedUsers': return `Stop excluding ${ins.contextKind || 'user'} ${vals}`;
    case 'addRule': return `Add a rule${ins.description ? ' "' + ins.description + '"' : ''} of ${(ins.clauses || []).length} clause(s)`;
    case 'removeRule': return `Remove rule ${ins.ruleId}`;
    case 'updateFallthroughVariationOrRollout': return 'Change the default rule (fallthrough)';
    case 'updateOffVariation': return 'Change the off variation';
    default: return ins.kind;
  }
}
