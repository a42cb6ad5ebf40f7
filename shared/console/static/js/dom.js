// Building the page: h() makes elements from plain values; nothing is ever
// parsed as HTML, so text from the API cannot inject markup.

// h(tag, attrs, ...children): attrs sets properties for on* handlers and
// booleans, attributes otherwise; children are nodes, strings, numbers,
// arrays of those, or null/undefined/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// mount replaces el's children.
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// announce tells screen readers (and tests) what just happened.
export function announce(message) {
  const s = document.getElementById('status');
  if (s) s.textContent = message;
}

// when formats a millisecond time (number or numeric string) for people.
export function when(ms) {
  const n = Number(ms);
  if (!n) return '';
  return new Date(n).toLocaleString();
}
