// Bundles the web app (webui/) into dist/webui/app.js and app.css: Preact, marked and DOMPurify are
// built in, so the page needs nothing from another site. `npm run build` runs it; so do the e2e tests.
import { build } from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "dist", "webui");

/** Builds the bundle; resolves with the output directory. */
export async function buildWebUi() {
  await mkdir(out, { recursive: true });
  await build({
    entryPoints: [join(here, "main.tsx")],
    bundle: true,
    minify: true,
    format: "iife",
    target: ["es2020"],
    jsx: "automatic",
    jsxImportSource: "preact",
    outfile: join(out, "app.js"),
    legalComments: "none",
    logLevel: "warning",
  });
  await copyFile(join(here, "app.css"), join(out, "app.css"));
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWebUi();
}
