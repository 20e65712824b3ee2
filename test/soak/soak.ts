/**
 * The soak: the real product in a child process, SIGKILLed at random moments (mid model call, mid
 * tool call, mid delivery) while local-chat and Telegram users talk to it, with inbound delivered at
 * least once (the local chat retries a POST until it is accepted; Telegram redelivers an update until
 * its offset is confirmed). A scripted model pays bills (a side effect recorded by an outside ledger),
 * schedules reminders and echoes. It words reminders like a real model (issue 18): the confirmation
 * restates the reminder ("Scheduled: pay invoice INV-2231 (r7) at 19:00:05.", "Got it: stretch
 * (r9)."), and the wake-up says it again in other words ("Stretch (r9)!") or only "[SILENT]". Afterwards everything is checked from the outside: what each user
 * received, the ledger, and the stores.
 *
 * Figures: messages sent, lost (never answered nor covered by a "may not have arrived" notice),
 * duplicated answers, duplicated side effects, reminders missing / duplicated / later than the bound.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { repeatMark, uncertainNotice } from "../../core/outbox/delivery.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { freePort, startChild, type ChildApp } from "../helpers/child.js";

export interface SoakOptions {
  durationMs: number;
  seed: number;
  /** Local-chat users and Telegram users. */
  localUsers: number;
  telegramUsers: number;
  /** Gap between two messages of one user, ms (uniform in [min, max]). */
  messageGapMs: [number, number];
  /** Gap between kills, ms (uniform in [min, max]). */
  killGapMs: [number, number];
  /** How late a reminder may arrive after its due time and still count as on time, ms. */
  lateBoundMs: number;
  log?: (line: string) => void;
  /** The worker to run: the sources (default, through tsx) or a built bundle of test/soak/worker.ts. */
  workerEntry?: string;
}

export interface SoakReport {
  seed: number;
  durationMs: number;
  kills: number;
  messages: number;
  answered: number;
  lost: string[];
  uncertain: string[];
  duplicatedAnswers: string[];
  payments: number;
  duplicatedPayments: string[];
  reminders: number;
  remindersMissing: string[];
  remindersDuplicated: string[];
  /** Reminders later than the bound while a process was up (`lateMs`); `wallLateMs` includes downtime. */
  remindersLate: { label: string; lateMs: number; wallLateMs: number }[];
  /** Most a reminder was late while a process was up, and on the wall clock (downtime included). */
  maxReminderLateMs: number;
  maxReminderWallLateMs: number;
  lateBoundMs: number;
  restartToHealthyMsAvg: number;
  /** For every label with a finding: the messages the users received that mention it. */
  evidence: Record<string, string[]>;
}

/** mulberry32: a small seeded PRNG (the soak's schedule of messages and kills is reproducible). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A message's label in a reply (`m12`), and a reminder's (`r12`) in the reminder itself. The
 * confirmation that scheduled a reminder restates it, label included, but it answers a message (it
 * names `m12`): a text naming a message label is an answer, never a reminder's delivery.
 */
const MESSAGE = /\b(m\d+)\b/g;
const REMINDER = /\b(r\d+)\b/g;
const labelsIn = (text: string): string[] => {
  const messages = [...text.matchAll(MESSAGE)].map((m) => m[1]!);
  return [...new Set(messages.length > 0 ? messages : [...text.matchAll(REMINDER)].map((m) => m[1]!))];
};

/** What people ask to be reminded of (issue 18: "pay invoice INV-2231", "stretch"). */
const subjects = [(n: number) => `pay invoice INV-${2200 + n}`, () => "stretch", () => "call the dentist", () => "take the blue pill", () => "water the tomatoes"];
/**
 * How a real model confirms a reminder: restating it ("Scheduled: pay invoice INV-2231 at 19:00.",
 * "Got it: stretch."), and how it words the reminder when it wakes up ("Reminder: pay invoice
 * INV-2231.", "Stretch!") — or, now and then, answers with a silence token or a no-news marker.
 */
const confirmations = [
  (note: string, at: string) => `Scheduled: ${note} at ${at}.`,
  (note: string) => `Got it: ${note}.`,
  (note: string, at: string) => `Okay — at ${at} I'll remind you to ${note}.`,
  (note: string) => `Reminder set: ${note}.`,
];
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const reminderWordings = [
  (note: string) => `Reminder: ${note}.`,
  (note: string) => `${capital(note)}!`,
  (note: string) => `Time to ${note}.`,
  (note: string) => `Don't forget: ${note}.`,
  (note: string) => `Reminder: ${note}.`,
  (note: string) => `${capital(note)}!`,
  () => "[SILENT]",
  () => "NOTHING_TO_REPORT",
];
const pick = <T>(list: readonly T[], random: () => number): T => list[Math.floor(random() * list.length)]!;

