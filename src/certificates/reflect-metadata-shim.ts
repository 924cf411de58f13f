/**
 * The three `Reflect` metadata functions tsyringe (a dependency of @peculiar/x509) checks for at
 * load time, for a process that has no `reflect-metadata` polyfill. Import this module before
 * @peculiar/x509; it defines nothing an existing polyfill already defines.
 */
const metadata = new WeakMap<object, Map<unknown, unknown>>();

type MetadataReflect = {
  getMetadata?: (key: unknown, target: object) => unknown;
  getOwnMetadata?: (key: unknown, target: object) => unknown;
  defineMetadata?: (key: unknown, value: unknown, target: object) => void;
};

const reflect = Reflect as unknown as MetadataReflect;
reflect.getMetadata ??= (key, target) => metadata.get(target)?.get(key);
reflect.getOwnMetadata ??= (key, target) => metadata.get(target)?.get(key);
reflect.defineMetadata ??= (key, value, target) => {
  let entries = metadata.get(target);
  if (entries === undefined) {
    entries = new Map();
    metadata.set(target, entries);
  }
  entries.set(key, value);
};

export {};
