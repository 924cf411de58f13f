/**
 * Accept-header matching for the OpenAPI endpoints. kube-apiserver's OpenAPI handlers negotiate with
 * goautoneg rather than the API's serializer negotiation: clauses are ordered by quality, then concrete
 * types before wildcards, and the first clause matching any offered media type wins, offers being tried
 * in the server's order (so `*\/*` or a missing header selects the first offer).
 */

/** A media type the server can produce, split as it is matched. */
export interface MediaOffer {
  type: string;
  subtype: string;
}

interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';');
    const slash = range.indexOf('/');
    const type = (slash < 0 ? range : range.slice(0, slash)).trim();
    let subtype: string;
    if (slash >= 0) subtype = range.slice(slash + 1).trim();
    else if (type === '*') subtype = '*';
    else continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim() !== 'q') continue;
      const parsed = Number.parseFloat(param.slice(eq + 1));
      q = Number.isNaN(parsed) ? 0 : parsed;
    }
    // A zero quality means "not acceptable" (RFC 9110); goautoneg keeps such clauses, which would
    // serve a type the client refused.
    if (q > 0) clauses.push({ type, subtype, q });
  }
  // Array.prototype.sort is stable, so equal clauses keep the client's order.
  return clauses.sort((a, b) => {
    if (a.q !== b.q) return b.q - a.q;
    if ((a.type === '*') !== (b.type === '*')) return a.type === '*' ? 1 : -1;
    if ((a.subtype === '*') !== (b.subtype === '*')) return a.subtype === '*' ? 1 : -1;
    return 0;
  });
}

/**
 * Index in OFFERS of the media type to serve for the Accept header value ACCEPT (absent or empty means
 * anything), or undefined when nothing offered is acceptable (the caller answers 406).
 */
export function chooseOffer(accept: string | undefined, offers: readonly MediaOffer[]): number | undefined {
  const clauses = parseAccept(accept === undefined || accept.trim() === '' ? '*/*' : accept);
  for (const clause of clauses) {
    for (let i = 0; i < offers.length; i++) {
      const offer = offers[i];
      if (offer === undefined) continue;
      if (clause.type !== '*' && clause.type !== offer.type) continue;
      if (clause.subtype !== '*' && clause.subtype !== offer.subtype) continue;
      return i;
    }
  }
  return undefined;
}
