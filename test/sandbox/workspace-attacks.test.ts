import { fork, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asId } from "../../core/ids.js";
import { JailError } from "../../sandbox/workspace/jail.js";
import { Workspace } from "../../sandbox/workspace/tools.js";

const ATTACKER = join(import.meta.dirname, "jail-attacker.cjs");
const ITERATIONS = 10_000;

/** Starts the attacker child process and waits until its loop runs. */
async function attacker(mode: string, root: string, outside: string): Promise<ChildProcess> {
  const child = fork(ATTACKER, [mode, root, outside], { stdio: "ignore" });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("error", reject);
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("workspace jail under attack (links, races, special files, quota)", () => {
  let dataDir: string;
  let outside: string;
  let ws: Workspace;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-jail-"));
    outside = join(dataDir, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "f"), "OUTSIDE-SECRET");
    writeFileSync(join(outside, "victim"), "ORIGINAL");
    ws = Workspace.of(dataDir, asId("person", "per_attack"));
    mkdirSync(ws.root, { recursive: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("refuses a hardlink to a file outside, for reading and as a target it would write through", async () => {
    linkSync(join(outside, "f"), join(ws.root, "linked.txt"));
    await expect(ws.read("linked.txt")).rejects.toMatchObject({ code: "linked_file" });
    // A write replaces the name; it never writes into the outside inode.
    await ws.write("linked.txt", "mine");
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("OUTSIDE-SECRET");
    expect(await ws.read("linked.txt")).toBe("mine");
  });

  it("never writes through a symlink planted at the target or at a temporary name", async () => {
    symlinkSync(join(outside, "victim"), join(ws.root, "target.txt"));
    await expect(ws.read("target.txt")).rejects.toBeInstanceOf(JailError);
    await ws.write("target.txt", "mine");
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("ORIGINAL");
    // Symlinks at predictable temporary names of the old implementation are simply not used.
    for (const name of [`target.txt.${process.pid}.tmp`, ".target.txt.tmp"]) symlinkSync(join(outside, "victim"), join(ws.root, name));
    await ws.write("target.txt", "again");
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("ORIGINAL");
    expect(await ws.read("target.txt")).toBe("again");
  });

  it("refuses FIFOs and other special files without hanging", async () => {
    execFileSync("mkfifo", [join(ws.root, "pipe")]);
    await expect(ws.read("pipe")).rejects.toMatchObject({ code: "not_a_regular_file" });
    await expect(ws.write("pipe", "x")).rejects.toMatchObject({ code: "not_a_regular_file" });
    mkdirSync(join(ws.root, "folder"));
    await expect(ws.read("folder")).rejects.toMatchObject({ code: "not_a_regular_file" });
    await expect(ws.write("folder", "x")).rejects.toMatchObject({ code: "not_a_regular_file" });
  });

  it("enforces the per-person quota, counting what a write replaces", async () => {
    const small = Workspace.of(dataDir, asId("person", "per_quota"), { quotaBytes: 1000 });
    await small.write("a.bin", new Uint8Array(600));
    await expect(small.write("b.bin", new Uint8Array(600))).rejects.toMatchObject({ code: "quota_exceeded" });
    await small.write("a.bin", new Uint8Array(900)); // replaces 600: 900 in all
    expect(await small.usage()).toBe(900);
    // Concurrent writes cannot both pass the check.
    const results = await Promise.allSettled([small.write("c.bin", new Uint8Array(60)), small.write("d.bin", new Uint8Array(60))]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await small.usage()).toBeLessThanOrEqual(1000);
  });

  it(`a folder swapped for a symlink never leaks outside bytes (${ITERATIONS} reads against a racing attacker)`, async () => {
    mkdirSync(join(ws.root, "dir"));
    writeFileSync(join(ws.root, "dir", "f"), "inside");
    children.push(await attacker("dir", ws.root, outside));
    let leaked = 0;
    let ok = 0;
    let refused = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      try {
        const text = await ws.read("dir/f");
        if (text.includes("OUTSIDE")) leaked++;
        else ok++;
      } catch (error) {
        if (!(error instanceof JailError)) throw error;
        refused++;
      }
    }
    expect(leaked).toBe(0);
    expect(ok + refused).toBe(ITERATIONS);
    // The race was live: both outcomes happened.
    expect(refused).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(0);
  }, 120_000);

  it(`a file swapped for a symlink or a hardlink never leaks outside bytes (${ITERATIONS} reads each)`, async () => {
    writeFileSync(join(ws.root, "f"), "inside");
    writeFileSync(join(ws.root, "h"), "inside");
    children.push(await attacker("file", ws.root, outside), await attacker("hardlink", ws.root, outside));
    let leaked = 0;
    let refused = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      for (const name of ["f", "h"]) {
        try {
          if ((await ws.read(name)).includes("OUTSIDE")) leaked++;
        } catch (error) {
          if (!(error instanceof JailError)) throw error;
          refused++;
        }
      }
    }
    expect(leaked).toBe(0);
    expect(refused).toBeGreaterThan(0);
  }, 180_000);

  it("writes racing a folder swap and planted symlinks never land outside (2,000 writes)", async () => {
    mkdirSync(join(ws.root, "w"));
    children.push(await attacker("tmp", ws.root, outside));
    let written = 0;
    for (let i = 0; i < 2_000; i++) {
      try {
        await ws.write("w/out.txt", `write ${i}`);
        written++;
      } catch (error) {
        if (!(error instanceof JailError)) throw error;
      }
    }
    await stop(children.pop()!);
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("ORIGINAL");
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("OUTSIDE-SECRET");
    expect(readdirSync(outside).sort()).toEqual(["f", "victim"]);
    expect(written).toBeGreaterThan(0);
  }, 180_000);
});
