import { defineConfig } from "vite";

// The page is served by the Parsimonia server itself from dist/ (server/static.py), at /.
export default defineConfig({
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2020" },
  test: { include: ["test/**/*.test.js"] },
});
