import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { parseAuthenticationConfiguration, type AuthenticationConfiguration } from './authentication-configuration.js';
import { ANONYMOUS_CHANGED, validateAuthenticationConfiguration } from './authentication-config-validation.js';
import type { AuthLog } from './jwt-authenticator.js';
import { buildJwtAuthenticatorSet, type JwtAuthentication, type JwtBuildOptions } from './jwt-authentication.js';
import { aggregateText } from '../../validation/field-errors.js';

/**
 * Reloads `--authentication-config` as kube-apiserver 1.36 does: when the file changes (watched,
 * and read again every minute), a new content is parsed and validated (the anonymous section may
 * not change), its JWT authenticators are built and, once their issuers answered discovery (within a
 * minute), put in place of the old ones, which stop a minute later. A file that cannot be parsed or
 * validated is logged and skipped until its content changes again; one whose issuers cannot be
 * reached is tried again at the next check. Log lines use kube's words (`reloaded authentication
 * config`, `failed to validate authentication config`, ...).
 */

const POLL_MS = 60_000;
const HEALTH_TIMEOUT_MS = 60_000;
const HEALTH_POLL_MS = 10_000;
const OLD_SET_GRACE_MS = 60_000;

export interface ReloaderOptions {
  path: string;
  /** The content the server started with. */
  initialText: string;
  initial: AuthenticationConfiguration;
  authentication: JwtAuthentication;
  build: JwtBuildOptions;
  log: AuthLog;
  signal: AbortSignal;
}

export class AuthenticationConfigReloader {
  private tracked: string;
  private running: Promise<void> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private readonly anonymousJson: string;

  constructor(private readonly options: ReloaderOptions) {
    this.tracked = options.initialText;
    this.anonymousJson = JSON.stringify(options.initial.anonymous ?? null);
  }

  /** Starts watching; everything stops with the options' signal. */
  start(): void {
    const { signal, path } = this.options;
    const name = basename(path);
    try {
      // The directory, not the file: editors and ConfigMap volumes replace files rather than write them.
      this.watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === name || file.startsWith('..')) void this.trigger();
      });
      this.watcher.on('error', (err) => this.options.log('error', 'watching authentication config file', { error: err.message }));
    } catch (err) {
      this.options.log('error', 'watching authentication config file', { error: err instanceof Error ? err.message : String(err) });
    }
    const timer = setInterval(() => void this.trigger(), POLL_MS);
    timer.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(timer);
        this.watcher?.close();
      },
      { once: true },
    );
  }

  /** Checks the file once more (serialised with any check in progress). */
  trigger(): Promise<void> {
    this.running = this.running
      .then(() => this.check())
      .catch((err: unknown) => this.options.log('error', 'failed to update authentication config', { error: String(err) }));
    return this.running;
  }

  private async check(): Promise<void> {
    const { path, log, signal } = this.options;
    if (signal.aborted) return;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      log('error', 'failed to read authentication config file', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (text === this.tracked) return;
    let config: AuthenticationConfiguration;
    try {
      config = parseAuthenticationConfiguration(text);
    } catch (err) {
      log('error', 'failed to load authentication config', { error: err instanceof Error ? err.message : String(err) });
      this.tracked = text;
      return;
    }
    const errors = validateAuthenticationConfiguration(config, this.options.build.disallowedIssuers);
    if (JSON.stringify(config.anonymous ?? null) !== this.anonymousJson) errors.push(ANONYMOUS_CHANGED);
    if (errors.length > 0) {
      log('error', 'failed to validate authentication config', { error: aggregateText(errors) });
      this.tracked = text;
      return;
    }
    let next;
    try {
      next = buildJwtAuthenticatorSet(config.jwt, this.options.build);
    } catch (err) {
      log('error', 'failed to update authentication config', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    // kube waits (up to a minute, checking every 10 s) for the new issuers to answer discovery.
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    await next.firstAttempts();
    let unhealthy = next.healthError();
    while (unhealthy !== undefined && Date.now() < deadline && !signal.aborted) {
      await delay(Math.min(HEALTH_POLL_MS, deadline - Date.now()));
      unhealthy = next.healthError();
    }
    if (unhealthy !== undefined || signal.aborted) {
      next.stop();
      if (unhealthy !== undefined) log('error', 'failed to update authentication config', { error: unhealthy });
      return;
    }
    const previous = this.options.authentication.swap(next);
    this.tracked = text;
    log('info', 'reloaded authentication config');
    const timer = setTimeout(() => previous.stop(), OLD_SET_GRACE_MS);
    timer.unref();
    signal.addEventListener('abort', () => previous.stop(), { once: true });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
  });
}
