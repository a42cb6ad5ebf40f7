// axe-core for the console's accessibility checks, as window.axe: the
// tests (consoletest's Axe) evaluate this bundle in the page under test
// and run axe.run on it. Bundled by localstack/with-browser.sh.
// The minified build: the bundle is sent to every page a test checks.
import axe from 'axe-core/axe.min.js';

window.axe = axe;
