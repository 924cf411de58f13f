/**
 * A start-up failure the user can act on: its message is one line naming what failed (the address
 * that could not be bound, the Redis that could not be reached) and why. `main` prints it as
 * `Error: <message>` and exits 1, without a stack trace.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The words of a socket error for a person: `address already in use`, `connection refused`, ... */
export function describeSocketError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return 'address already in use';
    case 'EADDRNOTAVAIL':
      return 'address not available on this machine';
    case 'EACCES':
      return 'permission denied';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** A URL with its password replaced, fit for messages and logs. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password !== '') url.password = 'xxxxx';
    return url.toString().replace(/\/$/, '');
  } catch {
    return raw.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:xxxxx@');
  }
}

/** Rejects with a StartupError naming `what` when `listen` fails (the port cannot be bound). */
export async function listenOrExplain<T>(host: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    throw new StartupError(`cannot listen on ${where}: ${describeSocketError(err)}`);
  }
}
