/**
 * Raised when an object has no protobuf form (custom resources, meta.k8s.io Table): the caller answers
 * in JSON when the client also accepts it, or 406 Not Acceptable otherwise, as kube-apiserver does.
 */
export class ProtobufUnsupportedError extends Error {
  readonly apiVersion: string;
  readonly kind: string;

  constructor(apiVersion: string, kind: string) {
    super(`object ${kind} (${apiVersion || 'no apiVersion'}) has no protobuf representation`);
    this.name = 'ProtobufUnsupportedError';
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}
