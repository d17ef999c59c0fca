# syntax=docker/dockerfile:1
# fedisrv: one image for every role — `docker run IMAGE api|streaming|all` or `pipeline <name>`.
# Debian 13 (trixie) has glibc 2.41, so uWebSockets.js loads as shipped (scripts/uws-compat.ts,
# the postinstall step, finds glibc new enough and does nothing; no gcc or patchelf needed).
# Not built on the project's build machines (no Docker engine there); `npm run cluster` runs the
# same commands: `npm ci`, then `node services/main.ts <role>` per process.

FROM node:24-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step (uWebSockets.js compatibility, then patch-package's fixes in patches/)
# runs during npm ci.
COPY scripts/uws-compat.ts scripts/elf-verneed.ts scripts/
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund \
  && npm cache clean --force

FROM node:24-trixie-slim AS runtime
# ffmpeg for the media pipeline (video and audio); tini reaps and forwards SIGTERM to the server.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    BIND=0.0.0.0 \
    PORT=3000 \
    STREAMING_PORT=4000 \
    MEDIA_DIR=/data/media
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY services ./services
COPY pipelines ./pipelines
COPY schemas ./schemas
COPY deploy/docker/healthcheck.ts ./deploy/docker/healthcheck.ts
RUN mkdir -p /data/media && chown -R node:node /data
# The node image's unprivileged user (uid 1000).
USER node
VOLUME ["/data/media"]
EXPOSE 3000 4000
# Whichever role runs: its readiness on PORT (api, pipeline) or STREAMING_PORT (streaming).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.ts"]
ENTRYPOINT ["tini", "--", "node", "--max-semi-space-size=64", "services/main.ts"]
CMD ["all"]
