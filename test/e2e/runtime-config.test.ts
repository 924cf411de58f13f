/**
 * Served API versions as kube-apiserver 1.36 serves them (issue 9): by default every GA version and
 * no alpha or beta one, in discovery, aggregated discovery, OpenAPI v2 and v3 and request paths;
 * `--runtime-config` turns levels, group versions and single resources on or off, in kube's syntax.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../src/cli/flags.js';
import { ResourceCatalog } from '../../src/catalog/resource-catalog.js';
import { levelOf, parseRuntimeConfig, servesGroupVersion, servesResource } from '../../src/config/runtime-config.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const known = (group: string, version: string): boolean => ResourceCatalog.isBuiltInGroupVersion(group, version);
const exists = (group: string): boolean => ResourceCatalog.isBuiltInGroup(group);

describe('--runtime-config parsing', () => {
  test('levels of version names', () => {
    assert.deepEqual(['v1', 'v2', 'v1beta1', 'v2beta2', 'v1alpha1', 'v1alpha3'].map(levelOf), ['ga', 'ga', 'beta', 'beta', 'alpha', 'alpha']);
  });

  test('defaults: GA served, beta and alpha not', () => {
    const c = parseRuntimeConfig('', known, exists);
    assert.equal(servesGroupVersion(c, 'apps', 'v1'), true);
    assert.equal(servesGroupVersion(c, 'storage.k8s.io', 'v1beta1'), false);
    assert.equal(servesGroupVersion(c, 'resource.k8s.io', 'v1alpha3'), false);
  });

  test('broad keys apply first, then group versions, then resources, in any order; a bare key means true', () => {
    const c = parseRuntimeConfig(
      'storage.k8s.io/v1beta1=false,api/all=true,resource.k8s.io/v1beta2/deviceclasses=false,api/alpha=false,api/v1/pods=false,coordination.k8s.io/v1alpha2',
      known,
      exists,
    );
    assert.equal(servesGroupVersion(c, 'storage.k8s.io', 'v1beta1'), false, 'the group version overrides api/all');
    assert.equal(servesGroupVersion(c, 'networking.k8s.io', 'v1beta1'), true, 'api/all');
    assert.equal(servesGroupVersion(c, 'resource.k8s.io', 'v1alpha3'), false, 'api/alpha=false after api/all=true');
    assert.equal(servesGroupVersion(c, 'coordination.k8s.io', 'v1alpha2'), true, 'a bare key is true');
    assert.equal(servesResource(c, 'resource.k8s.io', 'v1beta2', 'deviceclasses'), false);
    assert.equal(servesResource(c, 'resource.k8s.io', 'v1beta2', 'resourceclaims'), true);
    assert.equal(servesResource(c, '', 'v1', 'pods'), false);
    assert.equal(servesResource(c, '', 'v1', 'configmaps'), true);
    // Versions kube serves only behind a feature gate Capstan does not have: accepted, never served.
    const gated = parseRuntimeConfig('api/all=true,certificates.k8s.io/v1beta1=true', known, exists);
    assert.equal(servesGroupVersion(gated, 'certificates.k8s.io', 'v1beta1'), false);
    assert.equal(servesGroupVersion(gated, 'storagemigration.k8s.io', 'v1beta1'), false);
    assert.equal(servesGroupVersion(gated, 'admissionregistration.k8s.io', 'v1alpha1'), true);
    const core = parseRuntimeConfig('api/v1=false', known, exists);
    assert.equal(servesGroupVersion(core, '', 'v1'), false, 'api/v1 names the core group');
  });

  test("bad entries are one-line flag errors with kube-apiserver's words; an unknown resource is not one", () => {
    const message = (value: string): string => {
      try {
        parseArgs(['--runtime-config', value]);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const flag = (value: string, reason: string): string => `invalid argument "${value}" for "--runtime-config" flag: ${reason}`;
    assert.equal(message('foo.example.com/v1=true'), flag('foo.example.com/v1=true', 'unknown api groups foo.example.com/v1'));
    assert.equal(message('apps/v7=true'), flag('apps/v7=true', 'group version apps/v7 that has not been registered'));
    assert.equal(message('api/all=yes'), flag('api/all=yes', 'invalid value api/all=yes'));
    assert.equal(message('apps/v1=maybe'), flag('apps/v1=maybe', 'invalid value of apps/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'));
    assert.equal(message('apps/v1/deployments/extra=true'), flag('apps/v1/deployments/extra=true', 'runtime-config invalid key apps/v1/deployments/extra'));
    assert.equal(message('apps/v1/nonexistent=false'), 'accepted');
    assert.equal(message('api/beta=0,v1=T,apps/v1/deployments=False'), 'accepted', "Go's boolean spellings");
  });
});

/** `group/version` pairs a server lists in /apis (and `v1` from /api). */
async function discovered(url: string): Promise<string[]> {
  const apis = await api(url, '/apis');
  const core = await api(url, '/api');
  const gvs = (apis.body.groups as Array<{ versions: Array<{ groupVersion: string }> }>).flatMap((g) => g.versions.map((v) => v.groupVersion));
  return [...(core.body.versions as string[]), ...gvs];
}