/** The scripted model: pays, schedules reminders, echoes — naming every label it answers. */
function soakModel(random: () => number, due: Map<string, number>): Promise<FakeOpenAIServer> {
  return startFakeOpenAI({
    fallback: async (r: RecordedRequest) => {
      await sleep(random() * 250);
      const last = r.messages.at(-1);
      if (last?.role === "system" && typeof last.content === "string" && last.content.startsWith("Runtime:")) {
        const note = /scheduled wake-up "([^"]*\(r\d+\))"/.exec(last.content)?.[1];
        if (note) return text(pick(reminderWordings, random)(note));
      }
      // The person's messages this turn answers: the user messages after the last assistant message.
      let i = r.messages.length - 1;
      while (i >= 0 && r.messages[i]!.role !== "user") i--;
      const block: string[] = [];
      for (let j = i; j >= 0 && r.messages[j]!.role === "user"; j--) block.unshift(String(r.messages[j]!.content));
      if (last?.role === "tool") {
        // The results of the latest calls: the tool messages after the last assistant message.
        let a = r.messages.length - 1;
        while (a >= 0 && r.messages[a]!.role === "tool") a--;
        const tools = r.messages.slice(a + 1);
        // A call whose run was cut short and rolled back is made again.
        const again = tools.filter((m) => String(m.content).includes("not run")).flatMap((m) => {
          const id = m.role === "tool" ? m.tool_call_id : "";
          const call = r.messages.flatMap((x) => (x.role === "assistant" && x.tool_calls ? x.tool_calls : [])).find((c) => c.id === id);
          return call && call.type === "function" ? [{ name: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, unknown> }] : [];
        });
        if (again.length > 0) return toolCalls(again);
        const results = tools.map((m) => String(m.content));
        const unknown = results.some((c) => c.includes("interrupted"));
        const labels = block.flatMap((t) => [...t.matchAll(MESSAGE)].map((m) => m[1]!));
        // The reminders just scheduled, restated the way a model confirms them.
        const scheduled = r.messages[a];
        const confirmed = (scheduled?.role === "assistant" && scheduled.tool_calls ? scheduled.tool_calls : []).flatMap((c) => {
          if (c.type !== "function" || c.function.name !== "schedule_wakeup") return [];
          const args = JSON.parse(c.function.arguments) as { note: string; at: string };
          return [pick(confirmations, random)(args.note, args.at.slice(11, 19))];
        });
        return text(`${[...confirmed, ""].join(" ")}${unknown ? "some payments have an unknown outcome; " : ""}done ${labels.join(" ")}`);
      }
      const calls: { name: string; args: Record<string, unknown> }[] = [];
      for (const t of block) {
        const pay = /^pay (m\d+)/.exec(t);
        if (pay) calls.push({ name: "pay", args: { label: pay[1]! } });
        const remind = /^remind (m\d+) as (r\d+) in (\d+)s: (.+)$/.exec(t);
        if (remind) {
          const at = Date.now() + Number(remind[3]) * 1000;
          due.set(remind[2]!, at);
          calls.push({ name: "schedule_wakeup", args: { note: `${remind[4]} (${remind[2]})`, at: new Date(at).toISOString(), notify: "always" } });
        }
      }
      if (calls.length > 0) return toolCalls(calls);
      const labels = block.flatMap((t) => [...t.matchAll(MESSAGE)].map((m) => m[1]!));
      return text(`echo ${labels.join(" ")}`);
    },
  });
}

