/**
 * The runner in real bubblewrap: the three interpreters and a plain command, the files a run
 * created, changed and deleted, output cut to its budget, a caller's abort, one run per
 * workspace at a time, and the sandbox's availability (a missing bubblewrap, a bubblewrap whose
 * user namespaces are refused, the switch turned off) with a plain reason — and no run then.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findHost } from "../../../sandbox/exec/host.js";
import { OutputBudget } from "../../../sandbox/exec/output.js";
import { detectSandbox } from "../../../sandbox/exec/probe.js";
import { SandboxRunner } from "../../../sandbox/exec/runner.js";
import { sandboxWorld, type SandboxWorld } from "./helpers.js";

let world: SandboxWorld;

beforeAll(async () => {
  world = await sandboxWorld({ shownOutputBytes: 1024 });
});
afterAll(() => world.cleanup());
beforeEach(() => world.reset());

describe("running programs", () => {
  it("runs Python, JavaScript (CommonJS or ES modules) and the shell in /workspace, as Debian ships them", async () => {
    const python = await world.run("import sys, os\nprint(sys.version_info[0], os.getcwd())", { language: "python" });
    expect(python).toMatchObject({ outcome: "exited", exitCode: 0, limit: null });
    expect(python.stdout.text).toBe("3 /workspace\n");
    const cjs = await world.run("const fs = require('fs'); fs.writeFileSync('out.json', JSON.stringify({ ok: process.version.startsWith('v') })); console.log('ok')", { language: "javascript" });
    expect(cjs.stdout.text).toBe("ok\n");
    expect(JSON.parse(readFileSync(join(world.workspace, "out.json"), "utf8"))).toEqual({ ok: true });
    const esm = await world.run("import { readFileSync } from 'node:fs';\nconsole.log(JSON.parse(readFileSync('out.json', 'utf8')).ok)", { language: "javascript" });
    expect(esm.stdout.text).toBe("true\n");
    const shell = await world.run("printf '%s\\n' one two | wc -l; exit 3", { language: "shell" });
    expect(shell).toMatchObject({ exitCode: 3, outcome: "exited" });
    expect(shell.stdout.text.trim()).toBe("2");
  });

  it("runs a command with arguments (looked up on the sandbox's PATH), never through a host shell", async () => {
    const result = await world.run({ kind: "command", command: "echo", args: ["a;b", "$(id)", "*"] });
    expect(result.stdout.text).toBe("a;b $(id) *\n");
    const missing = await world.run({ kind: "command", command: "apt-get", args: ["install", "curl"] });
    expect(missing.exitCode).not.toBe(0);
  });

  it("reports the files created, changed and deleted, links as links", async () => {
    writeFileSync(join(world.workspace, "keep.txt"), "same");
    writeFileSync(join(world.workspace, "edit.txt"), "old");
    writeFileSync(join(world.workspace, "gone.txt"), "bye");
    const result = await world.run("mkdir -p out; echo new > out/new.txt; echo more >> edit.txt; rm gone.txt; ln -s /etc/passwd out/link", { language: "shell" });
    expect(result.files).toEqual({
      created: [
        { path: "out/link", type: "link", size: 0 },
        { path: "out/new.txt", type: "file", size: 4 },
      ],
      changed: [{ path: "edit.txt", type: "file", size: 8 }],
      deleted: ["gone.txt"],
    });
  });

  it("cuts output to the shown budget, keeping the start and the end", async () => {
    const result = await world.run("for i in $(seq 1 2000); do echo line-$i; done; echo LAST >&2", { language: "shell" });
    expect(result.limit).toBeNull();
    expect(result.stdout.cut).toBe(true);
    expect(result.stdout.text.startsWith("line-1\nline-2\n")).toBe(true);
    expect(result.stdout.text.endsWith("line-2000\n")).toBe(true);
    expect(result.stdout.text).toMatch(/\[… [\d,]+ bytes cut …\]/);
    expect(result.stderr).toEqual({ text: "LAST\n", bytes: 5, cut: false });
  });

  it("stops at the caller's abort, killing the tree", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = world.runner.run({ workspaceRoot: world.workspace, quotaBytes: 1e9, program: { kind: "code", language: "shell", code: "sleep 100" }, signal: controller.signal });
    setTimeout(() => controller.abort(), 500);
    const result = await running;
    expect(result.outcome).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("runs one program per workspace at a time (the second waits for the first)", async () => {
    const first = world.run("echo start >> order; sleep 1; echo end >> order", { language: "shell" });
    const second = world.run("echo second >> order", { language: "shell" });
    await Promise.all([first, second]);
    expect(readFileSync(join(world.workspace, "order"), "utf8")).toBe("start\nend\nsecond\n");
  });
});

describe("output budget", () => {
  it("keeps head and tail within the budget whatever the chunks", () => {
    const budget = new OutputBudget(8);
    for (const piece of ["abc", "defgh", "ijklmnop", "qrstuvwxyz"]) budget.push(Buffer.from(piece));
    expect(budget.result()).toEqual({ text: "abcdef\n[… 18 bytes cut …]\nyz", bytes: 26, cut: true });
    const small = new OutputBudget(100);
    small.push(Buffer.from("short"));
    expect(small.result()).toEqual({ text: "short", bytes: 5, cut: false });
  });
});

describe("availability", () => {
  it("is off when turned off, with the reason", async () => {
    expect(await detectSandbox({ dataDir: world.dataDir, enabled: false })).toEqual({ available: false, reason: expect.stringContaining("turned off") });
  });

  it("is unavailable without bubblewrap, saying so", async () => {
    expect(await detectSandbox({ dataDir: world.dataDir, bwrap: "/nonexistent/bwrap" })).toEqual({ available: false, reason: expect.stringContaining("bubblewrap is not installed") });
  });

  it("is unavailable when bubblewrap refuses to make namespaces, naming user namespaces, and runs nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "familiar-fakebwrap-"));
    chmodSync(dir, 0o755);
    const fake = join(dir, "bwrap");
    const marker = join(dir, "ran");
    // bubblewrap's own message where unprivileged user namespaces are disabled (Debian's bwrap 0.8).
    writeFileSync(fake, `#!/bin/sh\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n`, { mode: 0o755 });
    try {
      const host = { ...findHost(), bwrap: fake };
      const runner = new SandboxRunner(host, { dataDir: world.dataDir });
      await expect(runner.run({ workspaceRoot: world.workspace, quotaBytes: 1e9, program: { kind: "code", language: "shell", code: `touch ${marker}` } })).rejects.toMatchObject({ code: "sandbox_failed", message: expect.stringContaining("user namespaces") });
      expect(() => readFileSync(marker)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("detects a working sandbox here and names the interpreters", async () => {
    const status = await detectSandbox({ dataDir: world.dataDir });
    expect(status.available).toBe(true);
    if (status.available) expect(status.runner.languages).toEqual(["javascript", "python", "shell"]);
  });
});
