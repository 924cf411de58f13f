/**
 * Hostile request generators for the fuzz suite: every class of issue 8 and its neighbours (bodies,
 * content types, patch types and directives, paths and encodings, query parameters, headers,
 * raw-socket framing). Each request says what a correct server must do with it:
 * - `reject`: a 4xx (the request is malformed or refers to nothing), never a success;
 * - `no-5xx`: any answer but a 5xx (a mutation may happen to be valid). Such requests only ever
 *   touch scratch objects, never the canaries.
 * Requests aimed at canary objects are always `reject`, so canaries must come out byte-identical.
 */
import { Random } from './random.js';

export interface FuzzRequest {
  /** The generator's class, for the summary. */
  kind: string;
  expect: 'reject' | 'no-5xx';
  /** An HTTP request through node:http (the path goes on the wire as written)... */
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** ...or raw bytes written to a fresh socket. */
  raw?: Buffer;
}

/** Where requests go: a scratch namespace anything may change, and the canaries nothing may. */
export interface FuzzLayout {
  scratch: string;
  canaryNamespace: string;
  /** API paths of canary objects (each must read back byte-identical after the run). */
  canaries: string[];
}

const CM_KIND = { apiVersion: 'v1', kind: 'ConfigMap' };

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** `{"a":{"a":...}}` `depth` levels deep, with `leaf` inside. */
function nested(depth: number, key = 'a', leaf = '1'): string {
  return `${`{"${key}":`.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

function nestedArray(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** go-yaml's "billion laughs": `levels` levels of `fan` aliases each. */
function laughs(levels: number, fan: number, name: string): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', `metadata: {name: ${name}}`, 'x0: &x0 "lol"'];
  for (let i = 1; i <= levels; i++)
    lines.push(
      `x${i}: &x${i} [${Array(fan)
        .fill(`*x${i - 1}`)
        .join(',')}]`,
    );
  return lines.join('\n');
}

/** The spellings of a forbidden key: plain, escaped, and mixed. */
const PROTO_KEYS = ['"__proto__"', '"\\u005f_proto__"', '"\\u005f\\u005fproto\\u005f\\u005f"', '"constructor"', '"prototype"', '"__\\u0070roto__"'];

const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/cbor',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'text/plain',
  '',
  'application/json; charset=latin1',
  'application/json;;;',
  '*/*',
  'application/*',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-8; x=' + 'y'.repeat(300),
  'application/vnd.kubernetes.protobuf;stream=watch',
  'application/yaml; charset=utf-16',
  '\u00e9/\u00e9',
  'application/json\tx',
];

const ACCEPTS = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/cbor',
  '*/*',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/json;as=Bogus;v=v9;g=nowhere',
  'text/html',
  'image/png',
  '',
  ';;;',
  'application/json;q=x',
  'application/json, application/yaml;q=0.5',
  'a/b;c=d;e',
  'application/json;stream=watch',
];

/** Content types of the four patch kinds kube serves. */
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

type Gen = (r: Random, l: FuzzLayout) => FuzzRequest;

/** A path of the canary ConfigMap, or a scratch one the generators may create. */
function canaryConfigMap(l: FuzzLayout): string {
  return `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm`;
}

function scratchConfigMaps(l: FuzzLayout): string {
  return `/api/v1/namespaces/${l.scratch}/configmaps`;
}

/** A body that is malformed however it is read: truncated, not JSON, bad UTF-8, not an object. */
function malformedBody(r: Random): Buffer {
  switch (r.int(0, 9)) {
    case 0:
      return Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":'.slice(0, r.int(1, 50)));
    case 1:
      return r.bytes(r.int(1, 200));
    case 2:
      return Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
    case 3:
      return Buffer.from(r.pick(['[]', '"text"', '42', 'null', 'true', '[{"kind":"ConfigMap"}]', '{}', '{"kind":5}', '{"apiVersion":[]}']));
    case 4:
      return Buffer.from(
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n"},"data":${r.pick(['NaN', 'Infinity', '-', '01', '1e', '0x10', "'x'", '{,}', '[1,]', '"\\x"', '"\\ud800"'])}}`,
      );
    case 5:
      return Buffer.from(
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":${r.pick(['5', '"x"', '[]', 'true', '{"name":5}', '{"name":{"a":1}}', '{"labels":[]}', '{"labels":{"a":1}}', '{"annotations":"x"}', '{"creationTimestamp":"yesterday"}', '{"generation":"1"}'])}}`,
      );
    case 6:
      return Buffer.from(`\uFEFF{"apiVersion":"v1"`);
    case 7:
      return Buffer.from(`{"apiVersion":"v1","kind":"ConfigMap"} trailing`);
    case 8:
      return Buffer.from(`${'{"a":'.repeat(r.int(1001, 20_000))}`);
    default:
      return Buffer.alloc(0);
  }
}

