/**
 * Race-free file access inside one directory tree (the workspace jail), for Linux.
 *
 * Node has no `openat(2)`, so paths are walked through directory handles instead: the jail root is
 * opened once with `O_DIRECTORY | O_NOFOLLOW`, and every later component is opened *relative to the
 * handle of its parent* as `/proc/self/fd/<parent fd>/<name>`. The kernel resolves the magic link
 * `/proc/self/fd/<fd>` to the very directory the handle holds (not by its path), so renaming or
 * swapping a directory on the way for a symlink after the walk started cannot redirect the open.
 * Each component is opened with `O_NOFOLLOW` (a symlink anywhere gives ELOOP/ENOTDIR and is refused),
 * and every opened file is checked *after* the open with `fstat`: a regular file (FIFOs, sockets and
 * devices are refused; opens use `O_NONBLOCK` so a FIFO cannot hang us) with exactly one link (a
 * hardlink to a file outside would otherwise be read or written through).
 *
 * Writes go to an exclusive temporary file (`O_CREAT | O_EXCL | O_NOFOLLOW`, random name) created in
 * the target's directory handle, then renamed over the target within the same handle: `rename(2)`
 * replaces a symlink or hardlink at the target name instead of writing through it.
 *
 * Paths are workspace-relative with `/` separators; `..`, absolute paths, empty segments beyond
 * normalisation and NUL are refused before anything is touched.
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync, lstatSync, renameSync, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, rename, unlink, type FileHandle } from "node:fs/promises";
import { posix } from "node:path";
import type { JailErrorCode } from "../../core/tools/index.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** True when this system supports the jail (Linux with /proc mounted). */
export const jailSupported: boolean = process.platform === "linux" && existsSync("/proc/self/fd");

/** A path or file the jail refuses. `code` says why. */
export class JailError extends Error {
  constructor(
    readonly code: JailErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "JailError";
  }
}

/**
 * Splits a workspace-relative path into its segments, resolving harmless `.`/`..` lexically
 * (`a/../b` → `b`). @throws JailError `path_outside_workspace` for absolute paths, NUL, a `..`
 * that climbs above the root, or backslashes (never separators here, refused to avoid confusion).
 */
export function segmentsOf(path: string): string[] {
  if (path.includes("\0") || path.includes("\\") || posix.isAbsolute(path)) throw outside(path);
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) throw outside(path);
      out.pop();
    } else out.push(part);
  }
  return out;
}

function outside(path: string): JailError {
  return new JailError("path_outside_workspace", `${JSON.stringify(path)} is outside your workspace`);
}

function at(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Opens the jail root (creating it when missing). The root's own path is trusted (operator's DATA_DIR). */
export async function openRoot(root: string): Promise<FileHandle> {
  if (!jailSupported) throw new JailError("jail_unsupported", "the workspace jail needs Linux with /proc mounted");
  await mkdir(root, { recursive: true, mode: 0o700 });
  try {
    return await open(root, DIR_FLAGS);
  } catch (error) {
    if (errno(error) === "ELOOP" || errno(error) === "ENOTDIR") throw new JailError("path_outside_workspace", `the workspace root ${root} is not a directory`);
    throw error;
  }
}

/**
 * Opens the directory at `segments` below `root`, one handle at a time, never following a symlink.
 * With `create`, missing directories are made (mode 0700). The caller closes the returned handle;
 * intermediate handles are closed here. @throws JailError (`path_outside_workspace` for a symlink or
 * non-directory on the way, `not_found` when missing and not creating)
 */
export async function openDir(root: FileHandle, segments: readonly string[], options: { create?: boolean; path?: string } = {}): Promise<FileHandle> {
  let current = root;
  const shown = options.path ?? segments.join("/");
  try {
    for (const name of segments) {
      let next: FileHandle;
      try {
        next = await open(at(current, name), DIR_FLAGS);
      } catch (error) {
        if (errno(error) !== "ENOENT" || !options.create) throw error;
        try {
          await mkdir(at(current, name), { mode: 0o700 });
        } catch (made) {
          if (errno(made) !== "EEXIST") throw made;
        }
        next = await open(at(current, name), DIR_FLAGS);
      }
      if (current !== root) await current.close();
      current = next;
    }
  } catch (error) {
    if (current !== root) await current.close();
    throw mapOpenError(error, shown);
  }
  // The root handle is returned as a fresh handle so callers may always close what they get.
  return current === root ? open(`/proc/self/fd/${root.fd}/.`, DIR_FLAGS) : current;
}

