/**
 * Email across kills: the whole app runs as a child process (`node --import tsx main.ts`) against a
 * real Dovecot and Postfix, its IMAP through a TCP proxy, and is killed with SIGKILL — no shutdown
 * code runs — at two exact places:
 * - halfway through a sync of a 300-message burst (the proxy slows the server so the sync is still
 *   going): after the restart every message is recorded once, and a watch is told each matching
 *   mail exactly once;
 * - after SMTP accepted an approved reply but before its copy reached the Sent folder (the proxy
 *   holds the APPEND): after the restart the reply is in the other account's INBOX once, the repeated
 *   call sends nothing and makes the Sent copy, and no second card is shown.
 * And the mail server killed while the app holds IMAP IDLE: the app reconnects (back to IDLE), and
 * mail written while the server was down and after it came back is recorded and told once.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import type { LocalReply } from "../helpers/app.js";
import { freePort, startChild, type ChildApp } from "../helpers/child.js";
import { lastTool, sleep } from "../helpers/e2e.js";
import { eventually as until } from "../helpers/mail/app.js";
import { fillMaildir } from "../helpers/mail/maildir.js";
import { postfixUnavailable, settingsFor, startMailServers, testMail, type MailServers } from "../helpers/mail/servers.js";
import { startTcpProxy, type TcpProxy } from "../helpers/mail/tcp-proxy.js";

const noPostfix = postfixUnavailable();
let servers: MailServers;
let model: FakeOpenAIServer;
let script: ((r: RecordedRequest) => ReturnType<typeof text> | null) | null = null;
let proxy: TcpProxy | null = null;
const children: ChildApp[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  [servers, model] = await Promise.all([startMailServers(), startFakeOpenAI({ fallback: (r) => script?.(r) ?? text("ok") })]);
}, 90_000);

afterEach(async () => {
  script = null;
  for (const c of children.splice(0)) await c.kill().catch(() => undefined);
  await proxy?.close();
  proxy = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

afterAll(async () => {
  await Promise.all([servers?.close(), model?.close()]);
});

const ana = () => servers.accounts[0];
const ben = () => servers.accounts[1];

/**
 * A child's settings: ana's mailbox (IMAP through the proxy) with `capabilities`, short sync sessions.
 * `plainImap`: IMAP without TLS (allowed on loopback), so the proxy can read the commands.
 */
async function childEnv(capabilities: string[], imapPort: number, plainImap = false): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-mail-kill-"));
  dirs.push(dataDir);
  const s = settingsFor(servers, ana(), { imapPort });
  const config = join(dataDir, "config.json");
  writeFileSync(config, JSON.stringify({ connections: [{ person: "local:ana", kind: "email", password: "env:ANA_MAIL_PASSWORD", capabilities, address: s.address, name: "Ana", imap: plainImap ? { ...s.imap, tls: "none" } : s.imap, smtp: s.smtp }] }));
  return {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    OPENAI_BASE_URL: model.url,
    FAMILIAR_CONFIG: config,
    ANA_MAIL_PASSWORD: ana().password,
    NOTIFY_MODEL_JUDGEMENT: "false",
    EMAIL_SYNC_SESSION_MS: "3000",
    EMAIL_WATCHDOG_MS: "1000",
    EMAIL_POLL_MS: "500",
  };
}

async function start(env: Record<string, string>): Promise<ChildApp> {
  const child = await startChild(env, "main.ts", 60_000);
  children.push(child);
  return child;
}

/** Reads the child's SQLite file (WAL: a reader beside the writing process). */
function readDb<T>(env: Record<string, string>, read: (db: Database.Database) => T): T {
  const db = new Database(join(env.DATA_DIR!, "familiar.db"), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

interface Row {
  key: string;
  kind: string;
  data: string;
}
const changes = (env: Record<string, string>, kind: string): Row[] => readDb(env, (db) => db.prepare("SELECT key, kind, data FROM connection_changes WHERE kind = ? ORDER BY seq").all(kind) as Row[]);
/** The mailbox's status as the sync last wrote it (the Connections page's). */
const statusOf = (env: Record<string, string>) => readDb(env, (db) => JSON.parse((db.prepare("SELECT status FROM connections WHERE kind = 'email'").get() as { status: string }).status) as { mode: string; lastError: string | null });
const subjectOf = (r: Row) => (JSON.parse(r.data) as { subject: string }).subject;

async function say(child: ChildApp, user: string, message: string): Promise<void> {
  const res = await fetch(`${child.url}/api/local/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user, text: message }) });
  expect(res.status).toBe(202);
}

async function messages(child: () => ChildApp, user: string): Promise<LocalReply[]> {
  try {
    const res = await fetch(`${child().url}/api/local/messages?user=${user}`);
    return ((await res.json()) as { messages: LocalReply[] }).messages;
  } catch {
    return []; // restarting
  }
}

async function messagesUntil(child: () => ChildApp, user: string, done: (ms: LocalReply[]) => boolean, timeoutMs = 30_000): Promise<LocalReply[]> {
  let last: LocalReply[] = [];
  await until(async () => done((last = await messages(child, user))), `messages to ${user}`, timeoutMs).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; have ${JSON.stringify(last.map((m) => m.text.slice(0, 100)))}`);
  });
  return last;
}

