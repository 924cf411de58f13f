import { logger } from '../../logging/logger.js';
import { decodeProtobufObject, encodeProtobufObject } from './protobuf-codec.js';
import { lookupMessage, protobufModule } from './proto-runtime.js';

/**
 * Readies the protobuf runtime once the server serves, in the event loop's spare turns: protobufjs,
 * the descriptor, the core/v1 types and a Namespace's encoding and decoding plans (with the OpenAPI
 * definitions they read). Without it the first protobuf request pays that, about 50 ms, and every client-go program
 * (envtest, controllers, kube-controller-manager) starts with one, usually while the server is idle
 * waiting for it. Each step is one turn of the loop, so a request arriving meanwhile waits for one
 * step (at most about 15 ms), not all of them. A step that throws ends the warm-up; the request
 * that needs the piece then builds it and reports the error as it would have.
 */
export function warmUpProtobufWhenIdle(signal: AbortSignal): void {
  const steps: (() => unknown)[] = [
    () => protobufModule(),
    () => lookupMessage('k8s.io.apimachinery.pkg.runtime.Unknown'),
    () => lookupMessage('k8s.io.api.core.v1.Namespace'),
    () => decodeProtobufObject(encodeProtobufObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'warm-up' } })),
  ];
  const next = (i: number): void => {
    if (i === steps.length || signal.aborted) return;
    try {
      steps[i]();
    } catch (error) {
      logger.debug('protobuf warm-up stopped', { error });
      return;
    }
    setImmediate(() => next(i + 1)).unref();
  };
  setImmediate(() => next(0)).unref();
}
