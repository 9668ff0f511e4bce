// OpenFeature in Node against agentsplit (the README's snippet, issue 28): the published OFREP provider,
// an experiment read as a flag, the variant's payload as the flag's value, and a result logged by the
// flag's assignmentId. Run: AGENTSPLIT_URL=… AGENTSPLIT_API_KEY=… node --import tsx examples/openfeature.ts
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';

const baseUrl = process.env.AGENTSPLIT_URL ?? 'http://127.0.0.1:3000';
const apiKey = process.env.AGENTSPLIT_API_KEY ?? '';

await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl, headers: { 'x-api-key': apiKey } }));
const flags = OpenFeature.getClient();

// The experiment's slug is the flag key; targetingKey is the user; the payload is an object.
const details = await flags.getObjectDetails(
  'checkout-prompt',
  { prompt: 'You are a helpful assistant.' }, // the code default: unknown or not running
  { targetingKey: 'user-42', plan: 'pro' },
);
console.log(details.variant, details.reason, details.value);

// The evaluation recorded the exposure; log the outcome by its assignmentId.
if (details.reason === 'SPLIT') {
  await fetch(`${baseUrl}/experiment/checkout-prompt/log`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({
      variantKey: details.variant,
      assignmentId: details.flagMetadata.assignmentId,
      metrics: { resolved: true },
    }),
  });
}
await OpenFeature.close();