/** The burst: 300 messages, three of them from the school about tryouts (at 50, 150 and 250). */
const burstTryouts: Record<number, string> = { 50: "Tryouts start Saturday at ten", 150: "Tryouts need a signed health form", 250: "Tryouts for goalkeepers are on Monday" };
const burstSubject = (i: number) => burstTryouts[i] ?? `Shop notice ${i}`;
function burstMail(i: number, at: Date): string {
  const tryouts = i in burstTryouts;
  return testMail(burstSubject(i), { from: tryouts ? "Coach <coach@school.example>" : `Shop <news${i % 7}@shop.example>`, id: `<burst-${i}@outside.test>`, body: `Message ${i} of the burst, ${at.toISOString()}.` });
}

/** The model: "tell me when the school writes about tryouts" makes a watch; each wake tells the subject. */
const watchScript = (r: RecordedRequest) => {
  const wake = r.messages.find((m) => typeof m.content === "string" && m.content.includes("A new mail matched"));
  if (wake && lastTool(r) === null) return text(`Tryouts mail: ${/Subject: (.*)/.exec(String(wake.content))?.[1] ?? "?"}`);
  if (lastTool(r) === null && r.lastUserText?.includes("tryouts")) return toolCall("email_watch", { note: "Tell Ana about school mail on tryouts", filter: { from: ["school.example"], subjectContains: ["tryouts"] } });
  return text("Watching.");
};
const toldTryouts = (ms: LocalReply[]) => ms.filter((m) => m.text.startsWith("Tryouts mail:")).map((m) => m.text);

