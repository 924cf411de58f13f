import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { convertSchema, v3KeyOfPath } from '../../src/openapi/openapi-v3-convert.js';
import { chooseOffer } from '../../src/openapi/openapi-accept.js';
import { OpenApiService } from '../../src/openapi/openapi-service.js';

describe('v3 document keys', () => {
  test('paths map to the web service roots kube-apiserver serves', () => {
    assert.equal(v3KeyOfPath('/api/'), 'api');
    assert.equal(v3KeyOfPath('/api/v1/namespaces/{namespace}/pods'), 'api/v1');
    assert.equal(v3KeyOfPath('/apis/'), 'apis');
    assert.equal(v3KeyOfPath('/apis/apps/'), 'apis/apps');
    assert.equal(v3KeyOfPath('/apis/apps/v1/deployments'), 'apis/apps/v1');
    assert.equal(v3KeyOfPath('/version/'), 'version');
    assert.equal(v3KeyOfPath('/logs/{logpath}'), 'logs');
    assert.equal(v3KeyOfPath('/.well-known/openid-configuration/'), '.well-known/openid-configuration');
  });
});

describe('v3 schema conversion', () => {
  test('rewrites refs and wraps a ref with siblings in allOf', () => {
    const out = convertSchema({
      type: 'object',
      properties: {
        plain: { $ref: '#/definitions/a.B' },
        described: { $ref: '#/definitions/a.C', description: 'x' },
        list: { type: 'array', items: { $ref: '#/definitions/a.D' }, 'x-kubernetes-list-type': 'atomic' },
        map: { type: 'object', additionalProperties: { $ref: '#/definitions/a.E' } },
      },
    });
    assert.deepEqual(out, {
      type: 'object',
      properties: {
        plain: { $ref: '#/components/schemas/a.B' },
        described: { allOf: [{ $ref: '#/components/schemas/a.C' }], description: 'x' },
        list: { type: 'array', items: { $ref: '#/components/schemas/a.D' }, 'x-kubernetes-list-type': 'atomic' },
        map: { type: 'object', additionalProperties: { $ref: '#/components/schemas/a.E' } },
      },
    });
  });
});

describe('openapi accept negotiation', () => {
  const offers = [
    { type: 'application', subtype: 'json' },
    { type: 'application', subtype: 'x+protobuf' },
  ];
  test('orders by quality then specificity, server order for wildcards', () => {
    assert.equal(chooseOffer(undefined, offers), 0);
    assert.equal(chooseOffer('*/*', offers), 0);
    assert.equal(chooseOffer('application/x+protobuf', offers), 1);
    assert.equal(chooseOffer('application/json;q=0.5, application/x+protobuf', offers), 1);
    assert.equal(chooseOffer('application/*, application/x+protobuf', offers), 1);
    assert.equal(chooseOffer('text/plain', offers), undefined);
    assert.equal(chooseOffer('application/json;q=0', offers), undefined);
  });
});

describe('OpenApiService contributions', () => {
  const swagger = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1.36.0' },
    paths: {
      '/api/v1/namespaces': {
        post: {
          consumes: ['*/*'],
          produces: ['application/json'],
          parameters: [{ in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/core.Namespace' } }, { $ref: '#/parameters/fv' }],
          responses: { '201': { schema: { $ref: '#/definitions/core.Namespace' } }, '401': {} },
          'x-kubernetes-action': 'post',
        },
      },
    },
    parameters: { fv: { in: 'query', name: 'fieldValidation', type: 'string', uniqueItems: true } },
    definitions: { 'core.Namespace': { type: 'object' } },
  };

  test('a contribution adds a group-version to v2 and v3, and its removal takes it away', () => {
    const service = new OpenApiService(() => Buffer.from(JSON.stringify(swagger)));
    const before = service.v3Index().hash;
    assert.deepEqual(service.v3KeyList(), ['api/v1']);
    const core = JSON.parse(service.v3Document('api/v1')?.bytes.toString() ?? '{}');
    const op = core.paths['/api/v1/namespaces'].post;
    assert.deepEqual(op.parameters, [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }]);
    assert.deepEqual(op.requestBody, {
      content: { '*/*': { schema: { $ref: '#/components/schemas/core.Namespace' } } },
      required: true,
    });
    assert.equal(op.responses['401'].description, 'Unauthorized');

    service.setContribution('widgets.example.com', {
      paths: { '/apis/example.com/v1/widgets': { get: { responses: { '200': { schema: { $ref: '#/definitions/com.example.v1.Widget' } } } } } },
      definitions: { 'com.example.v1.Widget': { type: 'object', properties: { spec: { type: 'object' } } } },
    });
    assert.deepEqual(service.v3KeyList(), ['api/v1', 'apis/example.com/v1']);
    assert.notEqual(service.v3Index().hash, before);
    const widget = JSON.parse(service.v3Document('apis/example.com/v1')?.bytes.toString() ?? '{}');
    assert.ok(widget.components.schemas['com.example.v1.Widget']);
    const v2 = JSON.parse(service.v2Json().bytes.toString());
    assert.ok(v2.definitions['com.example.v1.Widget']);

    service.removeContribution('widgets.example.com');
    assert.deepEqual(service.v3KeyList(), ['api/v1']);
    assert.equal(service.v3Document('apis/example.com/v1'), undefined);
    assert.equal(service.v3Index().hash, before);
  });

  test('an explicit v3 document is served for its key', () => {
    const service = new OpenApiService(() => Buffer.from(JSON.stringify(swagger)));
    service.setV3Document('apis/example.com/v2', { openapi: '3.0.0', paths: {}, components: { schemas: {} } });
    assert.deepEqual(service.v3KeyList(), ['api/v1', 'apis/example.com/v2']);
    assert.equal(JSON.parse(service.v3Document('apis/example.com/v2')?.bytes.toString() ?? '{}').openapi, '3.0.0');
    service.removeV3Document('apis/example.com/v2');
    assert.equal(service.v3Document('apis/example.com/v2'), undefined);
  });
});
