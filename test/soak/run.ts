/**
 * `npm run soak -- --minutes N [--seed S] [--kill-gap MS] [--source]`: the soak (test/soak/soak.ts) for N
 * minutes (default 20; kills at random gaps up to MS apart, default 5000), printing progress and one JSON report at the end. Exits 1 when anything was lost,
 * duplicated or late. The worker is the built product (bundled like `npm run build` into
 * `dist/soak/`, run by plain node); `--source` runs the sources through tsx instead.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runSoak } from "./soak.js";

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
};

const minutes = arg("minutes", 20);
const seed = arg("seed", 20261201);
const root = fileURLToPath(new URL("../..", import.meta.url));
let workerEntry: string | undefined;
if (!process.argv.includes("--source")) {
  // @ts-expect-error the build script is plain JavaScript without type declarations
  const { bundleServer, buildWebUi } = (await import("../../webui/build.mjs")) as {
    bundleServer: (entries: string[], outdir: string) => Promise<string>;
    buildWebUi: () => Promise<void>;
  };
  await buildWebUi();
  await bundleServer([join(root, "test/soak/worker.ts")], join(root, "dist/soak"));
  workerEntry = "dist/soak/worker.js";
}
const report = await runSoak({
  ...(workerEntry !== undefined && { workerEntry }),
  durationMs: minutes * 60_000,
  seed,
  localUsers: 3,
  telegramUsers: 3,
  messageGapMs: [800, 4_000],
  killGapMs: [Math.min(500, arg("kill-gap", 5_000) / 2), arg("kill-gap", 5_000)],
  lateBoundMs: 15_000,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
const bad = report.lost.length + report.duplicatedAnswers.length + report.duplicatedPayments.length + report.remindersMissing.length + report.remindersDuplicated.length + report.remindersLate.length;
process.exit(bad === 0 ? 0 : 1);
