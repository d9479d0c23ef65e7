import { defineConfig } from "vite";

// The page is served by the Parsimonia server itself from dist/ (server/runtime/static.py), at /; the replay page
// (replay.html) at /replay/<table> (server/runtime/web.py).
export default defineConfig({
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2020",
    rolldownOptions: { input: { main: "index.html", replay: "replay.html" } } },
  test: { include: ["test/**/*.test.js"] },
});
