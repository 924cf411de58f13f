/** kube's FieldManagerMaxLength: a manager name is at most this many bytes. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrint(ch: string): boolean {
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

/**
 * The manager a write that is not an apply is recorded under, as kube-apiserver's
 * managerOrUserAgent derives it: the `fieldManager` option when set, else the User-Agent up to its
 * first `/` (`kubectl`, `curl`, `Go-http-client`), non-printable characters dropped, cut to 128
 * bytes. May be empty; the tracker then records `unknown`.
 */
export function managerOrUserAgent(fieldManager: string, userAgent: string | undefined): string {
  if (fieldManager !== '') return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!isPrint(ch)) continue;
    const len = Buffer.byteLength(ch);
    if (bytes + len > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += len;
  }
  return out;
}
