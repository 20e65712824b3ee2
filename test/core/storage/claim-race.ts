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

interface RunningWorker {
  ready: Promise<void>;
  go(): void;
  report: Promise<ClaimReport>;
}

function startWorker(dbPath: string, owner: string): RunningWorker {
  const child = spawn(process.execPath, ["--import", "tsx", workerPath, dbPath, owner], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    if (out.startsWith("ready\n")) markReady();
  });
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const report = new Promise<ClaimReport>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      markReady();
      if (code !== 0) return reject(new Error(`claim worker ${owner} exited with ${code}: ${err.trim()}`));
      try {
        resolve(reportSchema.parse(JSON.parse(out.trim().split("\n").pop() ?? "")));
      } catch (error) {
        reject(new Error(`claim worker ${owner} printed no report: ${out} ${err}`, { cause: error }));
      }
    });
  });
  return { ready, go: () => child.stdin.end("go\n"), report };
}

/** Starts one process per owner on `dbPath`; once all have opened the store, they begin claiming together. */
export async function raceClaims(dbPath: string, owners: string[]): Promise<ClaimReport[]> {
  const workers = owners.map((owner) => startWorker(dbPath, owner));
  await Promise.all(workers.map((w) => w.ready));
  for (const worker of workers) worker.go();
  return Promise.all(workers.map((w) => w.report));
}
