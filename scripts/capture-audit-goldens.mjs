// Sends test/golden/audit/requests.json to a kube-apiserver started with
//   --audit-log-path=LOG --audit-policy-file=test/golden/audit/policy.yaml
// and a static token `alice-token-1234,audit-alice,alice-uid,"audit-devs"`, then writes the events its
// audit log recorded for them (normalised: times, IDs, uids, resourceVersions, the client's address)
// to test/golden/audit/events.json. test/e2e/audit-log.test.ts replays the requests against Capstan.
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-audit-goldens.mjs URL TOKEN LOG
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [url, token, log] = process.argv.slice(2);
if (!url || !token || !log) {
  console.error('usage: capture-audit-goldens.mjs URL TOKEN LOG');
  process.exit(2);
}
const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'golden', 'audit');
const { sendAuditRequests, normaliseAuditEvents } = await import(join(dir, 'audit-sequence.mjs'));
const requests = JSON.parse(readFileSync(join(dir, 'requests.json'), 'utf8'));
const ids = await sendAuditRequests(url, token, requests);
// The log is written synchronously by kube-apiserver's blocking backend; a short wait covers the watch's last stage.
await new Promise((r) => setTimeout(r, 1500));
const events = readFileSync(log, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l));
writeFileSync(join(dir, 'events.json'), `${JSON.stringify(normaliseAuditEvents(events, ids), null, 2)}\n`);
console.log(`${events.length} events read`);
