#!/usr/bin/env node
// Bundles the server after `tsc` has compiled the tree (`npm run build` runs both). Why: Node 20
// has no module compile cache, and loading ~500 modules (a file open, stat and compile each, plus
// every package's own files) was two thirds of start-up; docs/benchmarks.md has the numbers.
//
// Writes into dist/src/:
// - capstan-bundle.cjs: src/main.ts and its packages as one CommonJS function expression, the form
//   V8's code cache can be made for and read with (vm.Script; ES modules have no such API in Node 20).
//   Modules loaded on first use (`import()`) stay lazy: esbuild evaluates them on that first use.
// - main.js (over tsc's): scripts/bundle-entry.mjs, which compiles the bundle with the cache and runs
//   it. npm start, the image, the chart, cluster workers, envtest's wrappers and the tests run it; the
//   rest of dist/src stays tsc's output for the unit tests. A later bare `tsc` rewrites main.js as
//   the unbundled entry, which still works: never a stale bundle.
// - capstan-bundle.<hash>.<plain|server>.v8cache: V8's code cache, taken from a warm-up run of the
//   bundle (start, a few requests, the CRD, webhook configuration, namespace and custom resource a
//   test suite starts with, SIGTERM), so it also holds the functions the first requests compile.
//   V8 reads a cache only under the flags it was made with: `plain` is made by plain `node`,
//   `server` under the flags npm start, the image and cluster workers give the server
//   (src/cluster/node-flags.ts). Skipped, with a warning, with --no-code-cache; only `server` with
//   --server-cache-only (the image, whose every server process has the flags).
// - validators/: the built-in kinds' ajv validators as standalone modules, loaded on a kind's first
//   use instead of compiled then (src/codec/kind-validator-modules.ts).
// Run-time data (schema/, lua/) is found by walking up from dist/src/. Native addons stay outside.
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'src');
const bundleFile = join(out, 'capstan-bundle.cjs');
for (const name of readdirSync(out)) if (name.startsWith('capstan-bundle.')) rmSync(join(out, name), { force: true });

const validatorsDir = join(out, 'validators');
rmSync(validatorsDir, { recursive: true, force: true });
mkdirSync(validatorsDir);
const { validatorModules } = await import(pathToFileURL(join(out, 'codec', 'kind-validator-modules.js')).href);
for (const [name, text] of validatorModules()) writeFileSync(join(validatorsDir, name), text);

/**
 * Packages Express evaluates when it is loaded that the server needs late or never: the body
 * parsers (Capstan reads bodies itself), the MIME table (~1,000 types put in maps, wanted when a
 * response type is first set), static files and `qs` (the "extended" query parser; Capstan's is
 * "simple"). Each is evaluated on its first use instead, about 10 ms off every start. The names
 * are the functions a package's importers copy off it while loading (express.js copies the four
 * parsers): they are handed out as forwarders, anything else is read from the loaded package.
 */
const LAZY_PACKAGES = {
  'body-parser': ['json', 'raw', 'text', 'urlencoded'],
  'mime-types': [],
  qs: [],
  send: [],
  'serve-static': [],
};

/** An esbuild plugin: every `require` of a package named in PACKAGES gets a stand-in that loads it on first use. */
function lazyPackages(packages) {
  const names = Object.keys(packages);
  const filter = new RegExp(`^(${names.map((n) => n.replace(/[-/]/g, '\\$&')).join('|')})$`);
  return {
    name: 'lazy-packages',
    setup(b) {
      b.onResolve({ filter }, async (args) => {
        // The stand-in's own require, and the lookup of the package itself below, reach the package.
        if (args.namespace === 'lazy-package' || args.pluginData?.lookup === true) return undefined;
        const real = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: { lookup: true } });
        if (real.errors.length > 0) return { errors: real.errors };
        return { path: real.path, namespace: 'lazy-package', pluginData: { name: args.path } };
      });
      b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => ({
        resolveDir: dirname(args.path),
        loader: 'js',
        contents: `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(args.pluginData.name)}));
const forwarded = new Set(${JSON.stringify(packages[args.pluginData.name])});
module.exports = new Proxy(function () {}, {
  get: (_, key) => (forwarded.has(key) ? (...a) => load()[key](...a) : load()[key]),
  has: (_, key) => key in load(),
  apply: (_, self, a) => Reflect.apply(load(), self, a),
  construct: (_, a) => Reflect.construct(load(), a),
});
`,
      }));
    },
  };
}

