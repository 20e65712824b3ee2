import { realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import type { PersonId } from "../../core/ids.js";
import { KeyedQueue } from "../../core/scheduling/index.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import {
  JailError,
  listInside,
  openRoot,
  readInside,
  removeInside,
  segmentsOf,
  sizeInside,
  usageInside,
  writeInside,
} from "./jail.js";

export { JailError } from "./jail.js";

/** Largest file a tool may read or write as text, bytes. */
export const MAX_FILE_BYTES = 1_048_576;

/** Default per-person workspace quota, bytes (1 GiB). */
export const DEFAULT_QUOTA_BYTES = 1024 * 1024 * 1024;

/** A path that would leave the person's workspace (`..`, absolute, or through a symlink). */
export class PathJailError extends JailError {
  constructor(path: string, message = `${JSON.stringify(path)} is outside your workspace`) {
    super("path_outside_workspace", message);
    this.name = "PathJailError";
  }
}

/** Settings of a {@link Workspace}. */
export interface WorkspaceOptions {
  /** Most bytes the whole workspace may hold (regular files, summed). Default 1 GiB. */
  quotaBytes?: number;
}

/** Writers per workspace root, so two concurrent writes cannot both pass the quota check. */
const writeLocks = new KeyedQueue();

/**
 * A person's persistent workspace: `DATA_DIR/persons/<personId>/workspace/`. Every access goes
 * through the jail (`sandbox/workspace/jail.ts`): paths are walked through directory handles without following
 * links, files are checked after opening (regular, one link), writes are atomic through an exclusive
 * temporary file, and a per-person quota bounds the bytes stored. Linux only (needs /proc).
 *
 * Errors are {@link JailError}s (`path_outside_workspace` as {@link PathJailError}), with codes
 * `not_a_regular_file`, `linked_file`, `not_found`, `too_large`, `quota_exceeded`.
 */
export class Workspace {
  readonly quotaBytes: number;

  constructor(
    readonly root: string,
    options: WorkspaceOptions = {},
  ) {
    this.quotaBytes = options.quotaBytes ?? DEFAULT_QUOTA_BYTES;
  }

  /** The workspace of a person under DATA_DIR. */
  static of(dataDir: string, personId: PersonId, options: WorkspaceOptions = {}): Workspace {
    return new Workspace(join(resolve(dataDir), "persons", personId, "workspace"), options);
  }

  /**
   * The absolute path a workspace-relative path names, for showing it (never open it by this path:
   * the read and write methods walk the jail instead). @throws PathJailError
   */
  async resolve(path: string): Promise<string> {
    const segments = this.segments(path);
    const root = await this.withRoot(async () => realpath(this.root));
    return join(root, ...segments);
  }

  /** Reads a UTF-8 text file (at most MAX_FILE_BYTES). @throws JailError */
  async read(path: string): Promise<string> {
    return (await this.readBytes(path, MAX_FILE_BYTES)).toString("utf8");
  }

  /** Reads a file's bytes (at most `maxBytes`, default the quota). @throws JailError */
  async readBytes(path: string, maxBytes = this.quotaBytes): Promise<Buffer> {
    this.segments(path);
    return this.withRoot((root) => readInside(root, path, maxBytes));
  }

  /**
   * Writes (creates or replaces) a file atomically. Text is limited to MAX_FILE_BYTES, bytes only by
   * `maxBytes` (default the quota) and by the quota. Returns the bytes written. @throws JailError
   */
  async write(path: string, content: string | Uint8Array, options: { maxBytes?: number } = {}): Promise<number> {
    const data = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    const limit = options.maxBytes ?? (typeof content === "string" ? MAX_FILE_BYTES : this.quotaBytes);
    if (data.byteLength > limit) throw new JailError("too_large", `content is ${data.byteLength} bytes; the limit is ${limit}`);
    if (this.segments(path).length === 0) throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
    return writeLocks.run(this.root, () =>
      this.withRoot(async (root) => {
        const used = await usageInside(root);
        const replaced = await sizeInside(root, path);
        if (used - replaced + data.byteLength > this.quotaBytes) {
          throw new JailError("quota_exceeded", `the workspace would hold ${used - replaced + data.byteLength} bytes; its quota is ${this.quotaBytes}`);
        }
        await writeInside(root, path, data);
        return data.byteLength;
      }),
    );
  }