function mapOpenError(error: unknown, path: string): unknown {
  switch (errno(error)) {
    case "ELOOP":
    case "ENOTDIR":
    case "EMLINK":
      return new JailError("path_outside_workspace", `${JSON.stringify(path)} goes through a link or a non-folder; refused`);
    case "ENOENT":
      return new JailError("not_found", `${JSON.stringify(path)} does not exist`);
    case "ENXIO":
    case "ENODEV":
      return new JailError("not_a_regular_file", `${JSON.stringify(path)} is not a regular file`);
    default:
      return error;
  }
}

/**
 * Checks an open file: a regular file of at most `maxBytes` that is, at one moment, the *only* link
 * of its inode and present at its name in the directory handle. A hardlink to an outside file has
 * two links while it is in the workspace; a name swapped after the open no longer holds our inode;
 * both are refused. Returns the size. @throws JailError
 *
 * Why three calls for the link check: while an `unlink` of the name is in progress the kernel can
 * already show the lowered link count while lock-free lookups still find the name, so an attacker
 * linking an outside file in and out in a loop can make a single `lstat` report "one link" for a
 * file whose other link is outside. Unlinks hold the directory's lock; `rename(name, name)` takes it
 * too (and looks the name up under it), so it waits for any unlink in progress. The check is
 * `lstat` → `rename(name, name)` → `lstat`, run synchronously back to back: a lowered count seen by
 * the first `lstat` during an unlink is followed by the name being gone, so the second `lstat`
 * would need a new link *and* another unlink to begin in between. The calls are synchronous on
 * purpose (microseconds; an attacker holding the lock delays us by as long as it holds it).
 */
function checkOpened(info: Stats, dir: FileHandle, name: string, path: string, maxBytes: number): number {
  if (!info.isFile()) throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is not a regular file`);
  if (info.size > maxBytes) throw new JailError("too_large", `${JSON.stringify(path)} is ${info.size} bytes; the limit is ${maxBytes}`);
  const where = at(dir, name);
  try {
    sameOnlyLink(lstatSync(where), info, path);
    renameSync(where, where);
    sameOnlyLink(lstatSync(where), info, path);
  } catch (error) {
    if (error instanceof JailError) throw error;
    if (errno(error) === "ENOENT") throw new JailError("changed_during_access", `${JSON.stringify(path)} changed while being opened; refused`);
    throw error;
  }
  return info.size;
}

function sameOnlyLink(named: Stats, opened: Stats, path: string): void {
  if (named.ino !== opened.ino || named.dev !== opened.dev) throw new JailError("changed_during_access", `${JSON.stringify(path)} changed while being opened; refused`);
  if (named.nlink !== 1) throw new JailError("linked_file", `${JSON.stringify(path)} has ${named.nlink} links (a hardlink); refused`);
}

/**
 * Reads a whole regular file inside the jail. @throws JailError (outside, link, special file, too
 * large, not found, changed while opening)
 */
export async function readInside(root: FileHandle, path: string, maxBytes: number): Promise<Buffer> {
  const segments = segmentsOf(path);
  const name = segments.pop();
  if (name === undefined) throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
  const dir = await openDir(root, segments, { path });
  let file: FileHandle;
  try {
    file = await open(at(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    await dir.close();
    throw errno(error) === "EISDIR" ? new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`) : mapOpenError(error, path);
  }
  try {
    const size = checkOpened(await file.stat(), dir, name, path, maxBytes);
    return await readAll(file, size, maxBytes, path);
  } finally {
    await dir.close();
    await file.close();
  }
}

/** Reads at most size + 1 bytes: a file that grew after the check is refused, never read past the limit. */
async function readAll(file: FileHandle, size: number, maxBytes: number, path: string): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
  let filled = 0;
  for (;;) {
    const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
    if (filled === buffer.length) {
      if (filled > maxBytes) throw new JailError("too_large", `${JSON.stringify(path)} grew over the limit of ${maxBytes} bytes while being read`);
      break;
    }
  }
  return buffer.subarray(0, filled);
}

/**
 * Size of a regular file at `path` (0 when missing), refusing links and special files — what a
 * write would replace, for the quota. @throws JailError
 */
export async function sizeInside(root: FileHandle, path: string): Promise<number> {
  const segments = segmentsOf(path);
  const name = segments.pop();
  if (name === undefined) return 0;
  let dir: FileHandle;
  try {
    dir = await openDir(root, segments, { path });
  } catch (error) {
    if (error instanceof JailError && error.code === "not_found") return 0;
    throw error;
  }
  try {
    const info = await lstat(at(dir, name));
    return info.isFile() ? info.size : 0;
  } catch (error) {
    if (errno(error) === "ENOENT") return 0;
    throw error;
  } finally {
    await dir.close();
  }
}

