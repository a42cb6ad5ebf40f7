// The console's only way to the server: the public API of its own origin,
// with the access token of the browser session (sessionStorage: it goes
// when the tab closes, and on sign-out).

const TOKEN = 'flagplane.token';
const WHO = 'flagplane.who';

export function token() { return sessionStorage.getItem(TOKEN); }
export function who() { return sessionStorage.getItem(WHO) || ''; }
export function signIn(tok, label) { sessionStorage.setItem(TOKEN, tok); sessionStorage.setItem(WHO, label || ''); }
export function signOut() { sessionStorage.removeItem(TOKEN); sessionStorage.removeItem(WHO); }

// ApiError is an answer of 400 or more: status, code and message as the
// API gave them, and the whole body.
export class ApiError extends Error {
  constructor(status, body) {
    // The API's errors carry code and message; OAuth's token endpoint
    // answers error and error_description (RFC 6749 §5.2).
    super((body && (body.message || body.error_description)) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && (body.code || body.error)) || '';
    this.body = body;
  }
}

// api sends one request and answers the parsed JSON body (null for an
// empty one). A 401 forgets the token and shows the sign-in page.
export async function api(method, path, { body, contentType, headers } = {}) {
  const h = { Accept: 'application/json', ...(headers || {}) };
  const t = token();
  if (t) h.Authorization = t;
  let payload;
  if (body !== undefined) {
    h['Content-Type'] = contentType || 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers: h, body: payload, credentials: 'omit', cache: 'no-store' });
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { message: text }; }
  }
  if (res.status === 401 && t) {
    signOut();
    location.hash = '#/sign-in';
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const get = (path) => api('GET', path);

// semanticPatch sends instructions in flagplane's semantic patch form.
export function semanticPatch(path, { environmentKey, comment, instructions }) {
  const body = { instructions };
  if (environmentKey) body.environmentKey = environmentKey;
  if (comment) body.comment = comment;
  return api('PATCH', path, { body, contentType: 'application/json; domain-model=flagplane.semanticpatch' });
}

// jsonPatch sends a JSON patch with an optional comment.
export function jsonPatch(path, patch, comment) {
  return api('PATCH', path, { body: comment ? { comment, patch } : patch });
}

// enc escapes one path segment.
export const enc = encodeURIComponent;
