import { readFileSync } from 'node:fs';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import type { User } from '../api/user.js';

/** Splits one CSV line (RFC 4180 quoting, as Go's encoding/csv with TrimLeadingSpace). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let value = '';
    if (line[i] === '"') {
      i++;
      while (i < line.length) {
        if (line[i] === '"' && line[i + 1] === '"') {
          value += '"';
          i += 2;
        } else if (line[i] === '"') {
          i++;
          break;
        } else value += line[i++];
      }
      while (i < line.length && line[i] !== ',') i++;
    } else {
      const end = line.indexOf(',', i);
      value = end < 0 ? line.slice(i) : line.slice(i, end);
      i = end < 0 ? line.length : end;
    }
    fields.push(value);
    if (line[i] !== ',') break;
    i++;
  }
  return fields;
}

/**
 * Static bearer tokens from `--token-auth-file`, kube's CSV: `token,user,uid[,"group1,group2"]`.
 * A later line with the same token replaces an earlier one; an empty token is skipped. Throws at
 * load, with kube's words, for a line with fewer than three columns.
 */
export class TokenFile implements TokenAuthenticator {
  private readonly users = new Map<string, User>();

  constructor(readonly path: string) {
    const text = readFileSync(path, 'utf8');
    for (const raw of text.split(/\r?\n/)) {
      if (raw.trim() === '') continue;
      const fields = csvFields(raw);
      if (fields.length < 3) throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${fields.length}`);
      const [token, name, uid] = fields;
      if (token === '') continue;
      const groups =
        fields.length >= 4
          ? fields[3]
              .split(',')
              .map((g) => g.trim())
              .filter((g) => g !== '')
          : [];
      this.users.set(token, { name, uid, groups, extra: {} });
    }
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    const user = this.users.get(token);
    return user === undefined ? undefined : { user: { ...user, groups: [...user.groups] } };
  }
}
