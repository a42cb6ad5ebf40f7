// Usage: context counts, SDK events and evaluations per flag, drawn as
// small charts from the usage API (beta). sparkline() and
// evaluationsChart() are exported so other pages (a flag's page) can show
// the same charts.
import { h, mount } from '../dom.js';
import { api, get, enc } from '../api.js';
import { href, navigate } from '../router.js';

export function register(route) {
  route('/usage', render, () => 'Usage');
}

const BETA = { headers: { 'SVC-API-Version': 'beta' } };
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const num = (n) => Number(n).toLocaleString('en-US');

// usage reads a usage operation, which the API serves as beta only.
export const usage = (path) => api('GET', path, BETA);

const NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const k of kids) if (k) el.appendChild(k);
  return el;
}

// totals turns a series answer into one value per point: the sum of its
// groups (variations, context kinds, SDKs).
export function totals(answer) {
  return (answer.series || []).map((p) => ({
    time: p.time,
    value: Object.entries(p).reduce((s, [k, v]) => (k === 'time' ? s : s + Number(v || 0)), 0),
  }));
}

// sparkline draws points ([{time, value}]) as a small bar chart: an SVG
// with role="img" whose label sums the data up (points, range, total when
// the values add up, highest, latest), and a visually hidden table of every
// value for screen readers. total: false for counts that do not add up
// (distinct contexts).
export function sparkline(points, { label = 'Series', total = true, width = 168, height = 36 } = {}) {
  const n = points.length;
  const hourly = n > 1 && points[1].time - points[0].time < DAY;
  const fmt = (t) => (hourly
    ? new Date(t).toLocaleString('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' })
    : new Date(t).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' }));
  let max = 0;
  let peak = null;
  let sum = 0;
  for (const p of points) {
    sum += p.value;
    if (p.value > max) { max = p.value; peak = p; }
  }
  const last = n ? points[n - 1].value : 0;
  const summary = `${label}: ${n} ${hourly ? 'hourly' : 'daily'} point${n === 1 ? '' : 's'}` +
    (n ? ` from ${fmt(points[0].time)} to ${fmt(points[n - 1].time)}` : '') +
    `; ${total ? `total ${num(sum)}, ` : ''}highest ${num(max)}${peak ? ` (${fmt(peak.time)})` : ''}, latest ${num(last)}.`;
  const slot = n ? width / n : width;
  const bar = Math.max(1, slot * 0.75);
  const chart = svg('svg', { class: 'spark', role: 'img', 'aria-label': summary, viewBox: `0 0 ${width} ${height}`, width, height, focusable: 'false', 'data-points': n, 'data-total': sum },
    ...points.map((p, i) => {
      const bh = max ? Math.max(p.value ? 1 : 0, (p.value / max) * (height - 2)) : 0;
      return svg('rect', { class: 'bar', x: (i * slot).toFixed(2), y: (height - 1 - bh).toFixed(2), width: bar.toFixed(2), height: bh.toFixed(2) },
        svg('title', {}, document.createTextNode(`${fmt(p.time)}: ${num(p.value)}`)));
    }),
    svg('line', { class: 'base', x1: 0, x2: width, y1: height - 0.5, y2: height - 0.5 }));
  const table = h('table', { class: 'sr-only' },
    h('caption', {}, label),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, hourly ? 'Hour' : 'Day'), h('th', { scope: 'col' }, 'Value'))),
    h('tbody', {}, points.map((p) => h('tr', {}, h('th', { scope: 'row' }, fmt(p.time)), h('td', {}, num(p.value))))));
  // An all-zero chart is a bare baseline: say so in words too (the label already does for screen readers).
  return h('span', { class: 'sparkline' }, chart, max === 0 ? h('span', { class: 'muted', 'aria-hidden': 'true' }, ' none in this period') : null, table);
}

// rangeOf answers from and to (Unix ms) for a range name: 24h is hourly,
// 7d and 30d daily (the API picks hourly up to two days).
function rangeOf(name, now = Date.now()) {
  const span = { '24h': DAY - HOUR, '7d': 7 * DAY, '30d': 30 * DAY }[name] || 7 * DAY;
  return { from: now - span, to: now };
}

// evaluationsChart fetches a flag's evaluations in one environment and
// draws them: a sparkline of all variations together and the total of
// each variation (named from the flag's variations when given).
export async function evaluationsChart(projectKey, envKey, flagKey, { range = '7d', variations } = {}) {
  const { from, to } = rangeOf(range);
  const answer = await usage(`/api/v2/usage/evaluations/${enc(projectKey)}/${enc(envKey)}/${enc(flagKey)}?from=${from}&to=${to}`);
  const points = totals(answer);
  const sum = points.reduce((s, p) => s + p.value, 0);
  const byVariation = (answer.metadata || []).map((m, i) => {
    const v = m.variation;
    const idx = Number(v);
    const name = Number.isInteger(idx) && variations && variations[idx] ? (variations[idx].name || JSON.stringify(variations[idx].value)) : v;
    return { name: v === 'default' ? 'SDK default' : v === 'unknown' ? 'flag unknown to the SDK' : `${name}`, count: (answer.series || []).reduce((s, p) => s + Number(p[String(i)] || 0), 0) };
  });
  return h('div', { class: 'evaluations' },
    sparkline(points, { label: `Evaluations of ${flagKey} in ${envKey}` }),
    h('p', {}, `${num(sum)} evaluations`, byVariation.length ? `: ${byVariation.map((v) => `${v.name} ${num(v.count)}`).join(', ')}` : ''));
}

// MAX_FLAGS bounds the flags whose evaluations the top list reads (one
// request each, CONCURRENCY at a time).
const MAX_FLAGS = 100;
const CONCURRENCY = 6;

