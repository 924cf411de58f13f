/**
 * Named health checks behind `/healthz`, `/livez` and `/readyz`, with kube-apiserver's semantics:
 * - `ping` and `log` are on every endpoint;
 * - a post-start hook is a check `poststarthook/<name>` on every endpoint that fails with
 *   "not finished" until the hook reports done; on `/livez` it passes unconditionally for the livez
 *   grace period counted from when the hook was registered (kube's `--livez-grace-period`), so a slow
 *   start does not get the process restarted;
 * - `shutdown` is on `/readyz` only, always last, and fails from the moment shutdown starts
 *   ("process is shutting down"); `/livez` and `/healthz` are unaffected by shutdown.
 */

/** The three health endpoints. */
export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

/** A check passes when it returns (or resolves); throwing (or rejecting) fails it, the error is the reason. */
export type HealthCheckFn = () => Promise<void> | void;

export const ALL_HEALTH_ENDPOINTS: readonly HealthEndpoint[] = ['healthz', 'livez', 'readyz'];

/**
 * Name of the persistence-layer check. kube calls it `etcd`; Capstan keeps that name (whatever the
 * backend, memory or Redis) because operators and tooling use `?exclude=etcd` and `/livez/etcd`.
 */
export const STORAGE_CHECK_NAME = 'etcd';
/** Name of the readyz-only storage readiness check (kube's `etcd-readiness`). */
export const STORAGE_READINESS_CHECK_NAME = 'etcd-readiness';
/** Name of the readyz-only check that fails once shutdown has started. */
export const SHUTDOWN_CHECK_NAME = 'shutdown';

/** Outcome of one check in a run. */
export interface CheckResult {
  name: string;
  /** `ok`, `excluded` (skipped by `?exclude=`), or `failed` with the reason (never shown to clients). */
  status: 'ok' | 'excluded' | 'failed';
  reason?: string;
}

/** Outcome of running one endpoint's checks. */
export interface HealthReport {
  endpoint: HealthEndpoint;
  results: CheckResult[];
  /** `?exclude=` names that match no check, sorted. */
  unmatchedExcludes: string[];
  healthy: boolean;
}

interface RegisteredCheck {
  name: string;
  fn: HealthCheckFn;
  endpoints: ReadonlySet<HealthEndpoint>;
  /** On /livez the check passes without running until this instant (ms, from `now`). */
  livezPassUntil: number | undefined;
}

/** Options of {@link HealthChecks}. */
export interface HealthChecksOptions {
  /** kube's `--livez-grace-period`, in milliseconds. */
  livezGracePeriodMs: number;
  /** Clock in milliseconds; injectable for tests. */
  now?: () => number;
  /** Receives kube's log lines for failed runs and unknown excludes; silent by default. */
  log?: (line: string) => void;
}

