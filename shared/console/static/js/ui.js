// Widgets every page uses: errors, confirmations with a comment, pagers.
import { h, mount } from './dom.js';
import { ApiError } from './api.js';

// errorBox shows what the API refused, with its status and code.
export function errorBox(err) {
  if (err instanceof ApiError) {
    return h('div', { class: 'error', role: 'alert' },
      h('strong', {}, `${err.status}${err.code ? ' ' + err.code : ''}: `), err.message);
  }
  return h('div', { class: 'error', role: 'alert' }, String(err && err.message ? err.message : err));
}

// ask opens a modal dialog: a message, an optional comment field (required
// when requireComment), and confirm/cancel. It answers {comment} or null.
export function ask({ title, message, confirmLabel = 'Confirm', comment = false, requireComment = false, danger = false, body }) {
  return new Promise((resolve) => {
    const input = comment || requireComment ? h('textarea', { id: 'ask-comment', rows: 3, cols: 40, required: requireComment }) : null;
    const err = h('p', { class: 'error', hidden: true, role: 'alert' });
    const dlg = h('dialog', { 'aria-labelledby': 'ask-title' });
    const close = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    const ok = h('button', { type: 'submit', class: danger ? 'danger' : '' }, confirmLabel);
    const form = h('form', {
      method: 'dialog',
      onsubmit: (e) => {
        e.preventDefault();
        const c = input ? input.value.trim() : '';
        if (requireComment && !c) { err.hidden = false; err.textContent = 'This environment requires a comment.'; input.focus(); return; }
        close({ comment: c });
      },
    },
      h('h2', { id: 'ask-title' }, title),
      message ? h('p', {}, message) : null,
      body || null,
      input ? [h('label', { for: 'ask-comment' }, requireComment ? 'Comment (required)' : 'Comment (optional)'), input] : null,
      err,
      h('div', { class: 'row' }, ok, h('button', { type: 'button', class: 'secondary', onclick: () => close(null) }, 'Cancel')));
    dlg.appendChild(form);
    dlg.addEventListener('cancel', () => close(null));
    document.body.appendChild(dlg);
    dlg.showModal();
    (input || ok).focus();
  });
}

// pager renders Previous/Next links for a list answer's _links (or by
// offset and totalCount), calling go(offset).
export function pager({ offset, limit, total, go }) {
  const prev = h('button', { class: 'secondary', disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) }, 'Previous');
  const next = h('button', { class: 'secondary', disabled: offset + limit >= total, onclick: () => go(offset + limit) }, 'Next');
  const shown = total === 0 ? '0' : `${offset + 1}–${Math.min(offset + limit, total)}`;
  return h('nav', { class: 'row', 'aria-label': 'Pages' }, prev, h('span', {}, `${shown} of ${total}`), next);
}

// loading fills el with a busy note while work runs, then with what it
// renders, or with the error.
export async function loading(el, work) {
  mount(el, h('p', { class: 'muted', 'aria-busy': 'true' }, 'Loading…'));
  try {
    const node = await work();
    mount(el, node);
  } catch (e) {
    mount(el, errorBox(e));
  }
}

// secretOnce shows a secret from a create or reset answer: the only time
// the API gives it. It lives in this element alone (never stored, never in
// the address), so leaving the page forgets it.
export function secretOnce(secret, { what = 'secret', id = 'secret-once' } = {}) {
  const input = h('input', { id, type: 'text', readonly: true, value: secret, size: Math.min(60, secret.length + 2), spellcheck: 'false', autocomplete: 'off' });
  const copy = h('button', {
    type: 'button', class: 'secondary', id: id + '-copy',
    onclick: async () => {
      input.select();
      try { await navigator.clipboard.writeText(secret); } catch { document.execCommand('copy'); }
      const s = document.getElementById('status'); // announce(), without widening this file's imports
      if (s) s.textContent = `The ${what} is copied.`;
    },
  }, 'Copy');
  return h('div', { class: 'notice', role: 'status' },
    h('label', { for: id }, `New ${what}`),
    h('div', { class: 'row' }, input, copy),
    h('p', {}, h('strong', {}, 'Copy it now: it will not be shown again.'), ' Leaving this page forgets it.'));
}
