/**
 * decode: what type-checking a realistic Deployment and Pod body costs in the server's decode stage,
 * measured in this process (no server; the target only names the column): the hand-written walk alone
 * against decodeInto's ajv fast path, on the parsed value and with JSON parsing included, plus a body
 * with one unknown field (ajv refuses, so the fast path pays for ajv and then the walk); and reading
 * the same bodies sent as protobuf (client-go's encoding) into their JSON form, beside JSON.parse.
 */
import { readJson } from '../src/codec/json-text.js';
import { decodeInto, walkInto } from '../src/codec/typed-decode.js';
import { kindValidator } from '../src/codec/kind-validators.js';
import { decodeProtobufObject, encodeProtobufObject } from '../src/codec/protobuf/protobuf-codec.js';
import { schemaForKind, type SchemaNode } from '../src/schema/openapi-schema.js';
import { deploymentBody, podBody } from './manifests.js';
import { metric, type Metric } from './metrics.js';
import { median } from './stats.js';
import type { Scenario } from './scenario.js';

type Obj = Record<string, unknown>;

function parsed(text: string): Obj {
  const value = readJson(text, { maxDepth: 1000 }).value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('bench body is not an object');
  return value as Obj;
}

/**
 * Microseconds one call of each of `bodies` takes: median over `rounds` of the average over
 * `iterations` calls. The variants take turns within each round, so a busy host slows them alike.
 */
function microseconds(rounds: number, iterations: number, bodies: ReadonlyArray<() => void>): number[] {
  for (const body of bodies) for (let i = 0; i < Math.min(iterations, 500); i++) body();
  const perCall: number[][] = bodies.map(() => []);
  for (let r = 0; r < rounds; r++) {
    bodies.forEach((body, b) => {
      const t0 = performance.now();
      for (let i = 0; i < iterations; i++) body();
      perCall[b]?.push(((performance.now() - t0) * 1000) / iterations);
    });
  }
  return perCall.map((values) => median(values));
}

function schemaOf(group: string, kind: string): SchemaNode {
  const schema = schemaForKind(group, 'v1', kind);
  if (schema?.definition === undefined) throw new Error(`no schema for ${kind}`);
  return schema;
}

export const decodeScenario: Scenario = {
  name: 'decode',
  title: 'decode: type check of a realistic body in-process (µs per body; walk only vs ajv fast path)',
  run(_target, options) {
    const iterations = options.quick ? 1000 : 4000;
    const rounds = options.quick ? 5 : 9;
    const kinds: Array<[string, SchemaNode, string]> = [
      ['Deployment', schemaOf('apps', 'Deployment'), deploymentBody('bench-web')],
      ['Pod', schemaOf('', 'Pod'), podBody('bench-web')],
    ];
    const metrics: Metric[] = [];
    for (const [kind, schema] of kinds) {
      const definition = schema.definition ?? '';
      const t0 = performance.now();
      kindValidator(definition, 'json');
      metrics.push(metric(`${kind}: first use (built module loaded; shared definitions reused)`, performance.now() - t0, 'ms'));
    }
    for (const [kind, schema, text] of kinds) {
      const value = parsed(text);
      const [walk = NaN, fast = NaN, parseWalk = NaN, parseFast = NaN] = microseconds(rounds, iterations, [
        () => walkInto(value, schema),
        () => decodeInto(value, schema),
        () => walkInto(parsed(text), schema),
        () => decodeInto(parsed(text), schema),
      ]);
      metrics.push(
        metric(`${kind}: type check, walk only`, walk, 'µs'),
        metric(`${kind}: type check, ajv fast path`, fast, 'µs'),
        metric(`${kind}: walk / ajv`, walk / fast, 'ratio', { higherIsBetter: true }),
        metric(`${kind}: parse + type check, walk only`, parseWalk, 'µs'),
        metric(`${kind}: parse + type check, ajv fast path`, parseFast, 'µs'),
      );
    }
    const [, deploymentSchema, deploymentText] = kinds[0] ?? [];
    if (deploymentSchema !== undefined && deploymentText !== undefined) {
      const unknown = deploymentText.replace('"replicas":3', '"replicas":3,"replica":3');
      const [walk = NaN, fast = NaN] = microseconds(rounds, iterations, [
        () => walkInto(parsed(unknown), deploymentSchema),
        () => decodeInto(parsed(unknown), deploymentSchema),
      ]);
      metrics.push(
        metric('Deployment + unknown field: parse + walk only', walk, 'µs'),
        metric('Deployment + unknown field: parse + ajv, then walk', fast, 'µs'),
      );
    }
    for (const [kind, , text] of kinds) {
      const value = parsed(text);
      const bytes = encodeProtobufObject(value);
      const [json = NaN, proto = NaN] = microseconds(rounds, iterations, [() => JSON.parse(text) as unknown, () => decodeProtobufObject(bytes)]);
      metrics.push(
        metric(`${kind}: JSON.parse of the body (${Buffer.byteLength(text)} B)`, json, 'µs'),
        metric(`${kind}: protobuf body (${bytes.length} B) to its JSON form`, proto, 'µs'),
      );
    }
    return Promise.resolve({ metrics, notes: [`in-process, ${rounds} rounds of ${iterations} bodies, median; the target is not used`] });
  },
};
