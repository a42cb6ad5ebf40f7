// Hash routes: #/projects/shop/flags?q=x. The server serves one page, so
// the console works wherever that page is served (the local server, the
// stack's API) with no rewrite rules.

const routes = [];

// route adds a page: pattern like '/projects/:project/flags/:flag'; render
// gets {params, query, main} and fills main.
export function route(pattern, render, title) {
  const names = [];
  const re = new RegExp('^' + pattern.replace(/:([a-zA-Z]+)/g, (_, n) => { names.push(n); return '([^/]+)'; }) + '$');
  routes.push({ pattern, re, names, render, title });
}

// patterns lists every page's pattern, in the order added: the tests visit
// each (a copy, so nothing outside the router changes the table).
export function patterns() { return routes.map((r) => r.pattern); }

// href builds a hash link from path segments and query values.
export function href(path, query) {
  const q = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString() : '';
  return '#' + path + (q ? '?' + q : '');
}

export function navigate(path, query) { location.hash = href(path, query); }

// current answers the path and query of the location.
export function current() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const i = raw.indexOf('?');
  return { path: i < 0 ? raw : raw.slice(0, i), query: Object.fromEntries(new URLSearchParams(i < 0 ? '' : raw.slice(i + 1))) };
}

// resolve finds the route of a path: {route, params} or null.
export function resolve(path) {
  for (const r of routes) {
    const m = r.re.exec(path);
    if (m) {
      const params = {};
      r.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1]); });
      return { route: r, params };
    }
  }
  return null;
}
