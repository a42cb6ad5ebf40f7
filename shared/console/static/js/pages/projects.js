// Projects: the landing page, with links to each project's flags,
// segments and environments.
import { h, mount } from '../dom.js';
import { get, enc } from '../api.js';
import { href } from '../router.js';

export function register(route) {
  route('/', render, () => 'Projects');
  route('/projects', render, () => 'Projects');
}

async function render({ main }) {
  const list = await get('/api/v2/projects?limit=1000&expand=environments');
  const items = list.items || [];
  mount(main,
    h('h1', {}, 'Projects'),
    items.length === 0 ? h('p', {}, 'No project yet. Create one through the API (POST /api/v2/projects).') :
      h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Project'), h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Pages'))),
        h('tbody', {}, items.map((p) => h('tr', {},
          h('td', {}, h('a', { href: href(`/projects/${enc(p.key)}/flags`) }, p.name)),
          h('td', {}, h('code', {}, p.key)),
          h('td', { class: 'row' },
            h('a', { href: href(`/projects/${enc(p.key)}/flags`) }, 'Flags'),
            h('a', { href: href(`/projects/${enc(p.key)}/segments`) }, 'Segments'),
            h('a', { href: href(`/projects/${enc(p.key)}/environments`) }, 'Environments')))))));
}
