/**
 * Which client an HTTP/2 connection belongs to, as a worker reports it to the primary, which keeps
 * a client's connections on one worker (cluster/client-affinity.ts).
 */

/** One connection's report: its worker-local number, its client and the credential it presented. */
export interface ClientConnection {
  session: number;
  /** The client's address and user agent start (see clientKey). */
  client: string;
  address: string;
  /** The client certificate's SHA-256 fingerprint, '' without one. */
  credential: string;
}

/** Told of each HTTP/2 connection's client at its first request, and when it closes or is asked to reconnect. */
export interface ClientConnections {
  opened(connection: ClientConnection): void;
  /** `shed`: the worker asked the client to reconnect because it was busy (SecureServer.shedSession). */
  gone(session: number, shed?: boolean): void;
}

/**
 * The start of a client-go user agent, `program/version (os/arch) kubernetes/commit`, without the
 * controller name client-go appends to the last word; undefined for an empty one.
 */
export function userAgentProgram(userAgent: string | undefined): string | undefined {
  if (userAgent === undefined || userAgent === '') return undefined;
  const words = userAgent.split(' ', 3);
  const last = words.length - 1;
  const slash = words[last].indexOf('/');
  const second = slash < 0 ? -1 : words[last].indexOf('/', slash + 1);
  // `kubernetes/abc123/system:serviceaccount:kube-system:deployment-controller` → `kubernetes/abc123`
  if (second > 0) words[last] = words[last].slice(0, second);
  return words.join(' ');
}

/** How much of a user agent is read: kube's are under 200 characters; a longer one is cut. */
const MAX_USER_AGENT = 256;

/** The key of a client: its address and the start of its user agent; undefined without either. */
export function clientKey(address: string | undefined, userAgent: string | undefined): string | undefined {
  const program = userAgentProgram(userAgent?.slice(0, MAX_USER_AGENT));
  return address === undefined || program === undefined ? undefined : `${address} ${program}`;
}