describe.skipIf(noPostfix !== null)("email across SIGKILL", () => {
  it("a kill halfway through a sync loses no mail and announces none twice; the watch is told each match once", async () => {
    proxy = await startTcpProxy(servers.imap.port);
    const env = await childEnv(["read"], proxy.port);
    script = watchScript;
    let child = await start(env);
    const current = () => child;
    await say(child, "ana", "Tell me when the school writes about tryouts");
    await messagesUntil(current, "ana", (ms) => ms.some((m) => m.text === "Watching."));

    proxy.throttle(12_000);
    await fillMaildir(servers.dovecot, ana(), 300, 0, burstMail);
    await until(() => changes(env, "email.arrived").length >= 40, "the first part of the burst to be recorded", 60_000);
    await child.kill();
    const atKill = changes(env, "email.arrived").length;
    // Killed halfway: part of the burst recorded, the rest still on its way.
    expect(atKill).toBeGreaterThanOrEqual(40);
    expect(atKill).toBeLessThan(300);

    proxy.throttle(null);
    child = await start(env);
    await until(() => changes(env, "email.arrived").length === 300, "the whole burst to be recorded after the restart", 60_000);
    const told = await messagesUntil(current, "ana", (ms) => ms.filter((m) => m.text.startsWith("Tryouts mail:")).length >= 3, 60_000);
    await sleep(4_000); // more sync sessions: nothing new, nothing twice
    const recorded = changes(env, "email.arrived");
    expect(recorded).toHaveLength(300);
    expect(new Set(recorded.map((r) => r.key)).size).toBe(300);
    expect(new Set(recorded.map(subjectOf))).toEqual(new Set(Array.from({ length: 300 }, (_, i) => burstSubject(i))));
    const after = (await messages(current, "ana")).filter((m) => m.text.startsWith("Tryouts mail:")).map((m) => m.text);
    expect(after.sort()).toEqual(["Tryouts mail: Tryouts for goalkeepers are on Monday", "Tryouts mail: Tryouts need a signed health form", "Tryouts mail: Tryouts start Saturday at ten"]);
    expect(told.filter((m) => m.text.startsWith("Tryouts mail:"))).toHaveLength(3);
  }, 240_000);

  it("a kill after SMTP accepted an approved reply, before its Sent copy: delivered once, not resent after the restart, the Sent copy made", async () => {
    proxy = await startTcpProxy(servers.imap.port);
    const env = await childEnv(["read", "send"], proxy.port, true);
    let child = await start(env);
    const current = () => child;
    await servers.deliver(ana().address, testMail("Dinner on Saturday?", { from: `Ben <${ben().address}>`, id: "<dinner-sat@example.test>", body: "Shall we have dinner on Saturday?" }));
    await until(() => changes(env, "email.arrived").length === 1, "the mail to be recorded", 30_000);
    const ref = (JSON.parse(changes(env, "email.arrived")[0]!.data) as { ref: string }).ref;

    const reply = "Yes, Saturday at 8 works. See you then.";
    script = (r) => {
      const last = lastTool(r);
      const note = r.messages.at(-1);
      if (note?.role === "system" && typeof note.content === "string" && /approved/.test(note.content)) return toolCall("email_reply", { id: ref, body: reply });
      // A call cut short by the kill: the model checks by asking again (the tool knows whether it went out).
      if (last === null || /interrupted/.test(last)) return toolCall("email_reply", { id: ref, body: reply });
      return text(/approval_required/.test(last) ? "I need your OK first." : `Result: ${last.slice(0, 300)}`);
    };
    await say(child, "ana", "Tell Ben yes for Saturday");
    const withCard = await messagesUntil(current, "ana", (ms) => ms.some((m) => (m.buttons?.length ?? 0) > 0));
    const card = withCard.find((m) => (m.buttons?.length ?? 0) > 0)!;
    expect(card.text).toContain(reply);

    // The first APPEND of the operations session is the Sent copy: held, so the process is caught after the send.
    const held = proxy.holdWhen(/ APPEND /i);
    const approve = card.buttons!.find((b) => b.label.startsWith("Approve once"))!;
    const pressed = await fetch(`${child.url}/api/local/actions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: "ana", messageId: card.id, buttonId: approve.id }) });
    expect(pressed.status).toBe(202);
    await Promise.race([held, sleep(30_000).then(() => { throw new Error(`no APPEND was held; the child said:\n${child.output.join("").slice(-6000)}`); })]);
    expect(changes(env, "email.sent")).toHaveLength(1);
    await child.kill();
    await until(async () => (await servers.subjects(ben())).includes("Re: Dinner on Saturday?"), "the reply in ben's INBOX", 30_000);
    expect(await servers.subjects(ana(), "Sent")).toEqual([]);

    child = await start(env);
    const after = await messagesUntil(current, "ana", (ms) => ms.some((m) => m.text.startsWith("Result:")), 60_000);
    expect(after.find((m) => m.text.startsWith("Result:"))!.text).toMatch(/already_sent|already went out/);
    await sleep(2_000);
    expect((await servers.subjects(ben())).filter((s) => s === "Re: Dinner on Saturday?")).toHaveLength(1);
    expect(await servers.subjects(ana(), "Sent")).toEqual(["Re: Dinner on Saturday?"]);
    // One card only (the decided card loses its buttons; each card shows the whole body).
    expect((await messages(current, "ana")).filter((m) => m.text.includes(reply))).toHaveLength(1);
    expect(changes(env, "email.sent")).toHaveLength(1);
  }, 180_000);

  it("the mail server killed mid-IDLE: the app reconnects to IDLE, and mail from while it was down and after is recorded and told once", async () => {
    const env = await childEnv(["read"], servers.imap.port);
    script = watchScript;
    const child = await start(env);
    const current = () => child;
    await say(child, "ana", "Tell me when the school writes about tryouts");
    await messagesUntil(current, "ana", (ms) => ms.some((m) => m.text === "Watching."));
    await until(() => statusOf(env).mode === "idle", "IMAP IDLE", 30_000);
    await servers.deliver(ana().address, testMail("Tryouts: bring shin pads and water", { from: "Coach <coach@school.example>" }));
    await messagesUntil(current, "ana", (ms) => toldTryouts(ms).length === 1);

    await servers.dovecot.kill();
    await until(() => statusOf(env).mode === "waiting" && statusOf(env).lastError !== null, "the app to notice the server is gone", 30_000);
    // Mail that reached the mailbox while the server was down (written straight into its Maildir).
    await fillMaildir(servers.dovecot, ana(), 4, 2_000, (i, at) => (i === 2_001 ? testMail("Tryouts moved to the park on Tuesday", { from: "Coach <coach@school.example>", id: `<down-${i}@outside.test>` }) : burstMail(i, at)));
    await servers.dovecot.start();
    await servers.deliver(ana().address, testMail("Tryouts results go up on Friday", { from: "Coach <coach@school.example>" }));
    await until(() => changes(env, "email.arrived").length === 6, "the mail from while the server was down and after", 60_000);
    await until(() => statusOf(env).mode === "idle", "IMAP IDLE again", 30_000);
    // (The subjects differ in more than a word: the notification filter drops a message that says nothing new.)
    await messagesUntil(current, "ana", (ms) => toldTryouts(ms).length === 3, 60_000);
    await sleep(4_000); // more sessions and passes: nothing twice
    const recorded = changes(env, "email.arrived");
    expect(recorded).toHaveLength(6);
    expect(new Set(recorded.map((r) => r.key)).size).toBe(6);
    expect(toldTryouts(await messages(current, "ana")).sort()).toEqual(["Tryouts mail: Tryouts moved to the park on Tuesday", "Tryouts mail: Tryouts results go up on Friday", "Tryouts mail: Tryouts: bring shin pads and water"]);
  }, 180_000);
});