/**
 * Writes `data` to `path` atomically: an exclusive temporary file in the target's directory handle,
 * flushed, then renamed over the target (which replaces a symlink or hardlink at that name instead of
 * following it). Missing folders are created. A folder or special file at the target is refused.
 * @throws JailError
 */
export async function writeInside(root: FileHandle, path: string, data: Uint8Array): Promise<void> {
  const segments = segmentsOf(path);
  const name = segments.pop();
  if (name === undefined) throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
  const dir = await openDir(root, segments, { create: true, path });
  try {
    const existing = await lstat(at(dir, name)).catch((error: unknown) => {
      if (errno(error) === "ENOENT") return null;
      throw error;
    });
    if (existing !== null && !existing.isFile() && !existing.isSymbolicLink()) {
      throw new JailError("not_a_regular_file", `${JSON.stringify(path)} exists and is not a regular file`);
    }
    const temp = `.${name.slice(0, 100)}.${randomBytes(8).toString("hex")}.tmp`;
    let file: FileHandle;
    try {
      file = await open(at(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    } catch (error) {
      if (errno(error) === "ENOENT" || errno(error) === "EEXIST") throw new JailError("changed_during_access", `the folder of ${JSON.stringify(path)} changed while writing; nothing was written`);
      throw error;
    }
    try {
      // Re-check after the open: it is our fresh file (exclusive create guarantees it; fstat proves it).
      checkOpened(await file.stat(), dir, temp, temp, Number.MAX_SAFE_INTEGER);
      await file.writeFile(data);
      await file.sync();
    } catch (error) {
      await file.close();
      await unlink(at(dir, temp)).catch(() => undefined);
      throw error;
    }
    await file.close();
    try {
      await rename(at(dir, temp), at(dir, name));
    } catch (error) {
      await unlink(at(dir, temp)).catch(() => undefined);
      if (errno(error) === "EISDIR" || errno(error) === "ENOTEMPTY") throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
      if (errno(error) === "ENOENT") throw new JailError("changed_during_access", `the folder of ${JSON.stringify(path)} changed while writing; nothing was written`);
      throw error;
    }
  } finally {
    await dir.close();
  }
}

/**
 * Removes the file (or link, or special file) at `path` — never a folder, never through a link on
 * the way. Missing is not an error. @throws JailError
 */
export async function removeInside(root: FileHandle, path: string): Promise<void> {
  const segments = segmentsOf(path);
  const name = segments.pop();
  if (name === undefined) throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
  let dir: FileHandle;
  try {
    dir = await openDir(root, segments, { path });
  } catch (error) {
    if (error instanceof JailError && error.code === "not_found") return;
    throw error;
  }
  try {
    await unlink(at(dir, name));
  } catch (error) {
    if (errno(error) === "ENOENT") return;
    if (errno(error) === "EISDIR" || errno(error) === "EPERM") throw new JailError("not_a_regular_file", `${JSON.stringify(path)} is a folder`);
    throw error;
  } finally {
    await dir.close();
  }
}

/** Entries of the folder at `path` (created when missing): names, folders with a trailing `/`. */
export async function listInside(root: FileHandle, path: string): Promise<string[]> {
  const dir = await openDir(root, segmentsOf(path), { create: true, path });
  try {
    const entries = await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
    return entries.filter((e) => !isTempName(e.name)).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  } finally {
    await dir.close();
  }
}

/**
 * Bytes used below `dir` (regular files only, links not followed), at most `maxEntries` entries
 * visited (more counts as over any quota: returns Infinity).
 */
export async function usageInside(root: FileHandle, maxEntries = 100_000): Promise<number> {
  let total = 0;
  let visited = 0;
  const walk = async (dir: FileHandle): Promise<void> => {
    const entries = await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
    for (const entry of entries) {
      if (++visited > maxEntries) {
        total = Infinity;
        return;
      }
      if (entry.isDirectory()) {
        let child: FileHandle;
        try {
          child = await open(at(dir, entry.name), DIR_FLAGS);
        } catch {
          continue;
        }
        try {
          await walk(child);
        } finally {
          await child.close();
        }
      } else if (entry.isFile()) {
        const info = await lstat(at(dir, entry.name)).catch(() => null);
        if (info?.isFile()) total += info.size;
      }
      if (total === Infinity) return;
    }
  };
  const start = await open(`/proc/self/fd/${root.fd}/.`, DIR_FLAGS);
  try {
    await walk(start);
  } finally {
    await start.close();
  }
  return total;
}

/** Our temporary files (`.<name>.<16 hex>.tmp`) are hidden from listings. */
function isTempName(name: string): boolean {
  return /^\..*\.[0-9a-f]{16}\.tmp$/.test(name);
}
