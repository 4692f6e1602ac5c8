// Builds the console into the Python package, so `podplane serve` ships it.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const OUT = "../src/podplane/web/static/console";

// Pre-compress assets once at build time; the server sends the .gz to browsers that accept it.
function gzipAssets(): Plugin {
  return {
    name: "podplane-gzip-assets",
    apply: "build",
    closeBundle() {
      const dir = join(OUT, "assets");
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css|svg|json)$/.test(name)) continue;
        const file = join(dir, name);
        if (statSync(file).size < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(readFileSync(file), { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  plugins: [react(), gzipAssets()],
  build: {
    outDir: OUT,
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 1500,
    // No source maps in the package: they double its size and the console is open source anyway.
    sourcemap: false,
  },
  server: {
    // `npm run dev` proxies the API to a running `podplane serve` on the default port.
    proxy: { "/api": { target: "http://127.0.0.1:3099", ws: true } },
  },
});