describe('served versions', () => {
  let defaults: TestServer;
  let enabled: TestServer;

  before(async () => {
    defaults = await startTestServer();
    enabled = await startTestServer({
      runtimeConfig: parseRuntimeConfig('resource.k8s.io/v1beta2=true,storage.k8s.io/v1/csidrivers=false,api/alpha=true', known, exists),
    });
  });

  after(async () => {
    await defaults?.stop();
    await enabled?.stop();
  });

  test('by default: discovery, aggregated discovery, OpenAPI and paths have no alpha or beta version', async () => {
    const gvs = await discovered(defaults.url);
    assert.deepEqual(
      gvs.filter((gv) => /(alpha|beta)\d*$/.test(gv)),
      [],
    );
    for (const gv of ['v1', 'apps/v1', 'autoscaling/v2', 'autoscaling/v1', 'storage.k8s.io/v1', 'resource.k8s.io/v1', 'coordination.k8s.io/v1'])
      assert.ok(gvs.includes(gv), gv);
    // Groups with no GA version are not served at all.
    assert.ok(!gvs.some((gv) => gv.startsWith('storagemigration.k8s.io/') || gv.startsWith('internal.apiserver.k8s.io/')), gvs.join(' '));

    const aggregated = await api(defaults.url, '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    const aggregatedVersions = (aggregated.body.items as Array<{ metadata: { name: string }; versions: Array<{ version: string }> }>).flatMap((g) =>
      g.versions.map((v) => `${g.metadata.name}/${v.version}`),
    );
    assert.deepEqual(
      aggregatedVersions.filter((gv) => /(alpha|beta)\d*$/.test(gv)),
      [],
    );

    const v2 = await api(defaults.url, '/openapi/v2');
    const paths = Object.keys(v2.body.paths as object);
    assert.deepEqual(
      paths.filter((p) => /\/v\d+(alpha|beta)\d*\//.test(p)),
      [],
    );
    assert.ok(paths.includes('/apis/storage.k8s.io/v1/csidrivers'));
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/logs')),
      [],
      '/logs/ is not served, so not described',
    );
    // kube-apiserver 1.36 with its defaults describes 408 paths and 584 definitions.
    assert.equal(paths.length, 408);
    assert.equal(Object.keys(v2.body.definitions as object).length, 584);
    const definitions = Object.keys(v2.body.definitions as object);
    assert.deepEqual(
      definitions.filter((d) => /\.v\d+(alpha|beta)\d*\./.test(d)),
      [],
      'no definition of an unserved version',
    );
    assert.ok(definitions.includes('io.k8s.api.apps.v1.Deployment'));

    const v3 = await api(defaults.url, '/openapi/v3');
    assert.deepEqual(
      Object.keys(v3.body.paths as object).filter((k) => /(alpha|beta)\d*$/.test(k)),
      [],
    );
    assert.equal((await api(defaults.url, '/openapi/v3/apis/storage.k8s.io/v1beta1')).status, 404);

    assert.equal((await api(defaults.url, '/apis/storage.k8s.io/v1beta1/volumeattributesclasses')).status, 404);
    assert.equal((await api(defaults.url, '/apis/storage.k8s.io/v1/csidrivers')).status, 200);
  });

  test('--runtime-config turns group versions and resources on and off everywhere', async () => {
    const gvs = await discovered(enabled.url);
    assert.ok(gvs.includes('resource.k8s.io/v1beta2'));
    assert.ok(!gvs.includes('resource.k8s.io/v1beta1'), 'only the named beta version');
    assert.ok(gvs.includes('resource.k8s.io/v1alpha3') && gvs.includes('coordination.k8s.io/v1alpha2'), 'api/alpha=true');
    assert.ok(gvs.includes('internal.apiserver.k8s.io/v1alpha1'), 'a group with only an alpha version appears');

    const storage = await api(enabled.url, '/apis/storage.k8s.io/v1');
    const names = (storage.body.resources as Array<{ name: string }>).map((r) => r.name);
    assert.ok(!names.includes('csidrivers') && names.includes('storageclasses'), names.join(' '));
    assert.equal((await api(enabled.url, '/apis/storage.k8s.io/v1/csidrivers')).status, 404);

    const created = await api(enabled.url, '/apis/resource.k8s.io/v1beta2/deviceclasses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'resource.k8s.io/v1beta2', kind: 'DeviceClass', metadata: { name: 'gpu' } }),
    });
    assert.equal(created.status, 201, created.text);

    const v2 = await api(enabled.url, '/openapi/v2');
    const paths = Object.keys(v2.body.paths as object);
    assert.ok(paths.includes('/apis/resource.k8s.io/v1beta2/deviceclasses'));
    assert.ok(!paths.some((p) => p.startsWith('/apis/resource.k8s.io/v1beta1/')));
    assert.ok(!paths.some((p) => p.startsWith('/apis/storage.k8s.io/v1/csidrivers')), 'a resource turned off leaves OpenAPI');
    const v3 = await api(enabled.url, '/openapi/v3');
    assert.ok(Object.keys(v3.body.paths as object).includes('apis/resource.k8s.io/v1beta2'));
  });
});
