/**
 * The workspace as the sandbox leaves it: walked without following a link, before a run (to
 * neutralise hardlinks that reach outside, hand the files to the sandbox user, and note what is
 * there), while it runs (the quota) and after (what it created, changed or deleted).
 *
 * The walk opens every folder with `O_DIRECTORY | O_NOFOLLOW` relative to its parent's handle
 * (`/proc/self/fd/<fd>/<name>`), so a folder swapped for a symlink by a process in the sandbox
 * while we walk is refused, never followed to the host's files. Entries are `lstat`ed, never
 * `stat`ed.
 *
 * Hardlinks: a bind-mounted workspace shows any hardlink in it as the very inode it names, so a
 * link to a file elsewhere on the disk (another person's file, the vault) would be readable and
 * writable from inside. The sandbox itself cannot make one (a link across mount points fails with
 * EXDEV), but anything else that writes into the workspace could; before each run every name of
 * an inode whose other links lie outside the workspace is removed from the workspace (the other
 * file is untouched and its content never enters the sandbox). Links between two names inside the
 * workspace stay.
 */
import { constants } from "node:fs";
import { lchown, lstat, open, opendir, unlink, type FileHandle } from "node:fs/promises";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** What a walk saw of one entry. */
export interface Entry {
  type: "file" | "dir" | "link" | "other";
  size: number;
  mtimeMs: number;
  ino: number;
  nlink: number;
  uid: number;
}

/** A walk of the workspace: entries by relative path (`a/b.txt`), totals, and whether it stopped early. */
export interface Snapshot {
  entries: Map<string, Entry>;
  /** Bytes of regular files (apparent sizes, as the quota counts them). */
  bytes: number;
  /** The walk stopped at the entry limit (more entries exist). */
  truncated: boolean;
  /** The workspace root's device (for deleted-but-open files). */
  device: number;
}

/** Files created, changed or deleted by a run. */
export interface WorkspaceChanges {
  created: ChangedFile[];
  changed: ChangedFile[];
  deleted: string[];
}

/** A file a run created or changed. */
export interface ChangedFile {
  path: string;
  type: Entry["type"];
  size: number;
}

/**
 * Walks the workspace at `root` (an absolute path the operator trusts), visiting at most
 * `maxEntries` entries. @throws Error when the root is missing, a link or not a folder
 */
export async function walk(root: string, maxEntries: number): Promise<Snapshot> {
  const handle = await open(root, DIR_FLAGS);
  try {
    const info = await handle.stat();
    const snapshot: Snapshot = { entries: new Map(), bytes: 0, truncated: false, device: info.dev };
    await walkDir(handle, "", snapshot, maxEntries);
    return snapshot;
  } finally {
    await handle.close();
  }
}

async function walkDir(dir: FileHandle, prefix: string, snapshot: Snapshot, maxEntries: number): Promise<void> {
  const listing = await opendir(`/proc/self/fd/${dir.fd}`);
  for await (const dirent of listing) {
    if (snapshot.entries.size >= maxEntries) {
      snapshot.truncated = true;
      return;
    }
    const path = prefix + dirent.name;
    const where = `/proc/self/fd/${dir.fd}/${dirent.name}`;
    let info;
    try {
      info = await lstat(where);
    } catch {
      continue; // removed meanwhile
    }
    const type: Entry["type"] = info.isFile() ? "file" : info.isDirectory() ? "dir" : info.isSymbolicLink() ? "link" : "other";
    snapshot.entries.set(path, { type, size: type === "file" ? info.size : 0, mtimeMs: info.mtimeMs, ino: info.ino, nlink: info.nlink, uid: info.uid });
    if (type === "file") snapshot.bytes += info.size;
    if (type !== "dir") continue;
    let child: FileHandle;
    try {
      child = await open(where, DIR_FLAGS);
    } catch {
      continue; // replaced by a link or removed meanwhile: never followed
    }
    try {
      await walkDir(child, `${path}/`, snapshot, maxEntries);
    } finally {
      await child.close();
    }
    if (snapshot.truncated) return;
  }
}

