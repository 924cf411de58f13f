/**
 * `node dist/test/control-plane/scenario-cli.js KUBECONFIG [KCM_LOG]`: runs the workload scenario
 * (workload-scenario.ts) against the control plane KUBECONFIG points at and prints each step's
 * time; with KCM_LOG, also how many stale-cache requeues (`read version: N is not as new as written
 * version: M`) kube-controller-manager logged during the run. Exits 1 if a step fails.
 */
import { readFileSync, existsSync } from 'node:fs';
import { runWorkloadScenario } from './workload-scenario.js';
import { countStaleCacheRequeues } from './component-logs.js';

async function main(): Promise<number> {
  const [kubeconfig, kcmLog] = process.argv.slice(2);
  if (kubeconfig === undefined) {
    process.stderr.write('usage: scenario-cli.js KUBECONFIG [KCM_LOG]\n');
    return 2;
  }
  const logText = (): string => (kcmLog !== undefined && existsSync(kcmLog) ? readFileSync(kcmLog, 'utf8') : '');
  const before = countStaleCacheRequeues(logText());
  const t0 = performance.now();
  const steps = await runWorkloadScenario(kubeconfig, `scenario-${Date.now().toString(36)}`);
  for (const s of steps) process.stdout.write(`${s.step.padEnd(45)} ${String(s.ms).padStart(7)} ms\n`);
  process.stdout.write(`${'total'.padEnd(45)} ${String(Math.round(performance.now() - t0)).padStart(7)} ms\n`);
  if (kcmLog !== undefined) {
    const counts = countStaleCacheRequeues(logText());
    const lines = Object.entries(counts)
      .map(([resource, n]) => [resource, n - (before[resource] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .map(([resource, n]) => `${resource} ${n}`);
    const total = Object.values(counts).reduce((a, b) => a + b, 0) - Object.values(before).reduce((a, b) => a + b, 0);
    process.stdout.write(`${'stale-cache requeues'.padEnd(45)} ${String(total).padStart(7)}${lines.length > 0 ? `  (${lines.join(', ')})` : ''}\n`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`scenario failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
