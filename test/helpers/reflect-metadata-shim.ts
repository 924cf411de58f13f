/**
 * The few `Reflect` metadata functions tsyringe (a dependency of @peculiar/x509) demands at load time.
 * The reflect-metadata package is not installed; @peculiar/x509 never relies on decorator metadata
 * for the certificate generation tests use, so a per-target map is enough. Import before @peculiar/x509.
 */
type MetadataReflect = typeof Reflect & {
  getMetadata?: (key: unknown, target: object) => unknown;
  getOwnMetadata?: (key: unknown, target: object) => unknown;
  defineMetadata?: (key: unknown, value: unknown, target: object) => void;
};

const r = Reflect as MetadataReflect;
if (r.getMetadata === undefined) {
  const store = new WeakMap<object, Map<unknown, unknown>>();
  r.defineMetadata = (key, value, target) => {
    let m = store.get(target);
    if (m === undefined) store.set(target, (m = new Map()));
    m.set(key, value);
  };
  r.getOwnMetadata = (key, target) => store.get(target)?.get(key);
  r.getMetadata = (key, target) => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      const v = store.get(t)?.get(key);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}
export {};
