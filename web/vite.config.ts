// Builds the console into the Python package, so `podplane serve` ships it.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const OUT = "../src/podplane/web/static/console";

// Cloudscape's global styles inline their fonts as base64 (about 180 kB, 140 kB gzipped, in the
// one stylesheet every page blocks on). Move them to files: the browser then fetches only the
// faces a page uses, in parallel, and caches them apart from the CSS.
function fontsAsFiles(): Plugin {
  const inline = /url\((['"]?)data:font\/woff2;base64,([A-Za-z0-9+/=]+)\1\)/g;
  return {
    name: "podplane-fonts-as-files",
    apply: "build",
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (file.type !== "asset" || !file.fileName.endsWith(".css")) continue;
        file.source = String(file.source).replace(inline, (_all, _quote, data: string) => {
          const font = Buffer.from(data, "base64");
          const name = `font-${createHash("sha256").update(font).digest("hex").slice(0, 12)}.woff2`;
          if (!bundle[`assets/${name}`]) this.emitFile({ type: "asset", fileName: `assets/${name}`, source: font });
          return `url(./${name})`;
        });
      }
    },
  };
}

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
  plugins: [react(), fontsAsFiles(), gzipAssets()],
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
