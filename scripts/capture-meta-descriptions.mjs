#!/usr/bin/env node
// Records the descriptions kube-apiserver 1.36 publishes for the meta types a resource's OpenAPI
// embeds (ObjectMeta and ListMeta and the meta.v1 definitions they reference: OwnerReference,
// ManagedFieldsEntry, FieldsV1, Time), and of each definition's `metadata` field embedding ObjectMeta
// or ListMeta, into schema/meta-descriptions.json; the server adds them to
// its OpenAPI documents (src/openapi/meta-descriptions.ts), since the other schema facts carry no
// descriptions. Read from /openapi/v2. It then creates the CRD of test/fixtures/meta-descriptions/
// (cluster-scoped; deleted afterwards), checks that its /openapi/v3/apis/GROUP/VERSION document
// carries the same descriptions, and records kubectl's output for each command of
// test/fixtures/meta-descriptions/explain.json into test/golden/meta-descriptions/explain.json,
// which test/e2e/explain-metadata.test.ts compares Capstan with.
// Usage: read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-meta-descriptions.mjs "$URL" "$TOKEN"
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-meta-descriptions.mjs URL TOKEN');
  process.exit(2);
}
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const ROOTS = [`${META}ObjectMeta`, `${META}ListMeta`];

const fixtures = join(root, 'test', 'fixtures', 'meta-descriptions');
const crd = JSON.parse(readFileSync(join(fixtures, 'crd.json'), 'utf8'));
const commands = JSON.parse(readFileSync(join(fixtures, 'explain.json'), 'utf8'));

const request = (method, path, body) =>
  fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const get = async (path) => {
  const res = await request('GET', path);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const kubectlEnv = { ...process.env, KUBECACHEDIR: mkdtempSync(join(tmpdir(), 'metadesc-kubectl-')) };
const kubectl = (args) =>
  execFileSync('kubectl', [...args, `--server=${url}`, `--token=${token}`, '--insecure-skip-tls-verify'], {
    env: kubectlEnv,
    encoding: 'utf8',
  });

/** Names of the definitions referenced by `$ref` anywhere inside VALUE (after PREFIX). */
function refs(value, prefix, out = new Set()) {
  if (Array.isArray(value)) value.forEach((v) => refs(v, prefix, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) out.add(v.slice(prefix.length));
      else refs(v, prefix, out);
    }
  }
  return out;
}

/** The description of a definition and of each of its properties that has one. */
function descriptionsOf(def) {
  const entry = {};
  if (typeof def.description === 'string') entry.description = def.description;
  const properties = {};
  for (const [name, prop] of Object.entries(def.properties ?? {})) {
    if (typeof prop.description === 'string') properties[name] = prop.description;
  }
  if (Object.keys(properties).length > 0) entry.properties = properties;
  return entry;
}

const v2 = await get('/openapi/v2');
const names = [];
const pending = [...ROOTS];
while (pending.length > 0) {
  const name = pending.shift();
  if (names.includes(name)) continue;
  const def = v2.definitions[name];
  if (def === undefined) throw new Error(`/openapi/v2 has no definition ${name}`);
  names.push(name);
  for (const r of refs(def, '#/definitions/')) if (r.startsWith(META)) pending.push(r);
}
names.sort();
const definitions = Object.fromEntries(names.map((n) => [n, descriptionsOf(v2.definitions[n])]));

// The description of each kind's (and list's) `metadata` field, which kubectl explain shows first.
const metadataFields = {};
for (const [name, def] of Object.entries(v2.definitions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
  const field = def.properties?.metadata;
  if (typeof field?.description !== 'string' || !ROOTS.some((r) => field.$ref === `#/definitions/${r}`)) continue;
  metadataFields[name] = field.description;
}
console.log(`${Object.keys(metadataFields).length} metadata fields`);

const out = { source: 'kube-apiserver /openapi/v2', definitions, metadataFields };
writeFileSync(join(root, 'schema', 'meta-descriptions.json'), `${JSON.stringify(out, null, 2)}\n`);
for (const name of names) console.log(`${name}: ${Object.keys(definitions[name].properties ?? {}).length} properties`);

// The CRD's v3 document carries the same descriptions (a $ref with a description is wrapped in allOf).
const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
const created = await request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
if (!created.ok) throw new Error(`creating ${crd.metadata.name}: ${created.status} ${await created.text()}`);
try {
  const groupVersion = `${crd.spec.group}/${crd.spec.versions[0].name}`;
  let v3;
  for (let i = 0; i < 300 && v3 === undefined; i++) {
    const res = await request('GET', `/openapi/v3/apis/${groupVersion}`);
    if (res.ok) v3 = await res.json();
    else await new Promise((r) => setTimeout(r, 100));
  }
  if (v3 === undefined) throw new Error(`/openapi/v3/apis/${groupVersion} never served`);
  let differences = 0;
  for (const name of names) {
    const schema = v3.components.schemas[name];
    if (schema === undefined) continue;
    if (JSON.stringify(descriptionsOf(schema)) !== JSON.stringify(definitions[name])) {
      differences++;
      console.error(`${name}: /openapi/v3/apis/${groupVersion} differs from /openapi/v2`);
    }
  }
  console.log(`compared with /openapi/v3/apis/${groupVersion}: ${differences} difference(s)`);
  if (differences > 0) process.exitCode = 1;
  // kubectl explain reads the published documents a little after the CRD is served.
  for (let i = 0; i < 100; i++) {
    try {
      kubectl(['explain', `${crd.spec.names.plural}.metadata`]);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const golden = commands.map((args) => ({ args, stdout: kubectl(args) }));
  mkdirSync(join(root, 'test', 'golden', 'meta-descriptions'), { recursive: true });
  writeFileSync(join(root, 'test', 'golden', 'meta-descriptions', 'explain.json'), `${JSON.stringify(golden, null, 2)}\n`);
  console.log(`recorded ${golden.length} kubectl commands`);
} finally {
  await request('DELETE', crdPath);
}
