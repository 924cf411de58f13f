/**
 * The aggregation layer's pure merges: the authentication ConfigMap data extension servers read
 * (kube's cluster authentication trust controller), an extension server's OpenAPI v2 merged as kube-openapi merges
 * it, legacy discovery converted to aggregated discovery, and the paths the proxy claims.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { X509Certificate } from 'node:crypto';
import { mergedTrustData } from '../../src/server/authentication-trust.js';
import { contributionFrom } from '../../src/aggregator/openapi-aggregation.js';
import { aggregatedPathOf } from '../../src/aggregator/proxy-handler.js';
import { parseAggregatedDiscovery, resourcesFromLegacyList } from '../../src/aggregator/remote-discovery.js';
import { generateCA } from '../../src/tls/certificates.js';

describe('extension-apiserver-authentication data', () => {
  test('what is stored is kept first, this server adds its own, without duplicates; keys sorted; uid headers only when some exist', async () => {
    const [a, b] = await Promise.all([generateCA('a'), generateCA('b')]);
    const fingerprints = (bundle: string | undefined): string[] =>
      (bundle?.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256);
    const requestHeader = {
      ca: [b.cert],
      usernameHeaders: ['X-Remote-User'],
      uidHeaders: [],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
      allowedNames: ['front-proxy-client'],
    };
    const first = mergedTrustData({}, { clientCA: [a.cert], requestHeader });
    assert.deepEqual(Object.keys(first), [
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-username-headers',
    ]);
    assert.deepEqual(fingerprints(first['client-ca-file']), fingerprints(a.cert));
    // Another server of the same cluster with other settings: both are listed, the stored ones first.
    const merged = mergedTrustData(first, {
      clientCA: [b.cert, a.cert],
      requestHeader: { ...requestHeader, usernameHeaders: ['X-Other-User'], uidHeaders: ['X-Remote-Uid'] },
    });
    assert.deepEqual(fingerprints(merged['client-ca-file']), [...fingerprints(a.cert), ...fingerprints(b.cert)]);
    assert.equal(merged['requestheader-username-headers'], '["X-Remote-User","X-Other-User"]');
    assert.equal(merged['requestheader-uid-headers'], '["X-Remote-Uid"]');
    assert.deepEqual(fingerprints(merged['requestheader-client-ca-file']), fingerprints(b.cert));
    // Without a front-proxy CA, only the client CA is published.
    assert.deepEqual(Object.keys(mergedTrustData({}, { clientCA: [a.cert] })), ['client-ca-file']);
  });
});

describe('OpenAPI v2 merge', () => {
  const local = {
    paths: { '/api/v1/pods': {} },
    definitions: {
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { description: 'Local.', type: 'object', properties: { name: { type: 'string' } } },
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status': { type: 'object', properties: { code: { type: 'integer' } } },
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status_v2': { type: 'object', properties: { other: { type: 'string' } } },
    },
    parameters: { 'body-abc': { name: 'body', in: 'body' } },
  };
  const remote = {
    paths: {
      '/apis/g.example.com/v1/things': {
        get: {
          parameters: [{ $ref: '#/parameters/body-abc' }, { $ref: '#/parameters/pretty-x' }],
          responses: { '200': { schema: { $ref: '#/definitions/g.Thing' } } },
        },
      },
      '/apis/g.example.com/v2/things': { get: { responses: { '200': { schema: { $ref: '#/definitions/g.Other' } } } } },
    },
    definitions: {
      'g.Thing': {
        properties: {
          metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
          status: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status' },
        },
      },
      'g.Other': { type: 'object' },
      // Equal but for its description and key order: the local one is used.
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { properties: { name: { type: 'string' } }, type: 'object', description: 'Remote.' },
      // Different, and so is Status_v2 here: renamed Status_v3.
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status': { type: 'object', properties: { code: { type: 'string' } } },
    },
    parameters: { 'body-abc': { name: 'body', in: 'body' }, 'pretty-x': { name: 'pretty', in: 'query' } },
  };

  test('only the group version, what it uses, conflicting definitions renamed with their references', () => {
    const c = contributionFrom(remote, local, 'g.example.com', 'v1');
    assert.deepEqual(Object.keys(c.paths), ['/apis/g.example.com/v1/things']);
    assert.deepEqual(Object.keys(c.definitions).sort(), ['g.Thing', 'io.k8s.apimachinery.pkg.apis.meta.v1.Status_v3']);
    assert.deepEqual(c.definitions['g.Thing'], {
      properties: {
        metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
        status: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status_v3' },
      },
    });
    assert.deepEqual(c.parameters, { 'pretty-x': { name: 'pretty', in: 'query' } });
  });

  test('a path the local document has stays local', () => {
    const c = contributionFrom({ ...remote, paths: { '/api/v1/pods': { get: {} } } }, local, '', 'v1');
    assert.deepEqual(c.paths, {});
  });
});

describe('discovery conversion', () => {
  test("a legacy resource list becomes aggregated resources, subresources under their parent (kube's ConvertGroupVersionIntoToDiscovery)", () => {
    const resources = resourcesFromLegacyList({
      resources: [
        { name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list'], shortNames: ['fl'] },
        { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get', 'patch'] },
        { name: 'orphans/scale', singularName: '', namespaced: false, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get'] },
      ],
    });
    assert.deepEqual(resources, [
      {
        resource: 'flunders',
        responseKind: { group: '', version: '', kind: 'Flunder' },
        scope: 'Namespaced',
        singularResource: 'flunder',
        verbs: ['get', 'list'],
        shortNames: ['fl'],
        subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind: 'Flunder' }, verbs: ['get', 'patch'] }],
      },
      {
        resource: 'orphans',
        responseKind: { group: '', version: '', kind: '' },
        scope: 'Cluster',
        singularResource: '',
        verbs: [],
        subresources: [{ subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get'] }],
      },
    ]);
    assert.throws(
      () =>
        resourcesFromLegacyList({
          resources: [
            { name: 'a', namespaced: true, kind: 'A', verbs: [] },
            { name: 'a/status', namespaced: false, kind: 'A', verbs: [] },
          ],
        }),
      /Error: Parent a \(scope: Namespaced\) and subresource status \(scope: Cluster\) scope do not match$/,
    );
  });

  test('an aggregated document is read per group version', () => {
    const byGv = parseAggregatedDiscovery({
      items: [
        {
          metadata: { name: 'm.example.com' },
          versions: [{ version: 'v1', resources: [{ resource: 'nodes', scope: 'Cluster', verbs: ['get'] }], freshness: 'Current' }],
        },
      ],
    });
    assert.deepEqual([...byGv.keys()], ['m.example.com/v1']);
    assert.deepEqual(byGv.get('m.example.com/v1')?.resources?.[0].responseKind, { group: '', version: '', kind: '' });
  });
});

describe('proxied paths', () => {
  test('the group and version of /apis/GROUP/VERSION paths, and which are the discovery document', () => {
    assert.deepEqual(aggregatedPathOf('/apis/g.example.com/v1'), { group: 'g.example.com', version: 'v1', discovery: true });
    assert.deepEqual(aggregatedPathOf('/apis/g.example.com/v1/?x=1'), { group: 'g.example.com', version: 'v1', discovery: true });
    assert.deepEqual(aggregatedPathOf('/apis/g.example.com/v1/things?watch=true'), { group: 'g.example.com', version: 'v1', discovery: false });
    assert.equal(aggregatedPathOf('/apis/g.example.com'), undefined);
    assert.equal(aggregatedPathOf('/api/v1/pods'), undefined);
  });
});
