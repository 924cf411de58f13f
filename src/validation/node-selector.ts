/**
 * The Go JSON of a PersistentVolume's VolumeNodeAffinity as kube prints it in an immutability error
 * (internal structs have no JSON tags, so Go's field names appear). The node selector's own checks are
 * ValidateNodeSelector in node-affinity.ts.
 */
import { asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';

/** A list as Go marshals a decoded slice: null when absent. */
function goSlice<T>(v: unknown, each: (x: unknown) => T): T[] | null {
  return Array.isArray(v) ? v.map(each) : null;
}

function goRequirement(v: unknown): Obj {
  const r = asObject(v);
  return { Key: asString(r.key), Operator: asString(r.operator), Values: goSlice(r.values, asString) };
}

/** The Go JSON of an internal core.VolumeNodeAffinity (null when absent). */
export function goVolumeNodeAffinity(v: unknown): unknown {
  const affinity = objectOrUndefined(v);
  if (affinity === undefined) return null;
  const required = objectOrUndefined(affinity.required);
  return {
    Required:
      required === undefined
        ? null
        : {
            NodeSelectorTerms: goSlice(required.nodeSelectorTerms, (t) => ({
              MatchExpressions: goSlice(asObject(t).matchExpressions, goRequirement),
              MatchFields: goSlice(asObject(t).matchFields, goRequirement),
            })),
          },
  };
}
