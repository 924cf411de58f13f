/**
 * Where a suite's requests go. By default a suite starts its own in-process server; with
 * CAPSTAN_TEST_URLS (comma-separated http:// URLs of running servers that share one storage, e.g.
 * several Capstan instances on one Redis) the suites that support it send every request through a
 * proxy that spreads requests over those servers instead, so a write and the read that follows it
 * may reach different instances (see test/durability/multi-pod.durability.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import { startSpreadingProxy } from './spreading-proxy.js';

/** A server a suite talks to: its URL, a kubeconfig for it, and how to stop what the suite started. */
export interface SuiteServer {
  url: string;
  kubeconfig: string;
  stop(): Promise<void>;
}

/** The servers CAPSTAN_TEST_URLS names, or undefined when suites start their own. */
export function externalServers(): string[] | undefined {
  const urls = (process.env.CAPSTAN_TEST_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  return urls.length > 0 ? urls : undefined;
}

/** A spreading proxy over the external servers, with a kubeconfig for it. */
export async function externalSuiteServer(urls: readonly string[]): Promise<SuiteServer> {
  const proxy = await startSpreadingProxy(urls);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-suite-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(proxy.url));
  return {
    url: proxy.url,
    kubeconfig,
    stop: async () => {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The external servers when CAPSTAN_TEST_URLS names some, else what `start` starts. */
export async function suiteServer(start: () => Promise<SuiteServer>): Promise<SuiteServer> {
  const urls = externalServers();
  return urls === undefined ? start() : externalSuiteServer(urls);
}

/** One server setting a suite runs against: each storage backend in-process, or the external servers. */
export interface SuiteTarget {
  name: string;
  start(): Promise<SuiteServer>;
  /** Stops what the target started beside its servers (a redis-server). */
  stop(): Promise<void>;
}

/** The external servers as the one target when CAPSTAN_TEST_URLS names some, else `local()`. */
export function suiteTargets(local: () => SuiteTarget[]): SuiteTarget[] {
  const urls = externalServers();
  if (urls === undefined) return local();
  return [{ name: `${urls.length} servers through a spreading proxy`, start: () => externalSuiteServer(urls), stop: async () => undefined }];
}