await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  outfile: bundleFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.json',
  // cbor-extract is a native addon that cbor-x finds at run time; it must stay a package on disk.
  external: ['cbor-extract'],
  // The file is one function expression: bundle-entry.mjs compiles it as a vm.Script and calls it.
  banner: {
    js: "(function (exports, require, module, __filename, __dirname) {\nconst __capstanModuleUrl = require('node:url').pathToFileURL(__filename).href;",
  },
  footer: { js: '})' },
  // Modules find schema/ and lua/ from their own location: the bundle's, two levels below the root.
  define: { 'import.meta.url': '__capstanModuleUrl' },
  // No keepNames: it wraps every named function and class, closures made per request included, in a
  // __name() call that defines the name again each time they are made (measured: +0.05 ms of server
  // CPU per GET, a quarter of it). Classes esbuild writes as `var X = class ...` (the CommonJS packages',
  // e.g. redis-errors, which reads constructor.name) keep their names by inference; only names that
  // clash across our own modules get a suffix (`add2`), which nothing reads. Whitespace stays for
  // readable stacks.
  keepNames: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [lazyPackages(LAZY_PACKAGES)],
});
// Only ASCII, so that the entry reads it as latin1, a one-byte string (esbuild leaves a few non-ASCII
// characters in regular expressions and comments): each UTF-16 unit becomes a \uXXXX escape, which
// means the same there and in strings.
const text = readFileSync(bundleFile, 'utf8');
const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
if (ascii !== text) writeFileSync(bundleFile, ascii);
const bundle = Buffer.from(ascii, 'latin1');
const id = createHash('sha256').update(bundle).digest('hex').slice(0, 16);
const { SERVER_NODE_FLAGS } = await import(pathToFileURL(join(out, 'cluster', 'node-flags.js')).href);
const entry = readFileSync(join(root, 'scripts', 'bundle-entry.mjs'), 'utf8')
  .replace('@BUNDLE_ID@', id)
  .replace("['@SERVER_NODE_FLAGS@']", JSON.stringify(SERVER_NODE_FLAGS));
writeFileSync(join(out, 'main.js'), entry, { mode: 0o755 });

if (process.argv.includes('--no-code-cache')) {
  process.stderr.write('bundle: no code cache (--no-code-cache): start-up compiles the bundle\n');
} else {
  // One after the other: two servers warming up at once would slow each other down, not the build.
  const variants = process.argv.includes('--server-cache-only')
    ? [['server', SERVER_NODE_FLAGS]]
    : [
        ['plain', []],
        ['server', SERVER_NODE_FLAGS],
      ];
  for (const [variant, nodeFlags] of variants) {
    const cacheFile = join(out, `capstan-bundle.${id}.${variant}.v8cache`);
    await warmUp(cacheFile, nodeFlags);
    process.stdout.write(
      `bundle: ${(bundle.length / 1048576).toFixed(1)} MiB, code cache (${variant}) ${(statSync(cacheFile).size / 1048576).toFixed(1)} MiB\n`,
    );
  }
}

/**
 * Starts the bundled server under `nodeFlags`, sends the requests every client starts with, stops
 * it: the entry writes the cache on exit.
 */
