/**
 * BOOKMARK events of a PartialObjectMetadata watch (what client-go's metadata informers open:
 * kube-controller-manager's garbage collector and quota controller) are PartialObjectMetadata
 * meta.k8s.io/v1, as kube-apiserver 1.36 sends them (recorded from the reference with
 * sendInitialEvents=true: `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
 * "metadata":{"resourceVersion":"2457","annotations":{"k8s.io/initial-events-end":"true"}}}`), in
 * JSON and in protobuf. Capstan sent the watched kind, which a metadata client cannot decode for
 * kinds outside its scheme (CustomResourceDefinition, APIService): kube-controller-manager logged
 * "unable to decode watch event: no kind ... is registered" and restarted those watches.
 * A watch of whole objects keeps the watched kind in its bookmarks.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { splitFrames } from '../../src/codec/protobuf/envelope.js';
import { decodeProtobufWatchEvent } from '../../src/codec/protobuf/protobuf-codec.js';

const INITIAL_EVENTS = 'watch=1&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan';
const METADATA_JSON = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const METADATA_PROTOBUF = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

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
    const bookmark = events.find((e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true');
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
});
