import { createRequire } from "node:module";
import swc from "unplugin-swc";
import { defineConfig, type Plugin } from "vitest/config";

const require = createRequire(import.meta.url);

// graphql 16 ships index.js and index.mjs; Node-loaded packages and Vite must share one realm.
const graphqlSingleRealm: Plugin = {
  name: "graphql-single-realm",
  enforce: "pre",
  resolveId: (id) => (id === "graphql" || id.startsWith("graphql/") ? require.resolve(id) : null),
};

export default defineConfig({
  // SWC emits the decorator metadata type-graphql needs; esbuild does not.
  plugins: [graphqlSingleRealm, swc.vite({ module: { type: "es6" } })],
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
