import express, { type Request, type Response } from 'express';
import { writeNotFoundPage, writePlainText } from '../codec/plain-text.js';
import type { HealthChecks, HealthEndpoint, HealthReport } from './health-checks.js';

/**
 * `/healthz`, `/livez`, `/readyz` and their single-check paths, with kube-apiserver's bodies:
 * - pass: `ok` (no newline), or with `?verbose` one `[+]<name> ok` / `[+]<name> excluded: ok` line per
 *   check then `<endpoint> check passed`;
 * - fail: 500 and always the verbose listing, failing checks as `[-]<name> failed: reason withheld`,
 *   ending with `<endpoint> check failed` (Go's http.Error appends a newline);
 * - `/<endpoint>/<check>`: `ok`, or 500 `internal server error: <reason>`; unknown check: 404 text.
 * Bodies are `text/plain; charset=utf-8` with `X-Content-Type-Options: nosniff`. Any method is
 * answered, as kube's mux does.
 */

const PATH = /^\/(healthz|livez|readyz)(?:\/(.*))?$/;

/** The verbose listing lines of a report (each ending with a newline). */
export function formatChecks(report: HealthReport): string {
  let out = '';
  for (const r of report.results) {
    if (r.status === 'excluded') out += `[+]${r.name} excluded: ok\n`;
    else if (r.status === 'failed') out += `[-]${r.name} failed: reason withheld\n`;
    else out += `[+]${r.name} ok\n`;
  }
  if (report.unmatchedExcludes.length > 0) {
    out += `warn: some health checks cannot be excluded: no matches for ${report.unmatchedExcludes.map((n) => JSON.stringify(n)).join(',')}\n`;
  }
  return out;
}

function queryOf(req: Request): URLSearchParams {
  const q = req.originalUrl.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : req.originalUrl.slice(q + 1));
}

async function serveRoot(checks: HealthChecks, endpoint: HealthEndpoint, req: Request, res: Response): Promise<void> {
  const query = queryOf(req);
  const report = await checks.run(endpoint, query.getAll('exclude'));
  const listing = formatChecks(report);
  if (!report.healthy) {
    writePlainText(res, 500, `${listing}${endpoint} check failed\n`, true);
    return;
  }
  // kube treats the mere presence of `verbose` as verbose, whatever its value.
  if (!query.has('verbose')) {
    writePlainText(res, 200, 'ok', true);
    return;
  }
  writePlainText(res, 200, `${listing}${endpoint} check passed\n`, true);
}

async function serveOne(checks: HealthChecks, endpoint: HealthEndpoint, name: string, res: Response): Promise<void> {
  const outcome = await checks.runOne(endpoint, name);
  if (!outcome) {
    writeNotFoundPage(res);
    return;
  }
  if (outcome.reason !== undefined) {
    writePlainText(res, 500, `internal server error: ${outcome.reason}\n`, true);
    return;
  }
  // kube writes the bare `ok` and lets Go sniff the type, so no nosniff header here.
  writePlainText(res, 200, 'ok', false);
}

function isEndpoint(value: string | undefined): value is HealthEndpoint {
  return value === 'healthz' || value === 'livez' || value === 'readyz';
}

/** Percent-decodes a check name; a malformed escape names no check. */
function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return '';
  }
}

/** Mounts the health endpoints of `checks` (at the root of wherever the router is used). */
export function healthRouter(checks: HealthChecks): express.Router {
  const router = express.Router();
  router.use((req, res, next) => {
    const m = PATH.exec(req.path);
    const endpoint = m?.[1];
    if (!m || !isEndpoint(endpoint)) {
      next();
      return;
    }
    const name = m[2];
    const done = name === undefined ? serveRoot(checks, endpoint, req, res) : serveOne(checks, endpoint, safeDecode(name), res);
    done.catch(next);
  });
  return router;
}
