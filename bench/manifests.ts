/**
 * Realistic object bodies for create benchmarks: a Deployment and a Pod as a typical application
 * manifest has them (labels, one container with image, ports, resource requests and limits, env,
 * readiness and liveness probes, a volumeMount of a ConfigMap volume), so that the server's
 * defaulting and validation do the work they do in practice. Each body is valid for kube-apiserver.
 */

/** Labels of the application; `name` makes each object's selector its own. */
function appLabels(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/instance': name, 'app.kubernetes.io/part-of': 'bench', tier: 'frontend' };
}

/** The pod spec both kinds share: one web container reading its config from a ConfigMap volume. */
function podSpec(): Record<string, unknown> {
  return {
    containers: [
      {
        name: 'web',
        image: 'registry.example.com/team/web:1.27.3',
        imagePullPolicy: 'IfNotPresent',
        args: ['--config=/etc/web/config.yaml', '--log-level=info'],
        ports: [
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
          { name: 'metrics', containerPort: 9090 },
        ],
        env: [
          { name: 'LOG_FORMAT', value: 'json' },
          { name: 'GOMAXPROCS', value: '2' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        ],
        resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
        readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, initialDelaySeconds: 5, periodSeconds: 10 },
        livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, initialDelaySeconds: 15, periodSeconds: 20, failureThreshold: 3 },
        volumeMounts: [{ name: 'config', mountPath: '/etc/web', readOnly: true }],
      },
    ],
    volumes: [{ name: 'config', configMap: { name: 'web-config', items: [{ key: 'config.yaml', path: 'config.yaml' }] } }],
    terminationGracePeriodSeconds: 30,
  };
}

/**
 * A Deployment named `name` of 3 replicas. It is created paused, so that a running
 * kube-controller-manager (the reference's kube-up.sh starts one) does not roll out ReplicaSets and
 * Pods whose API writes would be counted as the cost of the create.
 */
export function deploymentBody(name: string): string {
  const labels = appLabels(name);
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels, annotations: { 'bench.capstan.dev/owner': 'team-web' } },
    spec: {
      replicas: 3,
      paused: true,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/instance': name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      template: { metadata: { labels }, spec: podSpec() },
    },
  });
}

/** A Pod named `name` with the same container as the Deployment's template. */
export function podBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: appLabels(name) }, spec: podSpec() });
}

/** A Namespace named `name`. */
export function namespaceBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'app.kubernetes.io/part-of': 'bench' } } });
}

/** The `default` ServiceAccount of a namespace (the ServiceAccount admission of kube-apiserver needs it for Pods). */
export function serviceAccountBody(): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
}
