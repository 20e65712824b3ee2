/**
 * Familiar killed (SIGKILL) while one of its sandboxes runs: the real app in a child process, real
 * bubblewrap, a scripted model. The run dies with Familiar (bubblewrap's --die-with-parent), so no
 * sandbox process outlives it; after the restart the interrupted activation resumes, the model is
 * told the run was interrupted and its outcome unknown (the journal), the program is not started a
 * second time, and the person's message and the answer are both there — nothing lost.
 *
 * The sandboxes run as their own uid (COMPUTER_UID) so the processes counted here are this test's.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../fakes/openai-server.js";
import type { LocalReply } from "../helpers/app.js";
import { freePort, startChild, type ChildApp } from "../helpers/child.js";
import { lastTool, sleep } from "../helpers/e2e.js";
import { liveSandboxProcesses } from "../sandbox/exec/helpers.js";

const SANDBOX_UID = 61917;
const JOB = { command: "sh", args: ["-c", "echo run >> ran.txt; exec sleep 600"], timeoutSeconds: 300 };

async function messages(base: string, user: string): Promise<LocalReply[]> {
  const res = await fetch(`${base}/api/local/messages?user=${user}`);
  return ((await res.json()) as { messages: LocalReply[] }).messages;
}

/** Polls `probe` (errors count as "not yet": the process may be restarting) until it holds. */
async function eventually(probe: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe("Familiar killed in the middle of a sandbox run", () => {
  let model: FakeOpenAIServer | null = null;
  const children: ChildApp[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    for (const c of children.splice(0)) await c.kill().catch(() => undefined);
    await model?.close();
    model = null;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("leaves no sandbox process behind; after the restart the run is reported as interrupted, not run again, and nothing is lost", async () => {
    model = await startFakeOpenAI({
      fallback: (r) => {
        const tool = lastTool(r);
        if (tool === null) return r.lastUserText?.includes("long job") ? toolCall("run_command", JOB) : text("ok");
        if (tool.includes("interrupted")) return text("The long job was cut short by a restart, so I did not start it again.");
        return text(`unexpected: ${tool.slice(0, 200)}`);
      },
    });
    const dataDir = mkdtempSync(join(tmpdir(), "familiar-exec-kill-"));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), OPENAI_BASE_URL: model.url, COMPUTER_UID: String(SANDBOX_UID) };
    let child = await startChild(env);
    children.push(child);
    await fetch(`${child.url}/api/local/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: "ana", text: "start the long job" }) });

    // The job is running in its sandbox: it wrote its mark and sleeps.
    const ran = () => {
      const persons = join(dataDir, "persons");
      if (!existsSync(persons)) return "";
      for (const name of readdirSync(persons)) {
        const file = join(persons, name, "workspace", "ran.txt");
        if (existsSync(file)) return readFileSync(file, "utf8");
      }
      return "";
    };
    await eventually(() => ran() === "run\n" && liveSandboxProcesses(SANDBOX_UID) > 0, "the job to run in its sandbox", 60_000);
    expect(model.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(0);

    await child.kill();
    // No sandbox process outlives Familiar (bubblewrap and its init are left as zombies for process 1 to reap).
    await eventually(() => liveSandboxProcesses(SANDBOX_UID) === 0, "every sandbox process to end with Familiar", 10_000);

    child = await startChild(env);
    children.push(child);
    const base = child.url;
    await eventually(async () => (await messages(base, "ana")).some((m) => m.text.includes("cut short by a restart")), "the answer after the restart", 90_000);

    // The model read the call's outcome as interrupted and unknown; the program was not started again.
    const results = model.requests.map(lastTool).filter((t): t is string => t !== null);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/interrupted, outcome unknown/);
    expect(model.requests.flatMap((r) => r.messages).filter((m) => m.role === "assistant" && m.tool_calls?.some((c) => c.type === "function" && c.function.name === "run_command")).length).toBeGreaterThan(0);
    await sleep(1000);
    expect(ran()).toBe("run\n");
    expect(liveSandboxProcesses(SANDBOX_UID)).toBe(0);
    // Nothing lost: the person's message and the answer are in the conversation, once each.
    const history = await (await fetch(`${base}/api/local/messages?user=ana`)).json() as { messages: LocalReply[] };
    expect(history.messages.filter((m) => m.text.includes("cut short by a restart"))).toHaveLength(1);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  }, 180_000);
});

