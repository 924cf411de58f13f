import type { IncomingMessage } from 'node:http';
import type { AuthenticationResult, RequestAuthenticator } from './authenticator.js';
import { peerChain, subjectValues, verifyClientChain, type Roots } from './client-certificates.js';

/** The `--requestheader-*` settings. */
export interface RequestHeaderOptions {
  roots: Roots;
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** Every value of header `name`, each occurrence separately (Node joins repeated headers in `headers`). */
function values(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name.toLowerCase()] ?? [];
}

/**
 * kube's front-proxy authentication: a request whose client certificate verifies against the
 * requestheader CA (and, when `allowedNames` is set, has one of those common names) is the user
 * its headers name: the first non-empty username header, the uid header, every group header value,
 * and `extra` from headers under the prefixes (key lowercased and unescaped). The headers are
 * removed from the request, so nothing later sees them.
 */
export class RequestHeaderAuthenticator implements RequestAuthenticator {
  constructor(private readonly options: RequestHeaderOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthenticationResult> {
    const chain = peerChain(req);
    if (chain.length === 0) return undefined;
    const error = verifyClientChain(chain, this.options.roots());
    if (error !== undefined) return { error };
    const o = this.options;
    if (o.allowedNames.length > 0) {
      const cn = subjectValues(chain[0], 'CN')[0] ?? '';
      if (!o.allowedNames.includes(cn)) return { error: `x509: subject with cn=${cn} is not in the allowed list` };
    }
    let name = '';
    for (const h of o.usernameHeaders) {
      name = values(req, h).find((v) => v !== '') ?? '';
      if (name !== '') break;
    }
    if (name === '') return undefined;
    let uid = '';
    for (const h of o.uidHeaders) {
      uid = values(req, h).find((v) => v !== '') ?? '';
      if (uid !== '') break;
    }
    const groups = o.groupHeaders.flatMap((h) => values(req, h));
    const extra: Record<string, string[]> = {};
    for (const [header, raw] of Object.entries(req.headersDistinct)) {
      const prefix = o.extraHeaderPrefixes.find((p) => header.startsWith(p.toLowerCase()));
      if (prefix === undefined || raw === undefined) continue;
      let key = header.slice(prefix.length);
      try {
        key = decodeURIComponent(key).toLowerCase();
      } catch {
        key = key.toLowerCase();
      }
      extra[key] = [...(extra[key] ?? []), ...raw];
    }
    for (const h of [...o.usernameHeaders, ...o.uidHeaders, ...o.groupHeaders]) delete req.headers[h.toLowerCase()];
    for (const header of Object.keys(req.headers)) if (o.extraHeaderPrefixes.some((p) => header.startsWith(p.toLowerCase()))) delete req.headers[header];
    return { user: { name, uid, groups, extra } };
  }
}
