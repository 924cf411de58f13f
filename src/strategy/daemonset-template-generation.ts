import { goQuote } from '../codec/go-quote.js';
import { isObject, jsonEqual, type Obj } from '../api/object-util.js';

/**
 * A DaemonSet's template generation, which apps/v1 carries in an annotation (kube's internal
 * `spec.templateGeneration`): decoding a v1 DaemonSet parses the annotation into the field (an
 * absent one is 0, one that is no int64 fails the request), encoding writes the field back, so every
 * DaemonSet a client reads has it. Create starts it at 1 (or at the value sent, when higher); an
 * update keeps the stored value and adds one when the pod template changed; a status write keeps it.
 */

/** The annotation (`appsv1.DeprecatedTemplateGeneration`). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function annotationsOf(obj: Obj): Record<string, unknown> | undefined {
  const meta = obj.metadata;
  if (!isObject(meta)) return undefined;
  return isObject(meta.annotations) ? meta.annotations : undefined;
}

/** Go's strconv.ParseInt(s, 10, 64): the value, or the error text. */
function parseInt64(text: string): bigint | string {
  if (!/^[+-]?[0-9]+$/.test(text)) return `strconv.ParseInt: parsing ${goQuote(text)}: invalid syntax`;
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) return `strconv.ParseInt: parsing ${goQuote(text)}: value out of range`;
  return value;
}

/** The template generation `obj` carries (0 without the annotation or with one that does not parse). */
export function templateGeneration(obj: Obj): bigint {
  const value = annotationsOf(obj)?.[TEMPLATE_GENERATION_ANNOTATION];
  if (typeof value !== 'string') return 0n;
  const parsed = parseInt64(value);
  return typeof parsed === 'bigint' ? parsed : 0n;
}

/** Writes `generation` into the annotation, creating the annotations map when needed. */
export function setTemplateGeneration(obj: Obj, generation: bigint): void {
  if (!isObject(obj.metadata)) obj.metadata = {};
  const meta = obj.metadata as Obj;
  const annotations = isObject(meta.annotations) ? meta.annotations : {};
  annotations[TEMPLATE_GENERATION_ANNOTATION] = generation.toString();
  meta.annotations = annotations;
}

/**
 * What decoding the v1 body and encoding it again does to the annotation, as kube's field manager
 * then sees the object: an absent annotation becomes "0", a valid one its canonical decimal form.
 * Returns the converter's error for a value that is no int64, leaving `obj` as it was.
 */
export function decodeTemplateGeneration(obj: Obj): string | undefined {
  const value = annotationsOf(obj)?.[TEMPLATE_GENERATION_ANNOTATION];
  if (typeof value === 'string') {
    const parsed = parseInt64(value);
    if (typeof parsed === 'string') return parsed;
    setTemplateGeneration(obj, parsed);
    return undefined;
  }
  setTemplateGeneration(obj, 0n);
  return undefined;
}

/** kube's PrepareForCreate: at least 1. */
export function templateGenerationOnCreate(obj: Obj): void {
  const sent = templateGeneration(obj);
  setTemplateGeneration(obj, sent < 1n ? 1n : sent);
}

/** kube's PrepareForUpdate: the stored value, plus one when the pod template changed. */
export function templateGenerationOnUpdate(next: Obj, old: Obj): void {
  const stored = templateGeneration(old);
  const template = (o: Obj): unknown => (isObject(o.spec) ? o.spec.template : undefined);
  setTemplateGeneration(next, jsonEqual(template(next), template(old)) ? stored : stored + 1n);
}

/** The status strategy's PrepareForUpdate keeps the stored spec, so the stored value. */
export function templateGenerationOnStatusWrite(next: Obj, old: Obj): void {
  setTemplateGeneration(next, templateGeneration(old));
}
