/**
 * The front end: the operator console (index.html, React) and the GraphQL explorer
 * (graphiql.html, GraphiQL), built into dist/console and served by the service at /console and
 * GET /graphql. Everything comes from npm at build time: the pages load nothing from a CDN.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  base: "/console/",
  publicDir: false,
  logLevel: "warn",
  // React's automatic JSX runtime through esbuild: no plugin needed for a production build.
  esbuild: { jsx: "automatic" },
  build: {
    outDir: resolve(root, "../dist/console"),
    emptyOutDir: true,
    target: "es2022",
    // The explorer's editor (Monaco) is large; it loads only on /graphql.
    chunkSizeWarningLimit: 5000,
    rollupOptions: {
      input: { index: resolve(root, "index.html"), graphiql: resolve(root, "graphiql.html") },
      // React in a chunk of its own: the console loads it and its own code, nothing of the explorer.
      output: { manualChunks: (id) => (/node_modules\/(react|react-dom|scheduler)\//.test(id) ? "react" : undefined) },
      onwarn(warning, warn) {
        // GraphiQL's dependencies mark their modules "use client" (for React server components): meaningless here.
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
  worker: { format: "es" },
});
