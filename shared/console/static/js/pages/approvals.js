// Not built yet: this page says so until its work lands.
import { h, mount } from '../dom.js';

export function register(route) {
  route('/approvals', render);
  route('/approvals/:id', render);
}

function render({ main }) {
  mount(main, h('h1', {}, 'Not built yet'), h('p', {}, 'This console page is not built yet; the API serves it.'));
}
