# syntax=docker/dockerfile:1
# Capstan container image.
#
#   docker build -t capstan .
#   docker run --rm -p 6443:6443 capstan                      # embedded memory store, one process
#   docker run --rm -p 6443:6443 capstan --bind-address=0.0.0.0 --secure-port=6443 --port=8080 \
#       --cert-dir=/tmp/capstan-pki --storage=redis --redis-url=redis://redis:6379 --workers=2
#
# HTTPS on 6443 with a CA and certificates generated in --cert-dir (mount a volume there, or pass
# --tls-cert-file/--tls-private-key-file); plain HTTP on 8080 answers only inside the container
# (loopback: the health check). Arguments given to `docker run` replace CMD, so repeat
# --bind-address/--secure-port/--port/--cert-dir when passing flags.
#
# PID 1: tini (Debian's package) runs as PID 1, forwards SIGTERM/SIGINT to node and reaps
# zombies; node runs as its child, so its own handlers (graceful shutdown: readyz fails, the
# shutdown delay, watches end, requests drain, exit 0) receive the signal. This does not depend
# on `docker run --init` or on the orchestrator.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: full dependencies, TypeScript compile ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are copied.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY schema ./schema
RUN npx tsc -p tsconfig.json

# ---- production dependencies only ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --chown=root:root package.json ./
COPY --from=build --chown=root:root /src/dist/src ./dist/src
COPY --chown=root:root schema ./schema
COPY --chown=root:root lua ./lua
# The image's files stay owned by root and read-only to the server; it runs as the unprivileged
# `node` user (uid 1000) that the base image provides.
USER node:node
EXPOSE 6443
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/src/main.js"]
CMD ["--bind-address=0.0.0.0", "--secure-port=6443", "--port=8080", "--cert-dir=/tmp/capstan-pki"]