const generators: Array<[string, number, Gen]> = [
  [
    'yaml-aliases',
    3,
    (r, l) => {
      const name = `laughs-${r.int(0, 1e6)}`;
      const body = r.chance(0.2) ? `apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: ${name}, self: *m}\n` : laughs(r.int(6, 12), r.int(9, 20), name);
      const target = r.chance(0.5) ? { method: 'POST', path: scratchConfigMaps(l) } : { method: 'PUT', path: canaryConfigMap(l) };
      return { kind: 'yaml-aliases', expect: 'reject', ...target, headers: { 'content-type': 'application/yaml' }, body: Buffer.from(body) };
    },
  ],
  [
    'deep-nesting',
    3,
    (r, l) => {
      const depth = r.int(1001, 30_000);
      const inner = r.chance(0.5) ? nested(depth) : nestedArray(depth);
      const where = r.int(0, 5);
      const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep-${r.int(0, 1e6)}"`;
      const bodies = [
        `${cm}},"data":${inner}}`,
        `${cm},"managedFields":[{"manager":"x","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":${inner}}]}}`,
        `${cm},"annotations":${inner}}}`,
        `{"data":${inner}}`,
        `[{"op":"add","path":"/data/x","value":${inner}}]`,
        `{"metadata":{"labels":${inner}}}`,
      ];
      if (where >= 3) {
        const type = where === 4 ? 'application/json-patch+json' : r.pick(PATCH_TYPES.filter((t) => t !== 'application/json-patch+json'));
        return {
          kind: 'deep-nesting',
          expect: 'reject',
          method: 'PATCH',
          path: canaryConfigMap(l),
          headers: { 'content-type': type },
          body: Buffer.from(bodies[where]),
        };
      }
      const yaml = r.chance(0.3);
      const body = yaml
        ? Buffer.from(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep-${r.int(0, 1e6)}}\ndata: ${'['.repeat(depth)}1${']'.repeat(depth)}\n`)
        : Buffer.from(bodies[where]);
      const target = r.chance(0.5) ? { method: 'POST', path: scratchConfigMaps(l) } : { method: 'PUT', path: canaryConfigMap(l) };
      return { kind: 'deep-nesting', expect: 'reject', ...target, headers: { 'content-type': yaml ? 'application/yaml' : 'application/json' }, body };
    },
  ],
  [
    'malformed-body',
    4,
    (r, l) => {
      const target = r.pick([
        { method: 'POST', path: scratchConfigMaps(l) },
        { method: 'PUT', path: canaryConfigMap(l) },
        { method: 'POST', path: `/api/v1/namespaces/${l.scratch}/pods/nobody/eviction` },
        { method: 'POST', path: `/apis/apps/v1/namespaces/${l.scratch}/deployments` },
        { method: 'PUT', path: `/apis/apps/v1/namespaces/${l.canaryNamespace}/deployments/canary-deploy/scale` },
      ]);
      const type = r.pick(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
      return { kind: 'malformed-body', expect: 'reject', ...target, headers: { 'content-type': type }, body: malformedBody(r) };
    },
  ],
  [
    'forbidden-keys',
    3,
    (r, l) => {
      const key = r.pick(PROTO_KEYS);
      const value = r.pick(['{"polluted":true}', '1', '"x"', '{"toString":"boom"}']);
      const bodies: Array<[string, string, string]> = [
        ['POST', 'application/json', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p-${r.int(0, 1e6)}"},"data":{${key}:${value}}}`],
        ['POST', 'application/json', `{"apiVersion":"v1","kind":"ConfigMap",${key}:${value},"metadata":{"name":"p-${r.int(0, 1e6)}"}}`],
        ['PATCH', 'application/merge-patch+json', `{"data":{${key}:${value}}}`],
        ['PATCH', 'application/strategic-merge-patch+json', `{"metadata":{${key}:${value}}}`],
        [
          'PATCH',
          'application/json-patch+json',
          `[{"op":"add","path":"/data/${r.pick(['__proto__', 'constructor', 'prototype', '__proto__/polluted'])}","value":"x"}]`,
        ],
        ['PUT', 'application/json', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"canary-cm",${key}:${value}}}`],
        ['POST', 'application/yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y-${r.int(0, 1e6)}}\ndata: {__proto__: x}\n`],
      ];
      const [method, type, body] = r.pick(bodies);
      const path = method === 'POST' ? scratchConfigMaps(l) : canaryConfigMap(l);
      return { kind: 'forbidden-keys', expect: 'reject', method, path, headers: { 'content-type': type }, body: Buffer.from(body) };
    },
  ],
  [
    'patch-directives',
    5,
    (r, l) => {
      const deploy = `/apis/apps/v1/namespaces/${l.canaryNamespace}/deployments/canary-deploy`;
      const smp = [
        '{"spec":{"$patch":"bogus"}}',
        '{"spec":{"template":{"spec":{"containers":[{"$patch":"delete"}]}}}}',
        '{"spec":{"template":{"spec":{"containers":[{"name":5}]}}}}',
        '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"nome":"x"}]}}}}',
        '{"spec":{"template":{"spec":{"containers":{"name":"x"}}}}}',
        '{"spec":{"$retainKeys":5}}',
        '{"spec":{"$retainKeys":["nope"],"replicas":"x"}}',
        '{"spec":{"template":{"spec":{"$deleteFromPrimitiveList/containers":[1]}}}}',
        '{"spec":{"replicas":"many"}}',
        '{"spec":{"selector":{"matchLabels":[1,2]}}}',
        '{"metadata":{"name":"renamed"}}',
        '{"metadata":{"resourceVersion":"1"}}',
        '[]',
        '"x"',
        '{"metadata":{"uid":"other"}}',
      ];
      const jsonPatch = [
        '[{"op":"bogus","path":"/spec"}]',
        '[{"op":"add"}]',
        '[{"op":"remove","path":"/spec/nothing"}]',
        '[{"op":"test","path":"/spec/replicas","value":999}]',
        '[{"op":"move","from":"/spec","path":"/spec/template"}]',
        '[{"op":"replace","path":"/metadata/name","value":"other"}]',
        '[{"op":"replace","path":"/kind","value":"Pod"}]',
        '[{"op":"add","path":"/spec/replicas","value":"x"}]',
        '[{"op":"add","path":"spec","value":1}]',
        '[{"op":"add","path":"/spec/template/spec/containers/99","value":{}}]',
        '{"op":"add"}',
        '[1,2]',
        `[${Array(10_001).fill('{"op":"test","path":"/kind","value":"Deployment"}').join(',')}]`,
        `[{"op":"add","path":"/metadata/annotations","value":{"a":"${'x'.repeat(4096)}"}}${',{"op":"copy","from":"/metadata/annotations","path":"/metadata/labels"},{"op":"copy","from":"/metadata","path":"/spec/template/metadata"}'.repeat(30)}]`,
        '[{"op":"replace","path":"/spec/replicas","value":1},{"op":"test","path":"/spec/replicas","value":2}]',
      ];
      const merge = [
        '{"spec":{"replicas":"x"}}',
        '{"metadata":{"uid":"other"}}',
        '{"spec":[]}',
        '{"spec":{"selector":null},"kind":"Service"}',
        '[]',
        '5',
        '{"apiVersion":"v1"}',
        '{"metadata":{"name":"x"}}',
        '{"kind":5}',
        '{"kind":"deployment"}',
      ];
      // Refused by kube's validation only (issue 9 builds it): sent to a scratch Deployment, any non-5xx answer.
      const validationOnly: Array<[string, string]> = [
        ['application/strategic-merge-patch+json', '{"spec":{"template":{"spec":{"containers":[{"name":"c","$patch":"replace","image":5}]}}}}'],
        ['application/json-patch+json', '[{"op":"add","path":"/spec/template/spec/containers/-1","value":{}}]'],
        ['application/json-patch+json', '[{"op":"copy","from":"/nope","path":"/spec/x"}]'],
        ['application/strategic-merge-patch+json', '{"kind":"Pod"}'],
        ['application/strategic-merge-patch+json', '{"apiVersion":"v2"}'],
        ['application/merge-patch+json', '{"spec":{"replicas":-3}}'],
      ];
      if (r.chance(0.15)) {
        const [type, body] = r.pick(validationOnly);
        return {
          kind: 'patch-directives',
          expect: 'no-5xx',
          method: 'PATCH',
          path: `/apis/apps/v1/namespaces/${l.scratch}/deployments/scratch-deploy`,
          headers: { 'content-type': type },
          body: Buffer.from(body),
        };
      }
      const apply = [
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n',
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: canary-deploy}\nspec: {replicas: x}\n',
        'kind: Deployment\n',
        '[1,2]',
        '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"canary-deploy","managedFields":[{}]}}',
        ': :',
      ];
      const which = r.int(0, 3);
      const [type, body] =
        which === 0
          ? ['application/strategic-merge-patch+json', r.pick(smp)]
          : which === 1
            ? ['application/json-patch+json', r.pick(jsonPatch)]
            : which === 2
              ? ['application/merge-patch+json', r.pick(merge)]
              : ['application/apply-patch+yaml', r.pick(apply)];
      const query = which === 3 ? `?fieldManager=${r.pick(['fuzz', '', 'x'.repeat(200)])}${r.chance(0.3) ? '&force=maybe' : ''}` : '';
      return {
        kind: 'patch-directives',
        expect: 'reject',
        method: 'PATCH',
        path: `${deploy}${query}`,
        headers: { 'content-type': type },
        body: Buffer.from(body),
      };
    },
  ],
  [
    'content-types',
    3,
    (r, l) => {
      const type = r.pick(CONTENT_TYPES);
      const body = r.chance(0.5) ? malformedBody(r) : json({ ...CM_KIND, metadata: { name: `ct-${r.int(0, 1e6)}` } });
      // A well-formed ConfigMap with a content type kube serves may be created: scratch only.
      return {
        kind: 'content-types',
        expect: 'no-5xx',
        method: r.pick(['POST', 'PUT', 'PATCH']),
        path: r.chance(0.5) ? scratchConfigMaps(l) : `${scratchConfigMaps(l)}/ct-x`,
        headers: { 'content-type': type, accept: r.pick(ACCEPTS) },
        body,
      };
    },
  ],
  [
    'paths',
    5,
    (r, l) => {
      const traversal = [
        `/api/v1/namespaces/${l.scratch}/configmaps/../../${l.canaryNamespace}/configmaps/canary-cm`,
        `/api/v1/namespaces/${l.scratch}/configmaps/%2e%2e/%2e%2e/${l.canaryNamespace}/configmaps/canary-cm`,
        `/api/v1/namespaces/${l.scratch}/configmaps/..%2f..%2f${l.canaryNamespace}%2fconfigmaps%2fcanary-cm`,
        `/api/v1/namespaces/${l.scratch}/configmaps/..\\..\\${l.canaryNamespace}\\configmaps\\canary-cm`,
        `/api\\v1\\namespaces\\${l.canaryNamespace}\\configmaps\\canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm/..`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/./canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm%00`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm/status/extra`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary%2Dcm%2Fx`,
        `/api/v1/namespaces/${l.canaryNamespace}//configmaps/canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm/%zz`,
        `/api/v1/namespaces/${l.canaryNamespace.toUpperCase()}/configmaps/canary-cm`,
        `/api/v1/namespaces/./configmaps/canary-cm`,
        `/api/v1/namespaces/../configmaps/canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/${'a'.repeat(r.int(254, 5000))}`,
        `/api/v1/namespaces/${'b'.repeat(r.int(64, 300))}/configmaps/canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/${encodeURIComponent(r.string(r.int(1, 40)))}`,
        `/apis/${r.string(r.int(1, 20), 'abc./%')}/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm`,
        `/api/v1/namespaces/${l.canaryNamespace}/configmaps/canary-cm/${r.pick(['status', 'scale', 'proxy', 'exec', 'log', 'eviction', 'binding', 'ephemeralcontainers'])}`,
      ];
      const method = r.pick(['PUT', 'DELETE', 'PATCH', 'POST']);
      const body =
        method === 'DELETE' ? undefined : json({ ...CM_KIND, metadata: { name: 'canary-cm', namespace: l.canaryNamespace }, data: { stolen: 'yes' } });
      const headers: Record<string, string> = { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
      return { kind: 'paths', expect: 'reject', method, path: r.pick(traversal), headers, body };
    },
  ],
  [
    'query',
    5,
    (r, l) => {
      const bad = [
        'watch=maybe&timeoutSeconds=abc',
        'resourceVersion=abc&resourceVersionMatch=Exact',
        'resourceVersionMatch=Bogus&resourceVersion=1',
        'limit=abc',
        'limit=1e3',
        'continue=garbage',
        `continue=${Buffer.from('{"v":"meta.k8s.io/v1","rv":-5,"start":"x"}').toString('base64')}`,
        'labelSelector=a%20in%20(',
        'labelSelector=!!',
        'fieldSelector=spec.bogus%3Dx',
        'fieldSelector=metadata.name%3D%3D%3D',
        `labelSelector=${'a'.repeat(r.int(100, 20_000))}%3Db`,
        'sendInitialEvents=true',
        'sendInitialEvents=maybe&watch=1',
        'allowWatchBookmarks=2',
        'timeoutSeconds=-1&watch=1',
        'resourceVersion=1&limit=1&resourceVersionMatch=NotOlderThan&continue=x',
        'pretty=yes%00',
        `fieldSelector=${'metadata.name=a,'.repeat(r.int(10, 2000))}metadata.name=b`,
        'resourceVersion=99999999999999999999',
        'watch=1&resourceVersion=-1',
      ];
      const q = r.pick(bad);
      // Lists are reads: a read may legitimately succeed, it may never fail with a 5xx.
      return {
        kind: 'query',
        expect: 'no-5xx',
        method: 'GET',
        path: `/api/v1/namespaces/${r.pick([l.scratch, l.canaryNamespace])}/configmaps?${q}${q.includes('watch=1') ? '&timeoutSeconds=1' : ''}`,
      };
    },
  ],
  [
    'write-options',
    4,
    (r, l) => {
      // Each option kube refuses (checked against the reference): 400 for unparseable values, 422 for invalid ones.
      const method = r.pick(['PUT', 'DELETE', 'PATCH']);
      const headers: Record<string, string> = { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
      if (method === 'DELETE') {
        const inBody = r.chance(0.5);
        const q = inBody
          ? r.pick(['', 'gracePeriodSeconds=1'])
          : r.pick([
              'propagationPolicy=Sideways',
              'gracePeriodSeconds=abc',
              'gracePeriodSeconds=1.5',
              'orphanDependents=true&propagationPolicy=Background',
              'dryRun=Bogus',
              'gracePeriodSeconds=-5&propagationPolicy=x',
              'dryRun=All&dryRun=Bogus',
            ]);
        const body = inBody
          ? Buffer.from(
              r.pick([
                '{"propagationPolicy":"Sideways"}',
                '{"gracePeriodSeconds":"x"}',
                '{"kind":"Pod"}',
                '{',
                '{"dryRun":["Bogus"]}',
                '{"orphanDependents":true,"propagationPolicy":"Foreground"}',
              ]),
            )
          : undefined;
        return { kind: 'write-options', expect: 'reject', method, path: `${canaryConfigMap(l)}${q === '' ? '' : `?${q}`}`, headers, body };
      }
      const q = r.pick([
        'dryRun=Bogus',
        'dryRun=All&dryRun=Bogus',
        'fieldValidation=Sloppy',
        `fieldManager=${'m'.repeat(r.int(129, 400))}`,
        'fieldManager=%00',
        'fieldManager=a%0Ab',
        ...(method === 'PATCH' ? ['force=true', 'force=maybe'] : []),
      ]);
      const body =
        method === 'PATCH' ? Buffer.from('{"data":{"changed":"yes"}}') : json({ ...CM_KIND, metadata: { name: 'canary-cm' }, data: { changed: 'yes' } });
      return { kind: 'write-options', expect: 'reject', method, path: `${canaryConfigMap(l)}?${q}`, headers, body };
    },
  ],
  [
    'headers',
    3,
    (r, l) => {
      const headers: Record<string, string> = {};
      switch (r.int(0, 5)) {
        case 0:
          headers['content-type'] = 'application/json';
          headers['content-encoding'] = r.pick(['gzip', 'br', 'deflate', 'x']);
          break;
        case 1:
          headers['accept-encoding'] = r.pick(['gzip;q=x', '*;q=0', 'identity;q=0', 'br, zstd', ',,,']);
          break;
        case 2:
          headers['x-' + r.string(8, 'abcdefgh')] = 'v'.repeat(r.int(1, 200_000));
          break;
        case 3:
          headers.accept = r.pick(ACCEPTS);
          break;
        case 4:
          headers['content-type'] = 'application/json';
          headers.expect = '100-continue';
          break;
        default:
          headers.authorization = r.pick(['Bearer', 'Basic !!!', 'Bearer ' + 'x'.repeat(5000)]);
          break;
      }
      // The body changes the canary if it is read as valid and the write is let through: it must not be.
      const body = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"canary-cm"},"data":{"x":');
      headers['content-type'] ??= 'application/json';
      return { kind: 'headers', expect: 'reject', method: 'PUT', path: canaryConfigMap(l), headers, body };
    },
  ],
  [
    'large-bodies',
    1,
    (r, l) => {
      const size = r.pick([3 * 1024 * 1024 + 100, 1600 * 1024, 2 * 1024 * 1024]);
      const body = json({ ...CM_KIND, metadata: { name: 'canary-cm' }, data: { big: 'x'.repeat(size) } });
      return {
        kind: 'large-bodies',
        expect: 'reject',
        method: r.pick(['PUT', 'PATCH']),
        path: canaryConfigMap(l),
        headers: { 'content-type': r.chance(0.5) ? 'application/json' : 'application/merge-patch+json' },
        body,
      };
    },
  ],
  [
    'raw-framing',
    4,
    (r, l) => {
      const path = canaryConfigMap(l);
      const cm = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"canary-cm"},"data":{"smuggled":"yes"}}';
      const frames = [
        `GET ${path}\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${cm.length + 50}\r\n\r\n${cm}`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n${cm.length.toString(16)}\r\n${cm}\r\n0\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${cm}\r\n0\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n`,
        `GET /api/v1/namespaces/%zz HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET ${path} HTTP/9.9\r\nHost: x\r\n\r\n`,
        `G\u00c9T ${path} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
        `${r.string(r.int(1, 300))}\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${cm.length}\r\n\r\n${cm.slice(0, -3)}`,
        `GET ${path}-missing HTTP/1.1\r\n${'X-A: b\r\n'.repeat(r.int(2000, 20_000))}\r\n`,
        `GET /${'a'.repeat(r.int(9000, 70_000))} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `\r\n\r\n\r\n`,
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${cm.length}\r\n\r\n${cm.replace('canary-cm', 'other-name')}`,
      ];
      return { kind: 'raw-framing', expect: 'reject', raw: Buffer.from(r.pick(frames), 'latin1') };
    },
  ],
  [
    'scratch-mutations',
    3,
    (r, l) => {
      // Random but plausible writes to scratch objects: may succeed, may fail, never a 5xx.
      const name = `s-${r.int(0, 20)}`;
      const value = r.pick<unknown>([r.string(r.int(0, 30)), r.int(-5, 5), null, [], {}, { a: [1, { b: 'c' }] }, 'x'.repeat(r.int(0, 5000)), 1e308, -0, true]);
      const bodies: Array<[string, string, string, unknown]> = [
        ['POST', scratchConfigMaps(l), 'application/json', { ...CM_KIND, metadata: { name, labels: { a: r.string(r.int(0, 70)) } }, data: { k: value } }],
        [
          'PUT',
          `${scratchConfigMaps(l)}/${name}`,
          'application/json',
          { ...CM_KIND, metadata: { name, resourceVersion: r.pick(['1', 'x', '', '99999999']) }, data: { k: value } },
        ],
        ['PATCH', `${scratchConfigMaps(l)}/${name}`, 'application/merge-patch+json', { data: { [r.string(r.int(1, 10), 'abc-_.')]: value } }],
        [
          'PATCH',
          `${scratchConfigMaps(l)}/${name}`,
          'application/json-patch+json',
          [
            {
              op: r.pick(['add', 'replace', 'remove', 'test', 'copy', 'move']),
              path: r.pick(['/data/k', '/data', '/metadata/labels/x', '/binaryData/y']),
              from: '/data',
              value,
            },
          ],
        ],
        [
          'PATCH',
          `${scratchConfigMaps(l)}/${name}?fieldManager=fz&force=${r.pick(['true', 'false'])}`,
          'application/apply-patch+yaml',
          { ...CM_KIND, metadata: { name }, data: { k: value } },
        ],
        [
          'DELETE',
          `${scratchConfigMaps(l)}/${name}`,
          'application/json',
          r.chance(0.5) ? undefined : { gracePeriodSeconds: r.int(-2, 5), propagationPolicy: r.pick(['Orphan', 'Background', 'Foreground', 'Bogus']) },
        ],
      ];
      const [method, path, type, body] = r.pick(bodies);
      return {
        kind: 'scratch-mutations',
        expect: 'no-5xx',
        method,
        path,
        headers: { 'content-type': type, accept: r.pick(ACCEPTS) },
        body: body === undefined ? undefined : json(body),
      };
    },
  ],
];

/** Request number `index` of the sequence for `seed` (the same seed and index give the same request). */
export function generate(seed: number, index: number, layout: FuzzLayout): FuzzRequest {
  const r = new Random((seed * 1_000_003 + index * 7919) >>> 0);
  const total = generators.reduce((n, [, weight]) => n + weight, 0);
  let pick = r.int(0, total - 1);
  for (const [, weight, gen] of generators) {
    if (pick < weight) return gen(r, layout);
    pick -= weight;
  }
  throw new Error('unreachable');
}

/** Every class name, for summaries. */
export const CLASSES = generators.map(([name]) => name);