/**
 * Removes from the workspace every name of a file whose inode has links outside it (more links
 * than names found in the walk). Returns the paths removed. The walk must be complete (not
 * truncated): with names unseen, a link inside could be mistaken for one outside — such a
 * workspace is refused by the caller before this runs.
 */
export async function neutraliseOutsideLinks(root: string, snapshot: Snapshot): Promise<string[]> {
  const names = new Map<number, string[]>();
  for (const [path, entry] of snapshot.entries) {
    if (entry.type !== "file" || entry.nlink < 2) continue;
    names.set(entry.ino, [...(names.get(entry.ino) ?? []), path]);
  }
  const removed: string[] = [];
  for (const paths of names.values()) {
    const first = snapshot.entries.get(paths[0] as string) as Entry;
    if (paths.length >= first.nlink) continue; // every link is inside the workspace
    for (const path of paths) {
      await unlinkInside(root, path);
      snapshot.entries.delete(path);
      snapshot.bytes -= first.size;
      removed.push(path);
    }
  }
  return removed.sort();
}

/**
 * Gives every entry (and the root) to `uid:gid`, without following links — when Familiar runs as
 * root and the sandbox as an unprivileged user, the user must own the files it may change.
 */
export async function handOver(root: string, snapshot: Snapshot, uid: number, gid: number): Promise<void> {
  const rootHandle = await open(root, DIR_FLAGS);
  try {
    await rootHandle.chown(uid, gid);
  } finally {
    await rootHandle.close();
  }
  for (const [path, entry] of snapshot.entries) {
    if (entry.uid === uid) continue;
    await withParent(root, path, (where) => lchown(where, uid, gid)).catch(() => undefined);
  }
}

/** Removes one file by its workspace path, walking folders without following links. */
export async function unlinkInside(root: string, path: string): Promise<void> {
  await withParent(root, path, (where) => unlink(where));
}

async function withParent(root: string, path: string, fn: (where: string) => Promise<void>): Promise<void> {
  const parts = path.split("/");
  const name = parts.pop() as string;
  let dir = await open(root, DIR_FLAGS);
  try {
    for (const part of parts) {
      const next = await open(`/proc/self/fd/${dir.fd}/${part}`, DIR_FLAGS);
      await dir.close();
      dir = next;
    }
    await fn(`/proc/self/fd/${dir.fd}/${name}`);
  } finally {
    await dir.close();
  }
}

/** Whether `entry` at `path` is new or different since `before`. */
export function touched(before: Snapshot, path: string, entry: Entry): boolean {
  const old = before.entries.get(path);
  return old === undefined || old.type !== entry.type || old.ino !== entry.ino || old.size !== entry.size || old.mtimeMs !== entry.mtimeMs;
}

/** What changed between two walks (links and special files included, by type). */
export function diff(before: Snapshot, after: Snapshot): WorkspaceChanges {
  const changes: WorkspaceChanges = { created: [], changed: [], deleted: [] };
  for (const [path, entry] of after.entries) {
    if (entry.type === "dir") continue;
    const old = before.entries.get(path);
    const file = { path, type: entry.type, size: entry.size };
    if (old === undefined || old.type !== entry.type) changes.created.push(file);
    else if (old.ino !== entry.ino || old.size !== entry.size || old.mtimeMs !== entry.mtimeMs) changes.changed.push(file);
  }
  for (const [path, entry] of before.entries) {
    if (entry.type === "dir") continue;
    const now = after.entries.get(path);
    if (now === undefined || now.type !== entry.type) changes.deleted.push(path);
  }
  const byPath = (a: ChangedFile, b: ChangedFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  changes.created.sort(byPath);
  changes.changed.sort(byPath);
  changes.deleted.sort();
  return changes;
}
