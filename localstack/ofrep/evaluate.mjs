// Evaluate flags with OpenFeature's Node server SDK and its OFREP provider
// against an OFREP service: the OFREP tier's Go test (shared/sdkapi) runs
//
//   node evaluate.mjs < plan.json
//
// where plan.json is {"baseUrl": "...", "headers": {"Authorization": "..."},
// "cases": [{"flag", "type" (boolean|string|number|object), "default",
// "context"}]}, and reads on stdout one resolution per case, in order:
// {"value", "variant", "reason", "errorCode", "errorMessage"}.
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';

const getters = {
  boolean: 'getBooleanDetails',
  string: 'getStringDetails',
  number: 'getNumberDetails',
  object: 'getObjectDetails',
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
const plan = JSON.parse(input);

await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: plan.baseUrl, headers: plan.headers }));
const client = OpenFeature.getClient();
const out = [];
for (const c of plan.cases) {
  const get = getters[c.type];
  if (!get) throw new Error(`unknown flag type ${c.type}`);
  const d = await client[get](c.flag, c.default, c.context);
  out.push({
    value: d.value,
    variant: d.variant ?? '',
    reason: d.reason ?? '',
    errorCode: d.errorCode ?? '',
    errorMessage: d.errorMessage ?? '',
  });
}
await OpenFeature.close();
process.stdout.write(JSON.stringify(out));
