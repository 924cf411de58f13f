// The request sequence of the audit golden (requests.json), shared by scripts/capture-audit-goldens.mjs
// (against kube-apiserver) and test/e2e/audit-log.test.ts (against Capstan).

export const USER_AGENT = 'audit-golden/1.0';
const TOKENS = { alice: 'alice-token-1234', bad: 'not-a-valid-token' };

/**
 * Sends each request in order (each one's response read to its end) and returns the `Audit-Id` of each
 * response, by request name.
 */
export async function sendAuditRequests(url, adminToken, requests) {
  const ids = {};
  for (const r of requests) {
    const headers = { 'User-Agent': USER_AGENT, Authorization: `Bearer ${r.token ? TOKENS[r.token] : adminToken}`, ...(r.headers ?? {}) };
    if (r.body !== undefined) headers['Content-Type'] = r.contentType ?? 'application/json';
    const res = await fetch(url + r.path, { method: r.method, headers, body: r.body === undefined ? undefined : JSON.stringify(r.body) });
    await res.text();
    // A hidden request sets the stage alike on both servers (kube's default ServiceAccount comes from a controller): not compared.
    if (r.hidden) continue;
    ids[r.name] = res.headers.get('audit-id');
  }
  return ids;
}

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

function scrub(value, key) {
  // kube orders managedFields entries by their time in seconds, which depends on the machine's speed.
  if (Array.isArray(value) && key === 'managedFields') {
    return value.map((v) => scrub(v, key)).sort((a, b) => `${a.manager}/${a.operation}`.localeCompare(`${b.manager}/${b.operation}`));
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, key));
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrub(v, k);
    return out;
  }
  if (typeof value !== 'string') return value;
  if (key === 'uid' && value !== '' && !value.endsWith('-uid')) return 'UID';
  if (key === 'resourceVersion' && value !== '' && value !== '0') return 'RV';
  if (TIME.test(value)) return 'TIME';
  return value;
}

const STAGE_ORDER = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/**
 * The events of the sequence's requests (found by their audit IDs), in request then stage order (a
 * server may log a request's last stage after the next request's first), each tagged with the
 * request's name; times, uids, resourceVersions and the client's own address replaced by placeholders.
 * Checks that every event's auditID is its response's `Audit-Id` and that the stage timestamps are
 * RFC3339 with microseconds.
 */
export function normaliseAuditEvents(events, ids) {
  const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  const out = [];
  for (const e of events) {
    const name = names.get(e.auditID);
    if (name === undefined) continue;
    for (const k of ['requestReceivedTimestamp', 'stageTimestamp'])
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(e[k])) throw new Error(`${name}: ${k} ${e[k]} is not RFC3339 with microseconds`);
    const { auditID: _id, requestReceivedTimestamp: _r, stageTimestamp: _s, ...rest } = e;
    // kube adds per-layer latencies to requests slower than 500 ms: timing, not behaviour.
    if (rest.annotations !== undefined) {
      rest.annotations = Object.fromEntries(Object.entries(rest.annotations).filter(([k]) => !k.startsWith('apiserver.latency.k8s.io/')));
    }
    const sourceIPs = rest.sourceIPs.slice(0, -1).concat(['CLIENT']);
    out.push({ request: name, ...scrub({ ...rest, sourceIPs }) });
  }
  const order = Object.keys(ids);
  const rank = (e) => order.indexOf(e.request) * 10 + STAGE_ORDER.indexOf(e.stage);
  return out.sort((a, b) => rank(a) - rank(b));
}
