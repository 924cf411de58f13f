/**
 * CertificateSigningRequest writes through /approval and /status as kube-apiserver 1.36 answers them
 * (compared by hand with the reference): neither strategy resets metadata, /approval changes only the
 * conditions of the status, and conditions get lastUpdateTime and lastTransitionTime. The
 * `[sig-auth] Certificates API should support CSR API operations` conformance test checks the first.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

/** A PEM certificate request (P-256 key, CN httpsbench), base64 as spec.request carries it. */
const REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUU1IY0NBUUF3RlRFVE1CRUdBMVVFQXd3S2FIUjBjSE5pWlc1amFEQlpNQk1HQnlxR1NNNDlBZ0VHQ0NxRwpTTTQ5QXdFSEEwSUFCQ3ZsUUxsaWNNNTdTNklDb1FpUy9lSUJVejFvUGVMQ2ZiL3VrZ0RkOW5DQjJEZUVuQWVXCmw3dzhxTkpkdHdsVHM0c3lYK20xdDdJdWwwR050U0sxQXZxZ0FEQUtCZ2dxaGtqT1BRUURBZ05KQURCR0FpRUEKNXpGN0pTMVMxc2dhUWZDSTBONTR1U3VPV1NMLzhCNUl2Nk9xdXp4cWFoRUNJUURQcU1wN3IwTGlmUll4WHptegpOSlBRYWlSRlZnQ1ByTElMU2RMdVRod1NpUT09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

describe('CertificateSigningRequest /approval and /status', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(async () => {
    await srv?.stop();
  });

  const patch = (path: string, body: unknown) =>
    api(srv.url, path, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(body) });

  test('metadata changes through both subresources; approval keeps the rest of the status; conditions are stamped', async () => {
    const created = await api(srv.url, CSRS, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'csr-1' }, spec: { request: REQUEST, signerName: 'example.com/test', usages: ['digital signature'] } }),
    });
    assert.equal(created.status, 201, created.text);
    const approval = await patch(`${CSRS}/csr-1/approval`, {
      metadata: { annotations: { patchedapproval: 'true' } },
      status: { conditions: [{ type: 'ApprovalPatch', status: 'True', reason: 'e2e' }], certificate: 'bm90IGEgY2VydA==' },
    });
    assert.equal(approval.status, 200, approval.text);
    assert.deepEqual(approval.body.metadata.annotations, { patchedapproval: 'true' });
    assert.equal(approval.body.status.certificate, undefined, 'the approval subresource sets no certificate');
    const [condition] = approval.body.status.conditions;
    assert.equal(condition.type, 'ApprovalPatch');
    assert.match(condition.lastUpdateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(condition.lastTransitionTime, condition.lastUpdateTime);
    const status = await patch(`${CSRS}/csr-1/status`, {
      metadata: { labels: { patchedstatus: 'true' } },
      status: { conditions: [{ type: 'ApprovalPatch', status: 'True', reason: 'again', lastUpdateTime: '2020-01-01T00:00:00Z' }] },
    });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.body.metadata.labels, { patchedstatus: 'true' });
    assert.deepEqual(status.body.metadata.annotations, { patchedapproval: 'true' });
    const [again] = status.body.status.conditions;
    assert.equal(again.lastUpdateTime, '2020-01-01T00:00:00Z', 'a given lastUpdateTime is kept');
    assert.equal(again.lastTransitionTime, condition.lastTransitionTime, 'same type and status: the stored transition time');
  });
});