/** Runs the soak and returns its figures (never throws for a finding: the caller judges the report). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const random = prng(options.seed);
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-soak-"));
  const ledger = join(dataDir, "ledger.jsonl");
  const due = new Map<string, number>();
  const model = await soakModel(prng(options.seed + 1), due);
  const telegram = await FakeTelegramApi.start();
  const telegramIds = Array.from({ length: options.telegramUsers }, (_, i) => 5_000 + i);
  const env = {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    OPENAI_BASE_URL: model.url,
    SOAK_LEDGER: ledger,
    LOG_LEVEL: "info",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    ALLOW_FROM: telegramIds.map((id) => `telegram:${id}`).join(","),
    WAKEUP_GRACE_MS: "3600000",
    // Each soak user asks for far more reminders an hour than a person would; the cap on asked-for
    // notifications (default 10 an hour) is a filter rule, not durability, so it is raised here.
    NOTIFY_ASKED_FOR_PER_HOUR: "1000",
  };
  let child: ChildApp | null = null;
  const restarts: number[] = [];
  /** When no process was serving: from a kill until the next process was ready. */
  const downtime: [number, number][] = [];
  const start = async () => {
    const t = Date.now();
    child = await startChild(env, options.workerEntry ?? "test/soak/worker.ts", 60_000);
    restarts.push(Date.now() - t);
    downtime.push([t, Date.now()]);
  };
  await start();

  const sent: { label: string; user: string; kind: "hi" | "pay" | "remind"; reminder?: string }[] = [];
  let running = true;
  let kills = 0;
  let counter = 0;
  const started = Date.now();

  const chaos = (async () => {
    while (running) {
      await sleep(options.killGapMs[0] + random() * (options.killGapMs[1] - options.killGapMs[0]));
      if (!running) break;
      await child!.kill();
      kills++;
      await start();
      if (kills % 25 === 0) log(`soak: ${kills} kills, ${sent.length} messages, ${Math.round((Date.now() - started) / 1000)} s`);
    }
  })();

  const compose = (): { text: string; label: string; kind: "hi" | "pay" | "remind"; reminder?: string } => {
    const label = `m${++counter}`;
    const roll = random();
    if (roll < 0.25) return { text: `pay ${label}`, label, kind: "pay" };
    if (roll < 0.4) {
      const reminder = `r${counter}`;
      return { text: `remind ${label} as ${reminder} in ${2 + Math.floor(random() * 8)}s: ${pick(subjects, random)(counter)}`, label, kind: "remind", reminder };
    }
    return { text: `hi ${label}`, label, kind: "hi" };
  };

  const localUser = async (user: string) => {
    while (running) {
      const m = compose();
      sent.push({ label: m.label, user, kind: m.kind, ...(m.reminder && { reminder: m.reminder }) });
      // At least once: retried with the same client message id until accepted.
      for (;;) {
        try {
          const res = await fetch(`${child!.url}/api/local/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ user, text: m.text, clientMessageId: m.label }),
            signal: AbortSignal.timeout(5_000),
          });
          if (res.status === 202) break;
        } catch {
          // restarting
        }
        await sleep(100);
      }
      await sleep(options.messageGapMs[0] + random() * (options.messageGapMs[1] - options.messageGapMs[0]));
    }
  };

  const telegramUser = async (id: number) => {
    while (running) {
      const m = compose();
      sent.push({ label: m.label, user: `tg:${id}`, kind: m.kind, ...(m.reminder && { reminder: m.reminder }) });
      telegram.push(updates.text(id, m.text));
      await sleep(options.messageGapMs[0] + random() * (options.messageGapMs[1] - options.messageGapMs[0]));
    }
  };

  const users = [
    ...Array.from({ length: options.localUsers }, (_, i) => localUser(`soak${i}`)),
    ...telegramIds.map((id) => telegramUser(id)),
  ];
  await sleep(options.durationMs);
  running = false;
  await Promise.all(users);
  await chaos;
  log(`soak: load stopped after ${kills} kills; letting the last process finish`);

  // Quiescence: the last process answers everything due (reminders included), then stops cleanly.
  const lastDue = Math.max(0, ...due.values());
  const settleUntil = Math.max(Date.now() + 20_000, lastDue + options.lateBoundMs + 5_000);
  const answeredLabels = () => deliveredTexts(dataDir, telegram).flatMap((t) => labelsIn(t.text));
  while (Date.now() < settleUntil) {
    const got = new Set(answeredLabels());
    if (sent.every((s) => got.has(s.label) && (!s.reminder || got.has(s.reminder)))) break;
    await sleep(500);
  }
  await child!.stop();
  child = null;

  const report = check(dataDir, telegram, ledger, sent, due, options, kills, restarts, downtime.slice(1));
  await telegram.close();
  await model.close();
  // Kept for a post-mortem when anything went wrong.
  if (Object.keys(report.evidence).length === 0) rmSync(dataDir, { recursive: true, force: true });
  else log(`soak: findings; data kept in ${dataDir}`);
  return report;
}

interface Delivered {
  text: string;
  at: number;
}

/** Everything the users received: the local mailbox (read from the store) and the fake Telegram's messages. */
function deliveredTexts(dataDir: string, telegram: FakeTelegramApi): Delivered[] {
  const out: Delivered[] = telegram.messages.map((m) => ({ text: m.text, at: m.at }));
  const path = join(dataDir, "familiar.db");
  if (!existsSync(path)) return out;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    for (const row of db.prepare("SELECT text, at FROM local_messages WHERE user NOT LIKE 'log:%'").all() as { text: string; at: number }[]) out.push({ text: row.text, at: row.at });
  } catch {
    // the table is being created
  } finally {
    db.close();
  }
  return out;
}

function check(
  dataDir: string,
  telegram: FakeTelegramApi,
  ledger: string,
  sent: { label: string; kind: string; reminder?: string }[],
  due: Map<string, number>,
  options: SoakOptions,
  kills: number,
  restarts: number[],
  downtime: [number, number][],
): SoakReport {
  /** How late `at` is after `due`, not counting the time no process was up (nothing can run then). */
  const upLate = (due: number, at: number): number =>
    at - due - downtime.reduce((sum, [from, to]) => sum + Math.max(0, Math.min(to, at) - Math.max(from, due)), 0);
  const delivered = deliveredTexts(dataDir, telegram);
  // A part sent again after a kill cut its send is headed by repeatMark: an announced repeat, counted
  // only when the first send of it never arrived.
  const answers = delivered.filter((d) => d.text !== uncertainNotice && !d.text.startsWith(repeatMark));
  const countOf = new Map<string, number>();
  const firstAt = new Map<string, number>();
  for (const d of answers) {
    for (const label of labelsIn(d.text)) {
      countOf.set(label, (countOf.get(label) ?? 0) + 1);
      if (!firstAt.has(label) || d.at < firstAt.get(label)!) firstAt.set(label, d.at);
    }
  }
  for (const d of delivered.filter((m) => m.text.startsWith(repeatMark))) {
    for (const label of labelsIn(d.text)) {
      if (countOf.has(label)) continue;
      countOf.set(label, 1);
      firstAt.set(label, d.at);
    }
  }
  // Replies whose delivery was cut by a kill on a platform that cannot be asked: the person was told.
  const db = new Database(join(dataDir, "familiar.db"), { readonly: true });
  const uncertainRows = db.prepare("SELECT text FROM outbox WHERE json_array_length(json_extract(progress, '$.uncertain')) > 0").all() as { text: string }[];
  db.close();
  const uncertain = new Set(uncertainRows.flatMap((r) => labelsIn(r.text)));

  const lost = sent.filter((s) => !countOf.has(s.label) && !uncertain.has(s.label)).map((s) => s.label);
  const duplicatedAnswers = sent.filter((s) => (countOf.get(s.label) ?? 0) > 1).map((s) => s.label);
  const payments = existsSync(ledger) ? readFileSync(ledger, "utf8").trim().split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { label: string }).label) : [];
  const paid = new Map<string, number>();
  for (const p of payments) paid.set(p, (paid.get(p) ?? 0) + 1);
  const reminders = sent.filter((s) => s.reminder && due.has(s.reminder)).map((s) => s.reminder!);
  const remindersLate = reminders
    .filter((r) => firstAt.has(r))
    .map((r) => ({ label: r, lateMs: upLate(due.get(r)!, firstAt.get(r)!), wallLateMs: firstAt.get(r)! - due.get(r)! }))
    .filter((x) => x.lateMs > options.lateBoundMs);
  const reminderProblems = reminders.filter((r) => (countOf.get(r) ?? 0) !== 1);
  const problems = new Set([...lost, ...duplicatedAnswers, ...[...paid].filter(([, n]) => n > 1).map(([l]) => l), ...reminderProblems]);
  const evidence: Record<string, string[]> = {};
  for (const label of problems) evidence[label] = delivered.filter((d) => labelsIn(d.text).includes(label)).map((d) => `${new Date(d.at).toISOString()} ${d.text.slice(0, 200)}`);
  return {
    evidence,
    seed: options.seed,
    durationMs: options.durationMs,
    kills,
    messages: sent.length,
    answered: sent.filter((s) => countOf.has(s.label)).length,
    lost,
    uncertain: [...uncertain],
    duplicatedAnswers,
    payments: payments.length,
    duplicatedPayments: [...paid].filter(([, n]) => n > 1).map(([l]) => l),
    reminders: reminders.length,
    remindersMissing: reminders.filter((r) => !countOf.has(r) && !uncertain.has(r)),
    remindersDuplicated: reminders.filter((r) => (countOf.get(r) ?? 0) > 1),
    remindersLate,
    maxReminderLateMs: Math.max(0, ...reminders.filter((r) => firstAt.has(r)).map((r) => upLate(due.get(r)!, firstAt.get(r)!))),
    maxReminderWallLateMs: Math.max(0, ...reminders.filter((r) => firstAt.has(r)).map((r) => firstAt.get(r)! - due.get(r)!)),
    lateBoundMs: options.lateBoundMs,
    restartToHealthyMsAvg: Math.round(restarts.reduce((a, b) => a + b, 0) / Math.max(1, restarts.length)),
  };
}
