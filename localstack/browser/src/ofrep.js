// OpenFeature's web SDK with its OFREP web provider for the browser tier's
// pages, as window.OpenFeatureWeb (OpenFeature, OFREPWebProvider, ...).
// Bundled by localstack/with-browser.sh.
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

window.OpenFeatureWeb = { OpenFeature, OFREPWebProvider, ProviderEvents };
