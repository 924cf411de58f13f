/**
 * A CRD is in discovery no later than in OpenAPI, as in kube (discovery once Established, OpenAPI
 * with or after it): the moment /openapi/v2 shows a new CRD's definition, plain discovery (/apis,
 * /apis/GROUP/VERSION) and aggregated discovery (apidiscovery.k8s.io/v2) list its resource with its
 * short name on every worker, and `kubectl explain SHORTNAME.spec` works at once. The CRD is the
 * one of kube's e2e CustomResourcePublishOpenAPI "same resource name as built-in" test (a custom
 * `services` of kind Service). Embedded store and Redis with two workers; requests on fresh
 * connections so that both workers answer.
 *
 * That e2e test is [Flaky] in kube for a client-side reason this test avoids by giving kubectl a
 * cold cache: kubectl expands short names from its disk cache of discovery (~/.kube/cache, six
 * hours) before asking the server, so with a cache written before the CRD existed the short name
 * is never expanded ("the server doesn't have a resource type"), against kube-apiserver 1.36 as
 * against Capstan (kubernetes/kubernetes#65517).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { definitionName } from '../../src/openapi/crd-openapi.js';
import { startTestServer, uniqueName } from '../helpers/capstan.js';
import { startRedisWorkers } from '../helpers/redis-workers.js';
import { kubectlFor } from './kubectl.js';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** GET on a connection of its own (the primary hands each connection to the next worker). */
function get(url: string, path: string, accept = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent: false, headers: { accept, connection: 'close' }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.end();
  });
}

function serviceCrd(group: string, shortName: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `services.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'services', singular: 'service', kind: 'Service', listKind: 'ServiceList', shortNames: [shortName] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'CustomService CRD for Testing',
              properties: {
                spec: {
                  type: 'object',
                  description: 'Specification of CustomService',
                  properties: { dummy: { type: 'string', description: 'Dummy property.' } },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** Creates the CRD, waits for its OpenAPI definition, then checks discovery and kubectl explain at once. */
async function discoveryNoLaterThanOpenApi(url: string, kubeconfig: string): Promise<void> {
  const group = `${uniqueName('crdfs')}.example.com`;
  const shortName = uniqueName('ksvc');
  const created = await new Promise<number>((resolve, reject) => {
    const body = JSON.stringify(serviceCrd(group, shortName));
    const req = request(
      `${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  assert.equal(created, 201);

  const definition = `"${definitionName(group, 'v1', 'Service')}"`;
  const deadline = Date.now() + 10_000;
  while (!(await get(url, '/openapi/v2')).text.includes(definition)) {
    assert.ok(Date.now() < deadline, `${definition} not in /openapi/v2 within 10 s`);
    await new Promise((r) => setTimeout(r, 10));
  }

  // Right away, on fresh connections (both workers): every discovery document has the resource.
  for (let i = 0; i < 4; i++) {
    const groups = await get(url, '/apis');
    assert.ok(
      (JSON.parse(groups.text) as { groups: Array<{ name: string }> }).groups.some((g) => g.name === group),
      `/apis (request ${i}) lacks ${group}`,
    );
    const resources = await get(url, `/apis/${group}/v1`);
    assert.equal(resources.status, 200, `/apis/${group}/v1 (request ${i}): ${resources.text}`);
    const listed = (JSON.parse(resources.text) as { resources: Array<{ name: string; shortNames?: string[] }> }).resources;
    assert.deepEqual(listed.find((r) => r.name === 'services')?.shortNames, [shortName], `/apis/${group}/v1 (request ${i})`);
    const aggregated = JSON.parse((await get(url, '/apis', AGGREGATED)).text) as {
      items: Array<{ metadata: { name: string }; versions: Array<{ resources: Array<{ resource: string; shortNames?: string[] }> }> }>;
    };
    const entry = aggregated.items.find((g) => g.metadata.name === group);
    assert.deepEqual(entry?.versions[0]?.resources.find((r) => r.resource === 'services')?.shortNames, [shortName], `aggregated /apis (request ${i})`);
  }

  // kubectl with a cold discovery cache, as the e2e test's first kubectl call of a run.
  const out = await kubectlFor(kubeconfig).ok(['explain', `${shortName}.spec`]);
  assert.match(out, /DESCRIPTION:.*Specification of CustomService.*FIELDS:.*dummy.*<string>.*Dummy property/s);
}

describe('a new CRD is in discovery no later than in OpenAPI', () => {
  test('on the embedded store', async () => {
    const srv = await startTestServer();
    try {
      await discoveryNoLaterThanOpenApi(srv.url, srv.kubeconfig);
    } finally {
      await srv.stop();
    }
  });

  test('on Redis with two workers', async () => {
    const env = await startRedisWorkers();
    try {
      await discoveryNoLaterThanOpenApi(env.url, env.kubeconfig);
    } finally {
      await env.stop();
    }
  });
});