/** Handle returned by {@link HealthChecks.addPostStartHook}. */
export interface PostStartHook {
  /** Marks the hook finished; its check passes from then on. Idempotent. */
  done(): void;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Applies `timeoutMs` to a check, so a hung dependency fails the check instead of hanging the
 * endpoint (kube bounds its etcd check with `--etcd-healthcheck-timeout`, 2 s by default).
 */
export function withTimeout(fn: HealthCheckFn, timeoutMs: number): HealthCheckFn {
  return () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs}ms`)), timeoutMs);
      timer.unref();
      Promise.resolve()
        .then(fn)
        .then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
    });
}

/** The registry of named checks; see the module comment for the semantics. */
export class HealthChecks {
  private readonly checks: RegisteredCheck[] = [];
  private readonly now: () => number;
  private readonly graceMs: number;
  private readonly log: (line: string) => void;
  private shuttingDown = false;

  constructor(opts: HealthChecksOptions) {
    this.now = opts.now ?? Date.now;
    this.graceMs = opts.livezGracePeriodMs;
    this.log = opts.log ?? (() => undefined);
    this.addCheck('ping', () => undefined);
    // kube's `log` check fails when log flushing is blocked; Node writes to stdio synchronously or
    // queues without blocking the request path, so there is nothing that can block here.
    this.addCheck('log', () => undefined);
  }

  /**
   * Adds a check to the given endpoints, after those already there (and before `shutdown`).
   * Throws when the name is already used on one of them (kube refuses duplicate paths too).
   */
  addCheck(name: string, fn: HealthCheckFn, endpoints: readonly HealthEndpoint[] = ALL_HEALTH_ENDPOINTS): void {
    this.register(name, fn, endpoints, undefined);
  }

  /**
   * Adds a start-up check to all three endpoints; on `/livez` it passes without running during the
   * livez grace period counted from now (kube's `AddBootSequenceHealthChecks`).
   */
  addBootSequenceCheck(name: string, fn: HealthCheckFn): void {
    this.register(name, fn, ALL_HEALTH_ENDPOINTS, this.now() + this.graceMs);
  }

  /** Registers start-up work as the boot-sequence check `poststarthook/<name>`, failing "not finished" until done. */
  addPostStartHook(name: string): PostStartHook {
    let finished = false;
    this.addBootSequenceCheck(`poststarthook/${name}`, () => {
      if (!finished) throw new Error('not finished');
    });
    return {
      done: () => {
        finished = true;
      },
    };
  }

  /**
   * Adds the persistence-layer checks: `etcd` on every endpoint and `etcd-readiness` on `/readyz`,
   * each bounded by `timeoutMs` (kube's `--etcd-healthcheck-timeout` / `--etcd-readycheck-timeout`).
   */
  addStorageChecks(ping: HealthCheckFn, timeoutMs = 2000): void {
    this.addCheck(STORAGE_CHECK_NAME, withTimeout(ping, timeoutMs));
    this.addCheck(STORAGE_READINESS_CHECK_NAME, withTimeout(ping, timeoutMs), ['readyz']);
  }

  /** Starts shutdown: `/readyz` fails from now on through the `shutdown` check. Idempotent. */
  startShutdown(): void {
    this.shuttingDown = true;
  }

  /** Whether {@link startShutdown} was called. */
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Check names of an endpoint, in output order. */
  names(endpoint: HealthEndpoint): string[] {
    return this.checksOf(endpoint).map((c) => c.name);
  }

  /**
   * Runs every check of `endpoint` except `exclude`d ones (concurrently; results keep registration
   * order). Never throws: a throwing check is a failed result.
   */
  async run(endpoint: HealthEndpoint, exclude: readonly string[] = []): Promise<HealthReport> {
    const excluded = new Set(exclude);
    const checks = this.checksOf(endpoint);
    const results = await Promise.all(
      checks.map(async (c): Promise<CheckResult> => {
        if (excluded.has(c.name)) return { name: c.name, status: 'excluded' };
        const reason = await this.evaluate(c, endpoint);
        return reason === undefined ? { name: c.name, status: 'ok' } : { name: c.name, status: 'failed', reason };
      }),
    );
    const known = new Set(checks.map((c) => c.name));
    const unmatchedExcludes = [...excluded].filter((n) => !known.has(n)).sort();
    if (unmatchedExcludes.length > 0) {
      this.log(`cannot exclude some health checks, no health checks are installed matching ${unmatchedExcludes.map((n) => JSON.stringify(n)).join(',')}`);
    }
    const failed = results.filter((r) => r.status === 'failed');
    if (failed.length > 0) {
      const detail = failed.map((r) => `[-]${r.name} failed: ${r.reason ?? ''}\n`).join('');
      this.log(`${failed.map((r) => r.name).join(',')} check failed: ${endpoint}\n${detail}`);
    }
    return { endpoint, results, unmatchedExcludes, healthy: failed.length === 0 };
  }

  /**
   * Runs the single check `name` of `endpoint`: undefined when there is no such check, otherwise
   * `{ reason }` with the failure reason, or `{}` when it passes.
   */
  async runOne(endpoint: HealthEndpoint, name: string): Promise<{ reason?: string } | undefined> {
    const check = this.checksOf(endpoint).find((c) => c.name === name);
    if (!check) return undefined;
    const reason = await this.evaluate(check, endpoint);
    return reason === undefined ? {} : { reason };
  }

  /** Whether every `/readyz` check passes now. */
  async isReady(): Promise<boolean> {
    return (await this.run('readyz')).healthy;
  }

  private register(name: string, fn: HealthCheckFn, endpoints: readonly HealthEndpoint[], livezPassUntil: number | undefined): void {
    if (name === '' || name === SHUTDOWN_CHECK_NAME) throw new Error(`health check name ${JSON.stringify(name)} is reserved`);
    for (const ep of endpoints) {
      if (this.checksOf(ep).some((c) => c.name === name)) throw new Error(`health check ${JSON.stringify(name)} is already installed on /${ep}`);
    }
    this.checks.push({ name, fn, endpoints: new Set(endpoints), livezPassUntil });
  }

  private checksOf(endpoint: HealthEndpoint): RegisteredCheck[] {
    const list = this.checks.filter((c) => c.endpoints.has(endpoint));
    if (endpoint === 'readyz') list.push(this.shutdownCheck);
    return list;
  }

  private readonly shutdownCheck: RegisteredCheck = {
    name: SHUTDOWN_CHECK_NAME,
    fn: () => {
      if (this.shuttingDown) throw new Error('process is shutting down');
    },
    endpoints: new Set<HealthEndpoint>(['readyz']),
    livezPassUntil: undefined,
  };

  /** The failure reason, or undefined when the check passes. */
  private async evaluate(check: RegisteredCheck, endpoint: HealthEndpoint): Promise<string | undefined> {
    if (endpoint === 'livez' && check.livezPassUntil !== undefined && this.now() <= check.livezPassUntil) return undefined;
    try {
      await check.fn();
      return undefined;
    } catch (err) {
      return reasonOf(err);
    }
  }
}
