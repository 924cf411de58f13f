import type { IncomingMessage } from 'node:http';
import { ADMIN_USER, type User } from './user.js';

/**
 * The authentication stage: who sent a request. Undefined means the request carries no credentials
 * this server accepts, answered 401 Unauthorized as kube-apiserver answers it.
 */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<User | undefined>;
}

/** Every request is the administrator (Capstan has no client credentials yet). */
export class FixedIdentity implements Authenticator {
  constructor(private readonly user: User = ADMIN_USER) {}

  async authenticate(): Promise<User | undefined> {
    return this.user;
  }
}
