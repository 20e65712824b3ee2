import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asId } from "../../core/ids.js";
import { PathJailError, Workspace, workspaceTools } from "../../sandbox/workspace/tools.js";

describe("per-person workspace (path jail)", () => {
  let dataDir: string;
  let ws: Workspace;
  const person = asId("person", "per_test");

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-ws-"));
    ws = Workspace.of(dataDir, person);
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it("writes, lists and reads files inside DATA_DIR/persons/<id>/workspace", async () => {
    expect(await ws.write("plans/friday.md", "# Banana bread")).toBe(14);
    expect(await ws.list()).toEqual(["plans/"]);
    expect(await ws.list("plans")).toEqual(["friday.md"]);
    expect(await ws.read("plans/friday.md")).toBe("# Banana bread");
    expect(ws.root).toBe(join(dataDir, "persons", "per_test", "workspace"));
  });

  it("refuses paths that leave the workspace: .., absolute, and symlinks pointing out", async () => {
    writeFileSync(join(dataDir, "secret.txt"), "not yours");
    await expect(ws.read("../../../secret.txt")).rejects.toBeInstanceOf(PathJailError);
    await expect(ws.read("/etc/passwd")).rejects.toBeInstanceOf(PathJailError);
    await expect(ws.write("a/../../escape.txt", "x")).rejects.toBeInstanceOf(PathJailError);
    mkdirSync(ws.root, { recursive: true });
    symlinkSync(dataDir, join(ws.root, "link"));
    await expect(ws.read("link/secret.txt")).rejects.toBeInstanceOf(PathJailError);
    await expect(ws.write("link/new.txt", "x")).rejects.toBeInstanceOf(PathJailError);
    // A harmless .. that stays inside is fine.
    await ws.write("a/b.txt", "ok");
    expect(await ws.read("a/../a/b.txt")).toBe("ok");
  });

  it("exposes tools that return structured errors and mark file content as untrusted", async () => {
    const [, read, write] = workspaceTools(dataDir);
    const ctx = { personId: person, taskId: null, originMessageId: null, idempotencyKey: "k", now: new Date(), signal: new AbortController().signal };
    expect(await write!.execute({ path: "notes.txt", content: "hello" }, ctx)).toMatchObject({ ok: true });
    expect(await read!.execute({ path: "notes.txt" }, ctx)).toEqual({ ok: true, content: "hello", untrusted: { source: "file notes.txt" } });
    expect(await read!.execute({ path: "../x" }, ctx)).toMatchObject({ ok: false, code: "path_outside_workspace" });
    expect(write!.policy).toMatchObject({ capability: "files.write", access: "write" });
  });
});
