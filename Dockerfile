# Shopfloor: one image for the server (and the `shopfloor` CLI). There is no build step: tsx,
# a runtime dependency, runs the TypeScript sources directly, and the web console's build
# (console/dist) is committed, so the image serves it without a build tool.

# --- build: install production dependencies; better-sqlite3 may have to compile its addon ---
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# --- runtime: no compiler, no npm cache, not root ---
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
# Owned by root and only readable by `node`: the process cannot rewrite its own code.
COPY --from=build /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY commands ./commands
COPY projections ./projections
COPY queries ./queries
COPY console/dist ./console/dist
# DATA_DIR keeps the SQLite files (default adapters), the blobs and the URL-signing key even
# with EventStoreDB and MongoDB. Created here so that a new named volume inherits `node` as owner.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 (no npm, no shell), so SIGTERM from `docker stop` reaches its handler.
CMD ["node", "--import", "tsx", "src/main.ts"]
