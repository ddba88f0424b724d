FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY bench ./bench
COPY console ./console
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 4000
# node's flags for this machine (src/cli/node-flags.ts); exec: node is the container's first process and gets its signals.
CMD ["sh", "-c", "flags=$(node dist/src/cli/node-flags.js) && exec node $flags dist/src/cli/index.js serve"]