async function warmUp(cacheFile, nodeFlags) {
  const port = await freePort();
  // HTTPS on a free port too (its certificates generated in a scratch folder): its code is cached.
  const certDir = mkdtempSync(join(tmpdir(), 'capstan-bundle-'));
  const args = ['--port', String(port), '--secure-port', '0', '--cert-dir', certDir, '--log-level=error', '--shutdown-delay-duration=0s'];
  const child = spawn(process.execPath, [...nodeFlags, join(out, 'main.js'), ...args], {
    cwd: root,
    env: { ...process.env, CAPSTAN_CODE_CACHE_OUT: cacheFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let alive = true;
  void exited.then(() => (alive = false));
  try {
    const deadline = Date.now() + 60_000;
    while ((await call(port, 'GET', '/readyz').catch(() => 0)) !== 200) {
      if (!alive || Date.now() > deadline) throw new Error(`the bundled server did not become ready:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const cm = '/api/v1/namespaces/default/configmaps';
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'warm-up' }, data: { a: 'b' } });
    const requests = [
      ['GET', '/api'],
      ['GET', '/apis'],
      ['GET', '/version'],
      ['POST', cm, body],
      ['GET', `${cm}/warm-up`],
      ['GET', cm],
      ['PUT', `${cm}/warm-up`, body],
      ['PATCH', `${cm}/warm-up`, JSON.stringify({ data: { c: 'd' } }), 'application/merge-patch+json'],
      ['DELETE', `${cm}/warm-up`],
    ];
    for (let round = 0; round < 20; round++) {
      for (const [method, path, payload, type] of requests) {
        const status = await call(port, method, path, payload, type);
        if (status >= 500) throw new Error(`warm-up ${method} ${path} answered ${status}:\n${stderr}`);
      }
    }
    await setUpLikeATestSuite(port, stderr);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(certDir, { recursive: true, force: true });
  }
  if (!statSync(cacheFile, { throwIfNoEntry: false })) throw new Error(`the bundled server wrote no code cache:\n${stderr}`);
}

/**
 * What a controller's test suite does once after the server starts (envtest installs CRDs and
 * webhook configurations, then creates a namespace and custom resources): the first of each is
 * otherwise compiled on that suite's critical path.
 */
async function setUpLikeATestSuite(port, stderr) {
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'warmups.bundle.capstan.test' },
    spec: {
      group: 'bundle.capstan.test',
      scope: 'Namespaced',
      names: { plural: 'warmups', singular: 'warmup', kind: 'WarmUp' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer', minimum: 0 }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        },
      ],
    },
  };
  const webhooks = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  const webhook = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'bundle-warm-up' },
    webhooks: [
      {
        name: 'warm-up.bundle.capstan.test',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig: { url: 'https://127.0.0.1:1/validate' },
        rules: [{ apiGroups: ['bundle.capstan.test'], apiVersions: ['v1'], operations: ['DELETE'], resources: ['nothing'] }],
      },
    ],
  };
  const resources = '/apis/bundle.capstan.test/v1/namespaces/bundle-warm-up/warmups';
  const steps = [
    ['POST', crds, JSON.stringify(crd)],
    ['POST', webhooks, JSON.stringify(webhook)],
    ['POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bundle-warm-up' } })],
    ['WAIT', '/apis/bundle.capstan.test/v1'],
    ['POST', resources, JSON.stringify({ apiVersion: 'bundle.capstan.test/v1', kind: 'WarmUp', metadata: { name: 'w' }, spec: { size: 1 } })],
    ['GET', resources],
    [
      'PUT',
      `${resources}/w/status`,
      JSON.stringify({ apiVersion: 'bundle.capstan.test/v1', kind: 'WarmUp', metadata: { name: 'w' }, status: { ready: true } }),
    ],
    ['DELETE', `${resources}/w`],
    ['DELETE', `${webhooks}/bundle-warm-up`],
    ['DELETE', `${crds}/warmups.bundle.capstan.test`],
    ['DELETE', '/api/v1/namespaces/bundle-warm-up'],
  ];
  for (const [method, path, payload] of steps) {
    if (method === 'WAIT') {
      // The CRD's group is served once the CRD is established, a moment after its create.
      const deadline = Date.now() + 10_000;
      while ((await call(port, 'GET', path)) !== 200) {
        if (Date.now() > deadline) throw new Error(`warm-up: ${path} was not served within 10 s:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      continue;
    }
    const status = await call(port, method, path, payload);
    if (status >= 500) throw new Error(`warm-up ${method} ${path} answered ${status}:\n${stderr}`);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function call(port, method, path, body, type = 'application/json') {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: body === undefined ? {} : { 'content-type': type } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.once('error', reject);
    req.end(body);
  });
}
