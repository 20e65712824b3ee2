import { link, lstat, mkdir, readdir, readFile, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import type { PersonId } from "../core/ids.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../core/tools/tool.js";

/** Largest file a tool may read or write, bytes. */
export const MAX_FILE_BYTES = 1_048_576;

/** A path that would leave the person's workspace (`..`, absolute, or through a symlink). */
export class PathJailError extends Error {
  readonly code = "path_outside_workspace" as const;
  constructor(path: string) {
    super(`${JSON.stringify(path)} is outside your workspace`);
    this.name = "PathJailError";
  }
}

/**
 * A person's persistent workspace: `DATA_DIR/persons/<personId>/workspace/`. Every path is resolved
 * inside it (the path jail): absolute paths, `..` segments that climb out, and symlinks that point
 * out are refused with PathJailError before any file is touched.
 */
export class Workspace {
  constructor(readonly root: string) {}

  /** The workspace of a person under DATA_DIR. */
  static of(dataDir: string, personId: PersonId): Workspace {
    return new Workspace(join(resolve(dataDir), "persons", personId, "workspace"));
  }

  /** Resolves a workspace-relative path to an absolute path inside the jail. Throws PathJailError. */
  async resolve(path: string): Promise<string> {
    if (path.includes("\0") || isAbsolute(path)) throw new PathJailError(path);
    await mkdir(this.root, { recursive: true });
    const root = await realpath(this.root);
    const target = resolve(root, path);
    if (!inside(root, target)) throw new PathJailError(path);
    // Follow existing symlinks along the path: the real location must stay inside too.
    let probe = target;
    for (;;) {
      try {
        const real = await realpath(probe);
        if (!inside(root, real)) throw new PathJailError(path);
        break;
      } catch (err) {
        if (err instanceof PathJailError) throw err;
        const parent = dirname(probe);
        if (parent === probe) break;
        probe = parent;
      }
    }
    return target;
  }

  async read(path: string): Promise<string> {
    const file = await this.resolve(path);
    const info = await stat(file);
    if (info.size > MAX_FILE_BYTES) throw new Error(`${path} is ${info.size} bytes; the limit is ${MAX_FILE_BYTES}`);
    return readFile(file, "utf8");
  }

  /** Writes atomically (temp file + rename). Refuses to write through a symlink. */
  async write(path: string, content: string): Promise<number> {
    const bytes = Buffer.byteLength(content);
    if (bytes > MAX_FILE_BYTES) throw new Error(`content is ${bytes} bytes; the limit is ${MAX_FILE_BYTES}`);
    const file = await this.resolve(path);
    const existing = await lstat(file).catch(() => null);
    if (existing?.isSymbolicLink()) throw new PathJailError(path);
    await mkdir(dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, content, "utf8");
    await rename(temp, file);
    return bytes;
  }

  /**
   * Creates a new file holding `bytes` (any content: photos, audio, PDFs). Atomic and never
   * overwriting: the bytes go to a temp file that is then hard-linked to `path`, so a crash leaves
   * no half-written file and an existing file (or symlink) at `path` makes it throw `EEXIST`.
   * Throws PathJailError for a path outside the workspace, and an Error above `maxBytes`.
   */
  async create(path: string, bytes: Uint8Array, maxBytes: number): Promise<number> {
    if (bytes.byteLength > maxBytes) throw new Error(`content is ${bytes.byteLength} bytes; the limit is ${maxBytes}`);
    const file = await this.resolve(path);
    await mkdir(dirname(file), { recursive: true });
    // The parent now exists: resolve again so a symlinked folder created meanwhile is caught.
    if ((await this.resolve(path)) !== file) throw new PathJailError(path);
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temp, bytes, { flag: "wx" });
    try {
      await link(temp, file);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    return bytes.byteLength;
  }

  /** Reads a file's bytes (any content). Throws PathJailError outside the workspace, an Error above `maxBytes`. */
  async readBytes(path: string, maxBytes: number): Promise<Buffer> {
    const file = await this.resolve(path);
    const info = await stat(file);
    if (info.size > maxBytes) throw new Error(`${path} is ${info.size} bytes; the limit is ${maxBytes}`);
    return readFile(file);
  }

  /** Files and folders directly under `path` (default the root), names with a trailing `/` for folders. */
  async list(path = "."): Promise<string[]> {
    const dir = await this.resolve(path);
    await mkdir(dir, { recursive: true });
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  }
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

const fail = (err: unknown): ToolResult => ({ ok: false, code: err instanceof PathJailError ? err.code : "file_error", error: (err as Error).message });
const relPath = z.string().min(1).max(500);

/**
 * Workspace tools: `files_list`, `files_read` (content is untrusted: files may come from outside)
 * and `files_write` (a write: Sentinel asks unless a `files.write` grant covers it).
 */
export function workspaceTools(dataDir: string): ToolDefinition[] {
  const ws = (personId: PersonId) => Workspace.of(dataDir, personId);
  return [
    defineTool({
      name: "files_list",
      description: "List the files in a folder of the person's workspace (default: its root).",
      parameters: z.object({ path: relPath.optional() }),
      sideEffect: false,
      capability: "files.read",
      policy: { capability: "files.read", access: "read", destinationArgs: [], exfiltrationArgs: [] },
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
      policy: { capability: "files.read", access: "read", destinationArgs: [], exfiltrationArgs: [] },
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
      policy: { capability: "files.write", access: "write", destinationArgs: [], exfiltrationArgs: [] },
      async execute(args, ctx) {
        try {
          const bytes = await ws(ctx.personId).write(args.path, args.content);
          return { ok: true, content: `wrote ${bytes} bytes to ${args.path}` };
        } catch (err) {
          return fail(err);
        }
      },
    }),
  ] as unknown as ToolDefinition[];
}
