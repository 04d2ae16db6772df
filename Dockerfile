# syntax=docker/dockerfile:1
#
# One image for every role of the content repository service (ROLE=gateway|content|admin|
# health|worker, or unset for everything in one process). See docs/deployment.md.
#
#   docker build -t content-repository-service .
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://... content-repository-service
#
# The image runs on the official Node 24 image; the npm `node` package (a devDependency that
# pins Node 24 on machines without it) is not needed here and is not installed in the runtime.

ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# ---- build: every dependency (typescript is a devDependency), then tsc ----------------------
FROM base AS build
COPY package.json package-lock.json ./
# Install scripts are not needed to compile (they fetch the pinned node binary, hydrate the
# embedded Postgres binaries, ...), so skip them here.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts
COPY . .
# Call tsc with the image's node: `npm run build` would put node_modules/.bin (the npm `node`
# package, not set up with --ignore-scripts) first on PATH.
RUN node node_modules/typescript/bin/tsc -p tsconfig.json
# Assemble what the runtime needs: the compiled code (without the tests and benchmarks) and
# the non-TypeScript files the code reads at run time (checked-in SDL, GraphQL operations, ...),
# at the same relative paths as in the repository.
RUN set -eu; \
    mkdir -p /out; \
    cp package.json package-lock.json /out/; \
    cp -r dist /out/dist; \
    rm -rf /out/dist/test /out/dist/bench; \
    find /out/dist \( -name '*.test.js' -o -name '*.test.js.map' \) -delete; \
    for dir in schema src rest-compat workers; do \
      if [ -d "$dir" ]; then \
        find "$dir" -type f ! -name '*.ts' ! -name '*.tsx' -exec cp --parents {} /out/ \; ; \
      fi; \
    done

# ---- production dependencies only ----------------------------------------------------------
FROM base AS prod-deps
COPY package.json package-lock.json ./
# Install scripts run as package.json's allowScripts says (npm 11 blocks unlisted ones).
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev

# ---- runtime ------------------------------------------------------------------------------
FROM base AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    CONTENT_STORAGE_PATH=/data/content \
    CACHE_STORAGE_PATH=/data/cache
# The code stays owned by root (read-only for the service); only /data is writable. Volumes
# mounted on /data/content and /data/cache start with this ownership.
RUN mkdir -p /data/content /data/cache \
 && chown -R node:node /data
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /out/ ./
# The `node` user (uid 1000) of the official image.
USER node
EXPOSE 8080
# Liveness; docker-compose.yml checks readiness (/readyz) instead.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+(process.env.BASE_PATH||'')+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--expose-gc", "dist/app/main.js"]
