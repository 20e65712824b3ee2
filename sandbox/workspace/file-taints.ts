/**
 * Which files of a person's workspace carry a taint (issue 11's rule reaching files): a file
 * written by a run in a tainted activation carries that activation's taint source, and so does
 * a file written by any run while tainted files were there to be read. Kept beside the workspace
 * (`DATA_DIR/persons/<id>/workspace-taints.json`, mode 0600) — outside what the sandbox can see or
 * change. An entry goes when its file is gone; a run that only reads leaves entries as they are.
 *
 * Written atomically (temporary file + rename), one writer per ledger at a time in this process.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { KeyedQueue } from "../../core/scheduling/index.js";

/** A taint as the store keeps it (core's `Taint`). */
export interface FileTaint {
  source: string;
}

const schema = z.record(z.string(), z.object({ source: z.string().max(1000) }));
const writers = new KeyedQueue();

/** The taints of one workspace's files. */
export class FileTaints {
  private constructor(private readonly file: string) {}

  /** The ledger of the workspace at `workspaceRoot` (kept in its parent folder). */
  static of(workspaceRoot: string): FileTaints {
    return new FileTaints(join(dirname(workspaceRoot), "workspace-taints.json"));
  }

  /** Every tainted path with its taint (an unreadable or damaged ledger reads as one taint on everything: `*`). */
  async all(): Promise<Map<string, FileTaint>> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
      return new Map([["*", { source: "the workspace's taint record could not be read" }]]);
    }
    let json: unknown;
    try {
      json = JSON.parse(text.trim() === "" ? "{}" : text);
    } catch {
      json = null;
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) return new Map([["*", { source: "the workspace's taint record is damaged" }]]);
    return new Map(Object.entries(parsed.data));
  }

  /** The taint of one file, or null. */
  async of(path: string): Promise<FileTaint | null> {
    const all = await this.all();
    return all.get(path) ?? all.get("*") ?? null;
  }

  /** Marks `paths` with `taint` and forgets `gone` (deleted files). */
  async update(change: { mark?: { paths: readonly string[]; taint: FileTaint }; gone?: readonly string[] }): Promise<void> {
    if ((change.mark?.paths.length ?? 0) === 0 && (change.gone?.length ?? 0) === 0) return;
    await writers.run(this.file, async () => {
      const all = await this.all();
      for (const path of change.gone ?? []) all.delete(path);
      for (const path of change.mark?.paths ?? []) all.set(path, { source: (change.mark as { taint: FileTaint }).taint.source.slice(0, 1000) });
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
      const temp = `${this.file}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(temp, JSON.stringify(Object.fromEntries(all)), { mode: 0o600, flag: "wx" });
      await rename(temp, this.file);
    });
  }
}
