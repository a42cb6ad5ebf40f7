// A small JSON diff for the audit log and approvals: walk two values and
// list every path that was added, removed or changed, with its old and new
// value. No library: the console stays small and auditable.
import { h } from './dom.js';

// Fields every write bumps (versions, times, hashes): shown apart, so the
// diff of an entry leads with what a person changed.
const BOOKKEEPING = new Set(['_version', 'version', 'lastModified', 'lastModifiedDate', 'sel', 'generation', '_lastModified']);

const isObj = (v) => v !== null && typeof v === 'object';

// diff answers [{path, kind: 'add'|'del'|'change', before, after}] from a
// to b; path is a JSON pointer ('' for the whole value).
export function diff(a, b, path = '', out = []) {
  if (a === undefined && b === undefined) return out;
  if (a === undefined) { out.push({ path, kind: 'add', after: b }); return out; }
  if (b === undefined) { out.push({ path, kind: 'del', before: a }); return out; }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diff(a[i], b[i], `${path}/${i}`, out);
    return out;
  }
  if (isObj(a) && isObj(b) && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of [...keys].sort()) diff(a[k], b[k], `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, kind: 'change', before: a, after: b });
  return out;
}

// bookkeeping tells a change of a version counter or time stamp.
export function bookkeeping(change) {
  const last = change.path.split('/').pop();
  return BOOKKEEPING.has(last);
}

const show = (v) => (v === undefined ? '' : JSON.stringify(v, null, 1));

// diffTable renders changes as a table: path, before (.diff-del), after
// (.diff-add). Bookkeeping changes go to a closed details element below.
export function diffTable(changes, { caption = 'Changes', id } = {}) {
  const main = changes.filter((c) => !bookkeeping(c));
  const rest = changes.filter(bookkeeping);
  const table = (rows, cap) => h('table', { class: 'diff', id },
    h('caption', { class: 'sr-only' }, cap),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'What'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h('tbody', {}, rows.map((c) => h('tr', { 'data-path': c.path, 'data-kind': c.kind },
      h('th', { scope: 'row' }, h('code', {}, c.path || '(whole)')),
      h('td', {}, { add: 'added', del: 'removed', change: 'changed' }[c.kind]),
      h('td', {}, c.kind === 'add' ? '' : h('pre', { class: 'diff-del' }, show(c.before))),
      h('td', {}, c.kind === 'del' ? '' : h('pre', { class: 'diff-add' }, show(c.after)))))));
  return h('div', {},
    main.length ? table(main, caption) : h('p', { class: 'muted' }, 'No field changed.'),
    rest.length ? h('details', {}, h('summary', {}, `Versions and times (${rest.length})`),
      h('ul', {}, rest.map((c) => h('li', {}, h('code', {}, c.path), `: ${show(c.before)} → ${show(c.after)}`)))) : null);
}
