/**
 * `run_code` and `run_command` in real bubblewrap: the result the model reads, taint carried into
 * the result and onto the files a run writes (and forgotten with them), the artifacts folder
 * read-only inside (a link planted in its place replaced by a real folder), and with no sandbox
 * the tools not offered and a call refused with the reason — nothing run.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../../../core/tools/index.js";
import { computerTools, detectSandbox, type SandboxStatus } from "../../../sandbox/exec/index.js";
import { FileTaints, Workspace } from "../../../sandbox/workspace/index.js";
import { sandboxWorld, type SandboxWorld } from "./helpers.js";

const PERSON = asId("person", "per_one");

let world: SandboxWorld;
let status: SandboxStatus;
let tools: Map<string, ToolDefinition>;
let step = 0;

const context = (extra: Partial<ToolContext> = {}): ToolContext => ({ personId: PERSON, taskId: null, originMessageId: null, idempotencyKey: `act:${++step}:0`, now: new Date(), signal: new AbortController().signal, ...extra });
const run = async (name: string, args: unknown, extra: Partial<ToolContext> = {}, set = tools): Promise<ToolResult> => {
  const tool = set.get(name)!;
  return tool.execute(tool.parameters.parse(args), context(extra));
};

beforeAll(async () => {
  world = await sandboxWorld();
  status = await detectSandbox({ dataDir: world.dataDir });
  tools = new Map(computerTools({ dataDir: world.dataDir, status: async () => status, current: () => status }).map((t) => [t.name, t]));
});
afterAll(() => world.cleanup());
beforeEach(() => world.reset());

describe("the computer's tools", () => {
  it("are offered here and say what the computer is, its limits and that nothing can be installed", () => {
    const code = tools.get("run_code")!;
    expect(code.offered?.(PERSON)).toBe(true);
    expect(code.description).toContain("No network at all");
    expect(code.description).toContain("nothing can be downloaded or installed");
    expect(code.description).toMatch(/Limits: wall time 30 s by default \(at most 300 s\); .*memory 512 MiB; 64 processes/);
  });

  it("returns the exit status, output and files; run_command passes arguments as they are", async () => {
    const result = await run("run_code", { language: "python", code: "open('out.txt', 'w').write('x' * 10)\nprint('hello')\nimport sys; sys.exit(4)" });
    expect(result).toMatchObject({ ok: true, data: { outcome: "exited", exitCode: 4 } });
    expect(result.ok && result.content).toMatch(/^exit 4 — /);
    expect(result.ok && result.content).toContain("stdout:\nhello");
    expect(result.ok && result.content).toContain("Files created: out.txt (10 bytes)");
    expect(result.ok && "untrusted" in result).toBe(false);
    const command = await run("run_command", { command: "wc", args: ["-c", "out.txt"] });
    expect(command.ok && command.content).toContain("10 out.txt");
  });

  it("a tainted activation's run is untrusted, and the files it writes carry the taint until they are gone", async () => {
    const taints = FileTaints.of(Workspace.of(world.dataDir, PERSON).root);
    const tainted = await run("run_code", { language: "shell", code: "echo scraped > page.txt; echo report > report.txt" }, { tainted: true, taintSource: "https://news.example/" });
    expect(tainted).toMatchObject({ ok: true, untrusted: { source: expect.stringContaining("https://news.example/") } });
    expect(await taints.of("page.txt")).toEqual({ source: "https://news.example/" });
    expect(await taints.of("report.txt")).toEqual({ source: "https://news.example/" });
    // A later, clean activation reads a workspace holding tainted files: its result is untrusted, what it writes tainted.
    const later = await run("run_code", { language: "shell", code: "cat page.txt > copy.txt" });
    expect(later).toMatchObject({ ok: true, untrusted: { source: expect.stringContaining("workspace file page.txt (https://news.example/)") } });
    expect(await taints.of("copy.txt")).toEqual({ source: expect.stringContaining("https://news.example/") });
    // Deleting the tainted files clears them; then runs are the person's own again.
    await run("run_code", { language: "shell", code: "rm page.txt report.txt copy.txt" });
    expect((await taints.all()).size).toBe(0);
    const clean = await run("run_code", { language: "shell", code: "echo mine > mine.txt" });
    expect(clean.ok && "untrusted" in clean).toBe(false);
    expect(await taints.of("mine.txt")).toBeNull();
  });

  it("the artifacts folder is read-only inside; a link planted in its place becomes a real folder", async () => {
    const ws = Workspace.of(world.dataDir, PERSON);
    mkdirSync(ws.root, { recursive: true });
    symlinkSync(world.dataDir, join(ws.root, "artifacts"));
    const result = await run("run_code", { language: "shell", code: "ls artifacts; cat artifacts/vault.json; echo x > artifacts/new.txt; echo done" });
    expect(result.ok && result.content).toContain("Read-only file system");
    expect(result.ok && result.content).not.toContain("VAULT-SECRET");
    expect(lstatSync(join(ws.root, "artifacts")).isDirectory()).toBe(true);
    await ws.write("artifacts/v1-report.md", "kept");
    const read = await run("run_code", { language: "shell", code: "cat artifacts/v1-report.md; echo changed > artifacts/v1-report.md" });
    expect(read.ok && read.content).toContain("kept");
    expect(read.ok && read.content).toContain("Read-only file system");
    expect(readFileSync(join(ws.root, "artifacts/v1-report.md"), "utf8")).toBe("kept");
  });

  it("where there is no sandbox the tools are not offered, and a call is refused with the reason — nothing runs", async () => {
    const off: SandboxStatus = { available: false, reason: "user namespaces are not allowed here" };
    const offTools = new Map(computerTools({ dataDir: world.dataDir, status: async () => off, current: () => off }).map((t) => [t.name, t]));
    expect(offTools.get("run_code")!.offered?.(PERSON)).toBe(false);
    const marker = join(Workspace.of(world.dataDir, PERSON).root, "ran.txt");
    const refused = await run("run_code", { language: "shell", code: `touch ran.txt` }, {}, offTools);
    expect(refused).toEqual({ ok: false, code: "computer_unavailable", error: "Familiar's computer is off on this host: user namespaces are not allowed here. Nothing was run." });
    expect(existsSync(marker)).toBe(false);
  });
});
