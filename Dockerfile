# Errata: OTLP/HTTP trace ingest (POST /v1/traces) and REST reports (/api/v1) on port 4318.
# DATABASE_URL set → that PostgreSQL; unset → embedded PGlite in ERRATA_DATA_DIR (/data here; mount a volume).
# The runtime keeps the repository layout: the server finds migrations/ four levels above
# apps/server/dist/database/migrations.js, and @errata/otlp loads its .proto files from libs/otlp/proto.

# ---- build: all dependencies, compile the server and the workspaces it references (tsc -b apps/server), and
#      bundle the dashboard (apps/dashboard/dist, served at /) ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/domain/package.json libs/domain/
COPY libs/otlp/package.json libs/otlp/
COPY libs/sdk/package.json libs/sdk/
COPY apps/server/package.json apps/server/
COPY apps/demo-agent/package.json apps/demo-agent/
COPY apps/dashboard/package.json apps/dashboard/
# No install scripts yet: the dashboard's `prepare` needs its sources, and it is built explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.base.json ./
COPY libs libs
COPY apps apps
RUN npx tsc -b apps/server && npm run build -w @errata/dashboard

# ---- prod-deps: the server's production dependencies only (workspace links resolve to libs/* in the runtime;
#      the SDK and the demo agent are not part of the image; no install scripts: the dashboard's `prepare` bundles
#      with esbuild, a dev dependency, and its bundle comes from the build stage) ----
FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/domain/package.json libs/domain/
COPY libs/otlp/package.json libs/otlp/
COPY libs/sdk/package.json libs/sdk/
COPY apps/server/package.json apps/server/
COPY apps/demo-agent/package.json apps/demo-agent/
COPY apps/dashboard/package.json apps/dashboard/
RUN npm ci --omit=dev --workspace=@errata/server --include-workspace-root --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ----
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    ERRATA_DATA_DIR=/data
WORKDIR /app
COPY --from=prod-deps /app/package.json /app/package-lock.json ./
COPY --from=prod-deps /app/node_modules node_modules
COPY --from=build /app/libs/domain/package.json libs/domain/package.json
COPY --from=build /app/libs/domain/dist libs/domain/dist
COPY --from=build /app/libs/otlp/package.json libs/otlp/package.json
COPY --from=build /app/libs/otlp/dist libs/otlp/dist
COPY --from=build /app/libs/otlp/proto libs/otlp/proto
COPY --from=build /app/apps/server/package.json apps/server/package.json
COPY --from=build /app/apps/server/dist apps/server/dist
COPY --from=build /app/apps/dashboard/dist apps/dashboard/dist
COPY migrations migrations
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 4318
# Liveness only (the process answers); readiness incl. the database is GET /readyz — see docker-compose.yml.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4318) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself: it stops accepting, drains in-flight requests, closes the pool.
CMD ["node", "apps/server/dist/main.js"]
