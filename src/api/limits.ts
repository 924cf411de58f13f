/**
 * Bounds on the work one request can make the server do. Defaults are kube-apiserver's where it has the
 * limit; each has a command-line flag (src/cli/flags.ts). Every breach answers with its own 4xx `Status`
 * before the expensive work starts.
 */
export interface Limits {
  /** Bytes of a request body (kube-apiserver: 3 MiB); 413 above. */
  maxRequestBodyBytes: number;
  /**
   * Bytes of an object as stored, in its JSON form (etcd's default request limit, 1.5 MiB, which
   * kube-apiserver's storage inherits); 413 above.
   */
  maxObjectBytes: number;
  /**
   * Nesting of objects and arrays in a decoded body, whatever its media type. kube's decoders allow
   * 10,000 levels; Capstan allows 1,000 because the server walks objects recursively and 1,000 levels is
   * what every walk handles with a wide margin on Node's stack. Real objects stay under 100.
   */
  maxNestingDepth: number;
  /** Operations in one JSON patch (kube-apiserver: 10,000); 413 above. */
  maxJsonPatchOperations: number;
  /** Bytes that JSON patch `copy` operations may add to a document (kube-apiserver: 3 MiB); 422 above. */
  maxJsonPatchCopyBytes: number;
}

/** The limits a server has without flags. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxRequestBodyBytes: 3 * 1024 * 1024,
  maxObjectBytes: 1536 * 1024,
  maxNestingDepth: 1000,
  maxJsonPatchOperations: 10_000,
  maxJsonPatchCopyBytes: 3 * 1024 * 1024,
});
