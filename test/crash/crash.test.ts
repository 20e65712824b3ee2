import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { freePort, startChild, type ChildApp } from "../helpers/child.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ACTIVATIONS = 50;

/**
 * A child process runs 50 activations, each with a side-effecting tool call, and is killed (SIGKILL)
 * at random points again and again. Afterwards, checked from the stores and the outside ledger: no
 * inbound message is lost, no outbound message or side effect is duplicated, and every task ended
 * in a terminal or waiting state.
 */
describe("crash test: 50 activations under repeated SIGKILL", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-crash-"));
  const ledger = join(dataDir, "effects.jsonl");
  let model: FakeOpenAIServer;
  let child: ChildApp | null = null;

  afterAll(async () => {
    await child?.kill().catch(() => undefined);
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("loses no message and duplicates no effect or reply", async () => {
    // The scripted model: "do N" → record_effect(N); after its result → "done N" (or, when the
    // journal reports the call was interrupted, "unknown N" without calling it again).
    model = await startFakeOpenAI({
      fallback: async (r) => {
        await sleep(Math.random() * 60);
        const last = r.messages.at(-1);
        const label = /\bdo (\d+)\b/.exec(r.lastUserText ?? "")?.[1] ?? "?";
        if (last?.role === "tool") {
          const content = String(last.content);
          return text(content.includes("interrupted") ? `unknown ${label}` : `done ${label}`);
        }
        return toolCall("record_effect", { label });
      },
    });
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), OPENAI_BASE_URL: model.url, CRASH_LEDGER: ledger, LOG_LEVEL: "info" };
    const start = async () => (child = await startChild(env, "test/crash/worker.ts"));
    await start();

    let kills = 0;
    let killer = true;
    // Kill at random points while work is going on (at most 12 times), then restart at once.
    const chaos = (async () => {
      while (killer && kills < 12) {
        await sleep(400 + Math.random() * 2_000);
        if (!killer) break;
        await child!.kill();
        kills++;
        await start();
      }
    })();

    const post = async (n: number) => {
      for (;;) {
        try {
          const res = await fetch(`${child!.url}/api/local/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ user: "crash", text: `do ${n}`, clientMessageId: `m${n}` }),
          });
          if (res.status === 202) return;
        } catch {
          // restarting
        }
        await sleep(100);
      }
    };
    const answered = async (n: number) => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        try {
          const res = await fetch(`${child!.url}/api/local/messages?user=crash`);
          const body = (await res.json()) as { messages: { text: string }[] };
          if (body.messages.some((m) => m.text === `done ${n}` || m.text === `unknown ${n}`)) return;
        } catch {
          // restarting
        }
        await sleep(100);
      }
      throw new Error(`message ${n} was not answered`);
    };

    for (let n = 1; n <= ACTIVATIONS; n++) {
      await post(n);
      await answered(n);
    }
    killer = false;
    await chaos;
    const code = await child!.stop();
    child = null;
    expect(code).toBe(0);
    expect(kills).toBeGreaterThan(3);

    // Check everything from the stores and the ledger.
    const store = openSqliteStore({ path: join(dataDir, "familiar.db") });
    try {
      const identity = (await store.persons.findIdentity("local", "crash"))!;
      const conversation = await store.conversation.listMessagesAfter(identity.personId, 0, 10_000);
      const userTexts = conversation.filter((m) => m.role === "user").map((m) => m.text);
      expect(userTexts).toEqual(Array.from({ length: ACTIVATIONS }, (_, i) => `do ${i + 1}`));

      const replies = (await store.localMailbox.listLocalMessages("crash", 0, 10_000)).map((m) => m.text);
      expect(new Set(replies).size).toBe(replies.length);
      for (let n = 1; n <= ACTIVATIONS; n++) expect(replies.filter((t) => t === `done ${n}` || t === `unknown ${n}`)).toHaveLength(1);

      const effects = existsSync(ledger) ? readFileSync(ledger, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { label: string }) : [];
      const perLabel = new Map<string, number>();
      for (const e of effects) perLabel.set(e.label, (perLabel.get(e.label) ?? 0) + 1);
      expect([...perLabel.values()].filter((c) => c > 1)).toEqual([]);
      // Every "done N" reply had its effect happen.
      for (let n = 1; n <= ACTIVATIONS; n++) if (replies.includes(`done ${n}`)) expect(perLabel.get(String(n))).toBe(1);

      const open = await store.tasks.listTasks({ status: ["pending", "running"] }, { limit: 500 });
      expect(open.items).toEqual([]);
      const undelivered = await store.outbox.listOutbound(identity.personId, { limit: 500, status: ["queued", "sending"] });
      expect(undelivered.items).toEqual([]);
    } finally {
      await store.close();
    }
  }, 600_000);
});
