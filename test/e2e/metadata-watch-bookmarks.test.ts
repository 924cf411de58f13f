/**
 * BOOKMARK events of a PartialObjectMetadata watch (what client-go's metadata informers open:
 * kube-controller-manager's garbage collector and quota controller) are PartialObjectMetadata
 * meta.k8s.io/v1, as kube-apiserver 1.36 sends them (recorded from the reference with
 * sendInitialEvents=true: `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
 * "metadata":{"resourceVersion":"2457","annotations":{"k8s.io/initial-events-end":"true"}}}`), in
 * JSON and in protobuf. Capstan sent the watched kind, which a metadata client cannot decode for
 * kinds outside its scheme (CustomResourceDefinition, APIService): kube-controller-manager logged
 * "unable to decode watch event: no kind ... is registered" and restarted those watches.
 * A watch of whole objects keeps the watched kind in its bookmarks. A Table watch's bookmark is a
 * Table with one row, the kind's columns printed for the bookmark's empty object (cells recorded from
 * the reference), with column definitions when it is the watch's first event.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { splitFrames } from '../../src/codec/protobuf/envelope.js';
import { decodeProtobufWatchEvent } from '../../src/codec/protobuf/protobuf-codec.js';

const INITIAL_EVENTS = 'watch=1&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan';
const METADATA_JSON = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const METADATA_PROTOBUF = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

/** kube-apiserver 1.36.4's bookmark rows in an empty namespace: the columns and the cells of an empty object. */
const REFERENCE_TABLE_BOOKMARKS: Record<string, { columns: string[]; cells: unknown[] }> = {
  configmaps: { columns: ['Name', 'Data', 'Age'], cells: ['', 0, '<unknown>'] },
  deployments: {
    columns: ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector'],
    cells: ['', '0/0', 0, 0, '<unknown>', '', '', ''],
  },
  pods: {
    columns: ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates'],
    cells: ['', '0/0', '', '0', '<unknown>', '<none>', '<none>', '<none>', '<none>'],
  },
};

describe('bookmarks of PartialObjectMetadata watches', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.stop());

  /** The events of a watch that ends by itself after a second. */
  async function watchEvents(path: string, accept: string): Promise<{ type: string; object: any }[]> {
    const res = await fetch(`${srv.url}${path}?${INITIAL_EVENTS}`, { headers: { accept } });
    assert.equal(res.status, 200, `${path} (${accept})`);
    const body = new Uint8Array(await res.arrayBuffer());
    if (accept.startsWith('application/vnd.kubernetes.protobuf')) {
      const { frames, rest } = splitFrames(body);
      assert.equal(rest.length, 0);
      return frames.map((f) => decodeProtobufWatchEvent(f));
    }
    return Buffer.from(body)
      .toString()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
  }

  const initialEventsEnd = (events: { type: string; object: any }[]): any => {
    // A Table carries the bookmark's annotations on its row's object.
    const annotations = (o: any): any => (o.kind === 'Table' ? o.rows?.[0]?.object : o).metadata?.annotations;
    const bookmark = events.find((e) => e.type === 'BOOKMARK' && annotations(e.object)?.['k8s.io/initial-events-end'] === 'true');
    assert.ok(bookmark, `an initial-events-end bookmark among ${events.map((e) => e.type).join(', ')}`);
    return bookmark.object;
  };

  for (const path of ['/apis/apiextensions.k8s.io/v1/customresourcedefinitions', '/apis/apiregistration.k8s.io/v1/apiservices', '/api/v1/namespaces']) {
    test(`${path}: JSON and protobuf bookmarks are PartialObjectMetadata, like every event`, async () => {
      for (const accept of [METADATA_JSON, METADATA_PROTOBUF]) {
        const events = await watchEvents(path, accept);
        for (const e of events) assert.equal(e.object.kind, 'PartialObjectMetadata', `${e.type} event (${accept})`);
        const bookmark = initialEventsEnd(events);
        assert.equal(bookmark.apiVersion, 'meta.k8s.io/v1');
        assert.match(bookmark.metadata.resourceVersion, /^[1-9][0-9]*$/);
        assert.deepEqual(Object.keys(bookmark.metadata).sort(), ['annotations', 'resourceVersion']);
      }
    });
  }

  test('a watch of whole objects keeps the watched kind in its bookmarks', async () => {
    const bookmark = initialEventsEnd(await watchEvents('/api/v1/namespaces', 'application/json'));
    assert.equal(bookmark.kind, 'Namespace');
    assert.equal(bookmark.apiVersion, 'v1');
  });

  test('a Table watch bookmark is a Table with one row for the empty object, with the column definitions when first', async () => {
    const ns = uniqueName('bookmarks');
    const created = await api(srv.url, '/api/v1/namespaces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: ns } }),
    });
    assert.equal(created.status, 201);
    for (const [resource, expected] of Object.entries(REFERENCE_TABLE_BOOKMARKS)) {
      const path = resource === 'deployments' ? `/apis/apps/v1/namespaces/${ns}/deployments` : `/api/v1/namespaces/${ns}/${resource}`;
      const events = await watchEvents(path, TABLE);
      // No object: the initial-events-end bookmark comes first (a later one may precede the timeout).
      assert.ok(
        events.every((e) => e.type === 'BOOKMARK'),
        resource,
      );
      const table = initialEventsEnd(events);
      assert.equal(events[0].object, table, `${resource}: the first event`);
      assert.equal(table.kind, 'Table');
      assert.equal(table.apiVersion, 'meta.k8s.io/v1');
      assert.match(table.metadata.resourceVersion, /^[1-9][0-9]*$/);
      assert.deepEqual(
        table.columnDefinitions.map((c: any) => c.name),
        expected.columns,
        resource,
      );
      assert.equal(table.rows.length, 1);
      assert.deepEqual(table.rows[0].cells, expected.cells, resource);
      assert.deepEqual(table.rows[0].object, {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: table.metadata.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
      });
    }
    // After an object's event, which carried the column definitions, the bookmark has none.
    const cm = await api(srv.url, `/api/v1/namespaces/${ns}/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'a' } }),
    });
    assert.equal(cm.status, 201);
    const events = await watchEvents(`/api/v1/namespaces/${ns}/configmaps`, TABLE);
    assert.deepEqual(
      events.slice(0, 2).map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
    assert.equal(events[0].object.columnDefinitions.length, 3);
    const table = initialEventsEnd(events);
    assert.equal(table.columnDefinitions, null);
    assert.deepEqual(table.rows[0].cells, REFERENCE_TABLE_BOOKMARKS.configmaps.cells);
  });
});
