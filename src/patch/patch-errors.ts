import { ApiError, badRequest } from '../api/errors.js';

/**
 * The errors kube-apiserver's PATCH handler produces while applying a patch body, in one place so the
 * three patch engines report identical statuses for identical failures.
 */

/**
 * 422 Invalid as `NewGenericServerResponse(422, ...)` builds it: kube discards the underlying text and
 * answers with a fixed message. The detailed reason is kept as the error's `cause` for logs and tests.
 */
export function patchUnprocessable(detail: string): ApiError {
  const err = new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  Object.defineProperty(err, 'cause', { value: new Error(detail), enumerable: false, configurable: true, writable: true });
  return err;
}

/** 400 BadRequest with kube's message text. */
export function patchBadRequest(message: string): ApiError {
  return badRequest(message);
}

/**
 * A patch the strategic merge library refuses with a plain error (a list item without its merge key, an
 * unknown `$patch` value, a `$setElementOrder` list that does not match): kube-apiserver passes the
 * library's text through unmapped, which makes it a 500 with no reason. The fault is the client's, so
 * Capstan answers 400 BadRequest with the same text.
 */
export function patchRejected(message: string): ApiError {
  return badRequest(message);
}

/** The detailed reason attached by `patchUnprocessable`, if any. */
export function patchErrorDetail(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const cause: unknown = err.cause;
  return cause instanceof Error ? cause.message : undefined;
}
