# syntax=docker/dockerfile:1
# Capstan container image. docs/production.md says how to build, run and reach it.
#
#   docker build -t capstan .
#   docker run --rm -p 6443:6443 capstan                      # embedded memory store, one process
#   docker run --rm -p 6443:6443 capstan --bind-address=0.0.0.0 --secure-port=6443 \
#       --cert-dir=/tmp/capstan-pki --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
#       --storage=redis --redis-url=redis://redis:6379 --workers=2
#
# Secure by default: HTTPS only, on 0.0.0.0:6443, authorized as a production kube-apiserver is
# (Node,RBAC with the bootstrap RBAC policy, NodeRestriction admission): a request without
# credentials gets what kube grants system:anonymous (/healthz, /livez, /readyz, /version) and
# 401/403 for everything else. The CA, serving certificate and the admin client certificate
# (system:masters) are generated in --cert-dir on first start; copy them out to use kubectl.
# Arguments given to `docker run` replace CMD, so repeat the flags above when passing your own.
#
# The runtime stage is distroless: Node.js, the C libraries it links, tini and the app, no shell or
# package manager (about 130 MB instead of the node base's 220). tini is PID 1: it forwards
# SIGTERM/SIGINT to node, whose handlers shut down gracefully (readyz fails, the shutdown delay,
# watches end, requests drain, exit 0), and reaps zombies, whatever the orchestrator does.
#
# NODE_IMAGE: any glibc-based official Node.js 20+ image (or a local equivalent, as
# scripts/image-test.sh builds one on machines that cannot pull).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: full dependencies, TypeScript compile, bundle ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are copied.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/bundle.mjs scripts/bundle-entry.mjs ./scripts/
COPY src ./src
COPY schema ./schema
# tsc checks and compiles the tree; esbuild then bundles the server into dist/src/main.js (one file
# to load, so the server starts in a fraction of the time: scripts/bundle.mjs says why).
# Only the code cache for the server's Node flags: the entrypoint and the workers it forks run with them.
RUN npx tsc -p tsconfig.json && node scripts/bundle.mjs --server-cache-only

# ---- production dependencies only, without what Node.js never loads ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o \( -name '*.ts' -a ! -name '*.d.ts' \) -o -name '*.md' -o -name '*.markdown' \) \
      ! -iname 'licen[cs]e*' ! -iname 'notice*' -delete

# ---- the runtime's root file system: node, the libraries it links, tini, the users ----
FROM ${NODE_IMAGE} AS rootfs
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
RUN set -eu; \
    node="$(command -v node)"; \
    mkdir -p /rootfs/usr/local/bin /rootfs/usr/bin /rootfs/etc /rootfs/tmp; \
    chmod 1777 /rootfs/tmp; \
    cp "$node" /rootfs/usr/local/bin/node; \
    for lib in $(ldd "$node" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do \
      cp --parents -L "$lib" /rootfs/; \
    done; \
    cp /usr/bin/tini-static /rootfs/usr/bin/tini; \
    grep -E '^(root|node):' /etc/passwd > /rootfs/etc/passwd; \
    grep -E '^(root|node):' /etc/group > /rootfs/etc/group; \
    chroot /rootfs /usr/local/bin/node --version

# ---- runtime ----
FROM scratch AS runtime
COPY --from=rootfs /rootfs /
# Two glibc malloc arenas rather than eight per core: less freed memory stays resident
# (docs/operations.md#memory); the primary also sets it for the workers it forks.
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    NODE_ENV=production \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /src/dist/src ./dist/src
COPY schema ./schema
COPY lua ./lua
# The image's files stay owned by root and read-only to the server, which runs as the unprivileged
# `node` user (uid 1000). It writes only to --cert-dir (under /tmp) and, when asked, log files.
USER node:node
EXPOSE 6443
# /livez over HTTPS on loopback without credentials, as kubelet probes ask it (the bootstrap
# policy lets anonymous users read it). Pass your own --secure-port and this check follows 6443 only.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const r = require('node:https').get({ host: '127.0.0.1', port: 6443, path: '/livez', rejectUnauthorized: false, timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)); r.on('error', () => process.exit(1)); r.on('timeout', () => process.exit(1));"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=64", "/app/dist/src/main.js"]
CMD ["--bind-address=0.0.0.0", "--secure-port=6443", "--cert-dir=/tmp/capstan-pki", "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"]
