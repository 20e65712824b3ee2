// `npm run build`: bundles the web app (webui/) into dist/webui/app.js and app.css — Preact, marked
// and DOMPurify built in, so the page needs nothing from another site — and the server (main.ts) into
// dist/main.js plus chunks for what it loads only when used. One bundled server starts in about half
// the time and memory of the same code as hundreds of modules. The e2e tests build the web app too.
import { build } from "esbuild";
import { copyFile, mkdir, rm } from "node:fs/promises";
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

/**
 * Packages left out of the server bundle: native addons, and large libraries loaded only when a
 * feature is configured or used (messengers, MongoDB, the browser, the model SDK, the tokenizer,
 * whose worker imports it by path), which stay plain imports from node_modules.
 */
const external = [
  "better-sqlite3",
  "pino",
  "playwright-core",
  "whatsapp-web.js",
  "puppeteer",
  "puppeteer-core",
  "mongodb",
  "@agendajs/mongo-backend",
  "discord.js",
  "@discordjs/*",
  "@slack/bolt",
  "grammy",
  "@grammyjs/*",
  "openai",
  "gpt-tokenizer",
  "undici",
];

/** Bundles the server; resolves with the output directory. */
export async function buildServer() {
  return bundleServer([join(here, "..", "main.ts")], join(here, "..", "dist"));
}

/**
 * Bundles server entry points (the server, or the soak's worker, which wraps it) into `outdir`
 * with the server's options; resolves with `outdir`.
 */
export async function bundleServer(entryPoints, outdir) {
  await rm(join(outdir, "chunks"), { recursive: true, force: true });
  await build({
    // The mail worker thread is an entry of its own (connectors/email/parse-pool.ts starts it by path).
    entryPoints: [...entryPoints, { in: join(here, "..", "connectors", "email", "mail-worker.ts"), out: "connectors/email/mail-worker" }],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir,
    chunkNames: "chunks/[name]-[hash]",
    minify: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "warning",
    external,
    // CommonJS dependencies inside an ES module bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __familiarRequire } from 'node:module'; const require = __familiarRequire(import.meta.url);" },
  });
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWebUi();
  if (!process.argv.includes("--webui-only")) await buildServer();
}
