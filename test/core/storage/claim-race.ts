/**
 * Runs claim workers (claim-worker.ts) as separate processes on one SQLite file and collects what
 * each claimed. Shared by the SQLite tests and the store benchmark.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const workerPath = fileURLToPath(new URL("./claim-worker.ts", import.meta.url));

const reportSchema = z.object({ owner: z.string(), claimed: z.array(z.string()), elapsedMs: z.number() });

/** What one worker process reported. */
export type ClaimReport = z.infer<typeof reportSchema>;

function runWorker(dbPath: string, owner: string, startAt: number): Promise<ClaimReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", workerPath, dbPath, owner, String(startAt)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`claim worker ${owner} exited with ${code}: ${err.trim()}`));
      try {
        resolve(reportSchema.parse(JSON.parse(out.trim().split("\n").pop() ?? "")));
      } catch (error) {
        reject(new Error(`claim worker ${owner} printed no report: ${out} ${err}`, { cause: error }));
      }
    });
  });
}

/** Starts one process per owner on `dbPath`; they begin claiming together, `startDelayMs` from now. */
export function raceClaims(dbPath: string, owners: string[], startDelayMs = 2500): Promise<ClaimReport[]> {
  const startAt = Date.now() + startDelayMs;
  return Promise.all(owners.map((owner) => runWorker(dbPath, owner, startAt)));
}
