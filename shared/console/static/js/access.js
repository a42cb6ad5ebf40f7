// What the caller may do, from the _access object the API puts on a
// resource ({allowed: [{action, reason}], denied: [{action, reason}]}).
// The console disables what would be refused and says why.

// denial answers the reason an action is denied on a resource, or '' when
// it is allowed (or the resource carries no _access for it).
export function denial(resource, action) {
  const acc = resource && resource._access;
  if (!acc || !Array.isArray(acc.denied)) return '';
  const d = acc.denied.find((e) => e.action === action);
  if (!d) return '';
  return describe(d.reason) || `Your role may not ${action}.`;
}

function describe(reason) {
  if (!reason) return '';
  const who = reason.role_name || reason.roleName || '';
  return `Denied${who ? ' by ' + who : ''}: ${reason.effect || 'deny'} ${
    (reason.actions || reason.notActions || []).join(', ')} on ${(reason.resources || reason.notResources || []).join(', ')}`;
}

// guard disables el when action is denied on resource, and says why in
// its title and in an element read by screen readers.
export function guard(el, resource, action) {
  const why = denial(resource, action);
  if (why) {
    el.disabled = true;
    el.title = why;
    el.setAttribute('aria-description', why);
    el.dataset.denied = action;
  }
  return el;
}
