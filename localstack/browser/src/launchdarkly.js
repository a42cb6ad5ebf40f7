// LaunchDarkly's browser SDK for the browser tier's pages, as window.LaunchDarkly
// (createClient, basicLogger, ...). Bundled by localstack/with-browser.sh.
import * as LaunchDarkly from '@launchdarkly/js-client-sdk';

window.LaunchDarkly = LaunchDarkly;