async function pool(items, work) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      try { out[i] = await work(items[i]); } catch (e) { out[i] = { error: e }; }
    }
  }));
  return out;
}

async function render({ query, main, stale }) {
  const projects = (await get('/api/v2/projects?limit=1000&expand=environments')).items || [];
  if (projects.length === 0) {
    mount(main, h('h1', {}, 'Usage'), h('p', {}, 'No project yet.'));
    return;
  }
  const project = projects.find((p) => p.key === query.project) || projects[0];
  const envs = (project.environments && project.environments.items) || [];
  const env = envs.find((e) => e.key === query.env) || envs.find((e) => e.key === 'production') || envs[0];
  const range = ['24h', '7d', '30d'].includes(query.range) ? query.range : '7d';
  const go = (changes) => navigate('/usage', { project: project.key, env: env && env.key, range, ...changes });

  const pick = h('form', { class: 'row', id: 'usage-pick', onsubmit: (e) => e.preventDefault() },
    h('label', { for: 'usage-project', class: 'inline' }, 'Project'),
    h('select', { id: 'usage-project', onchange: (e) => go({ project: e.target.value, env: undefined }) },
      projects.map((p) => h('option', { value: p.key, selected: p.key === project.key }, p.name))),
    h('label', { for: 'usage-env', class: 'inline' }, 'Environment'),
    h('select', { id: 'usage-env', onchange: (e) => go({ env: e.target.value }) },
      envs.map((e) => h('option', { value: e.key, selected: env && e.key === env.key }, e.name))),
    h('label', { for: 'usage-range', class: 'inline' }, 'Period'),
    h('select', { id: 'usage-range', onchange: (e) => go({ range: e.target.value }) },
      [['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days']].map(([v, l]) => h('option', { value: v, selected: v === range }, l))));
  if (!env) {
    mount(main, h('h1', {}, 'Usage'), pick, h('p', {}, 'This project has no environment.'));
    return;
  }

  const { from, to } = rangeOf(range);
  const filter = `projectKey=${enc(project.key)}&environmentKey=${enc(env.key)}`;
  // Contexts are counted by day (hour cells are rolled up into days).
  const ctxFrom = Math.min(from, to - DAY);
  const [contexts, month, events, flagList] = await Promise.all([
    usage(`/api/v2/usage/total-contexts?${filter}&aggregationType=incremental&granularity=daily&from=${ctxFrom}&to=${to}`),
    usage(`/api/v2/usage/total-contexts?${filter}&aggregationType=month_to_date&granularity=daily`),
    usage(`/api/v2/usage/events/received?from=${from}&to=${to}`),
    get(`/api/v2/flags/${enc(project.key)}?limit=${MAX_FLAGS}&summary=true`),
  ]);
  if (stale()) return;
  const monthPoints = totals(month);
  const monthTotal = monthPoints.length ? monthPoints[monthPoints.length - 1].value : 0;

  const flags = flagList.items || [];
  const counted = await pool(flags, async (f) => {
    const a = await usage(`/api/v2/usage/evaluations/${enc(project.key)}/${enc(env.key)}/${enc(f.key)}?from=${from}&to=${to}`);
    const points = totals(a);
    return { flag: f, points, total: points.reduce((s, p) => s + p.value, 0) };
  });
  if (stale()) return;
  const failed = counted.filter((c) => c.error);
  const used = counted.filter((c) => !c.error && c.total > 0).sort((a, b) => b.total - a.total || a.flag.key.localeCompare(b.flag.key));
  const top = used.slice(0, 20);

  mount(main,
    h('h1', {}, 'Usage'),
    pick,
    h('section', { 'aria-labelledby': 'usage-contexts' },
      h('h2', { id: 'usage-contexts' }, 'Contexts'),
      h('p', { id: 'contexts-month' }, `Distinct contexts in ${env.name} this month: ${num(monthTotal)}.`),
      h('div', { id: 'contexts-chart' }, sparkline(totals(contexts), { label: `Distinct contexts per day in ${env.name}`, total: false })),
      h('p', { class: 'muted' }, 'Counted from the SDK events received, the current hour included: its events count as soon as they arrive.')),
    h('section', { 'aria-labelledby': 'usage-events' },
      h('h2', { id: 'usage-events' }, 'SDK events received'),
      h('div', { id: 'events-chart' }, sparkline(totals(events), { label: 'SDK events received, whole account' }))),
    h('section', { 'aria-labelledby': 'usage-top' },
      h('h2', { id: 'usage-top' }, `Top flags by evaluations in ${env.name}`),
      flagList.totalCount > flags.length ? h('p', { class: 'muted' }, `Counted over the first ${flags.length} of ${flagList.totalCount} flags.`) : null,
      failed.length ? h('p', { class: 'error', role: 'alert' }, `${failed.length} flags' evaluations could not be read: ${failed[0].error.message}`) : null,
      top.length === 0 ? h('p', { id: 'no-evaluations' }, 'No flag was evaluated in this period.') :
        h('table', { id: 'top-flags' },
          h('thead', {}, h('tr', {}, ['Flag', 'Evaluations', 'Over time'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, top.map((c) => h('tr', { 'data-flag': c.flag.key },
            h('th', { scope: 'row' }, h('a', { href: href(`/projects/${enc(project.key)}/flags/${enc(c.flag.key)}`) }, c.flag.name || c.flag.key)),
            h('td', { class: 'count' }, num(c.total)),
            h('td', {}, sparkline(c.points, { label: `Evaluations of ${c.flag.key}` })))))),
      used.length > top.length ? h('p', { class: 'muted' }, `${used.length - top.length} more flags were evaluated.`) : null));
}