  /** Removes a file (never a folder); missing is fine. @throws JailError */
  async remove(path: string): Promise<void> {
    if (this.segments(path).length === 0) throw new JailError("not_a_regular_file", "the workspace itself cannot be removed");
    return writeLocks.run(this.root, () => this.withRoot((root) => removeInside(root, path)));
  }

  /** Files and folders directly under `path` (default the root), names with a trailing `/` for folders. */
  async list(path = "."): Promise<string[]> {
    this.segments(path);
    return this.withRoot((root) => listInside(root, path));
  }

  /** Bytes used by the workspace's regular files. */
  async usage(): Promise<number> {
    return this.withRoot((root) => usageInside(root));
  }

  private segments(path: string): string[] {
    try {
      return segmentsOf(path);
    } catch {
      throw new PathJailError(path);
    }
  }

  private async withRoot<T>(fn: (root: Awaited<ReturnType<typeof openRoot>>) => Promise<T>): Promise<T> {
    const root = await openRoot(this.root);
    try {
      return await fn(root);
    } catch (error) {
      if (error instanceof JailError && error.code === "path_outside_workspace" && !(error instanceof PathJailError)) {
        throw new PathJailError("", error.message);
      }
      throw error;
    } finally {
      await root.close();
    }
  }
}

const fail = (err: unknown): ToolResult =>
  err instanceof JailError
    ? { ok: false, code: err.code, error: err.message }
    : { ok: false, code: "file_error", error: err instanceof Error ? err.message : String(err) };
const relPath = z.string().min(1).max(500);

/**
 * Workspace tools: `files_list`, `files_read` (content is untrusted: files may come from outside)
 * and `files_write` (a write: Sentinel asks unless a `files.write` grant covers it).
 */
export function workspaceTools(dataDir: string, options: WorkspaceOptions = {}): ToolDefinition[] {
  const ws = (personId: PersonId) => Workspace.of(dataDir, personId, options);
  return [
    defineTool({
      name: "files_list",
      description: "List the files in a folder of the person's workspace (default: its root).",
      parameters: z.object({ path: relPath.optional() }),
      sideEffect: false,
      capability: "files.read",
      policy: { capability: "files.read", access: "read", method: { fixed: "LIST" }, destinationArgs: [], fileArgs: ["path"], exfiltrationArgs: [] },
      async execute(args, ctx) {
        try {
          const entries = await ws(ctx.personId).list(args.path);
          return { ok: true, content: entries.length ? entries.join("\n") : "(empty)" };
        } catch (err) {
          return fail(err);
        }
      },
    }),
    defineTool({
      name: "files_read",
      description: "Read a text file from the person's workspace.",
      parameters: z.object({ path: relPath }),
      sideEffect: false,
      capability: "files.read",
      policy: { capability: "files.read", access: "read", method: { fixed: "READ" }, destinationArgs: [], fileArgs: ["path"], exfiltrationArgs: [] },
      async execute(args, ctx) {
        try {
          return { ok: true, content: await ws(ctx.personId).read(args.path), untrusted: { source: `file ${args.path}` } };
        } catch (err) {
          return fail(err);
        }
      },
    }),
    defineTool({
      name: "files_write",
      description: "Write (create or replace) a text file in the person's workspace.",
      parameters: z.object({ path: relPath, content: z.string().max(MAX_FILE_BYTES) }),
      sideEffect: true,
      capability: "files.write",
      policy: { capability: "files.write", access: "write", method: { fixed: "WRITE" }, destinationArgs: [], fileArgs: ["path"], bodyArgs: ["content"], exfiltrationArgs: [] },
      async execute(args, ctx) {
        try {
          const bytes = await ws(ctx.personId).write(args.path, args.content);
          return { ok: true, content: `wrote ${bytes} bytes to ${args.path}` };
        } catch (err) {
          return fail(err);
        }
      },
    }),
  ];
}
