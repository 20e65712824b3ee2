/**
 * The entry point: `npm start` runs `main()` (bundled as dist/main.js). Everything it starts is
 * wired in app/; this file only loads the settings, starts, and stops cleanly.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startApp, type RunningApp } from "./app/index.js";
import { loadConfig, type Config } from "./core/config/index.js";
import { ConfigError } from "./core/errors.js";

/** `npm start`: load settings (exit 2 with every bad key listed), start, stop cleanly on SIGTERM/SIGINT. */
export async function main(): Promise<void> {
  // Files Familiar creates (database, vault, workspace, artifacts) are this account's alone.
  process.umask(0o077);
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Familiar cannot start. ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let app: RunningApp;
  try {
    app = await startApp(config);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint = code === "EADDRINUSE" ? ` Another program (or another Familiar) uses port ${config.PORT}: stop it, or start with another port, e.g. PORT=3001 npm start.` : "";
    process.stderr.write(`Familiar failed to start: ${(err as Error).message}.${hint}\n`);
    process.exit(1);
  }
  let exiting = false;
  const shutdown = (reason: string, code: number) => {
    if (exiting) return;
    exiting = true;
    app.logger.info({ reason }, "shutting down");
    app
      .stop()
      .then(() => process.exit(code))
      .catch((err: unknown) => {
        app.logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", () => shutdown("SIGTERM", 0));
  process.once("SIGINT", () => shutdown("SIGINT", 0));
  // No silent death: anything that escaped every handler is logged with its context, then the
  // process drains (running work finishes or is left to resume) and exits non-zero for a restart.
  process.on("unhandledRejection", (reason) => {
    app.logger.fatal({ err: reason }, "unhandled promise rejection: draining and exiting");
    shutdown("unhandledRejection", 1);
  });
  process.on("uncaughtException", (err) => {
    app.logger.fatal({ err }, "uncaught exception: draining and exiting");
    shutdown("uncaughtException", 1);
  });
}

// Run when this file is the entry (main.ts, or the bundled dist/main.js) — not when a bundle of another entry inlines it.
if (process.argv[1] && /[\\/]main\.[jt]s$/.test(process.argv[1]) && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`Familiar failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
