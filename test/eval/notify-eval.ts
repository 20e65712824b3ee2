/**
 * Evaluates the notification filter on a labelled set (JSON Lines), each line run through the real
 * `Notifier` on a fresh in-memory SQLite store with a fixed clock and the person set up from the
 * line. Used by `npm run eval:notify -- FILE.jsonl` and by the CI floor test.
 *
 * Line format (issue 12; fields marked * are optional extensions):
 *   {"id", "now" (ISO UTC),
 *    "person": {"timezone" (IANA), "proactivity", "quietHours": {"from","to"} | null, "sentToday",
 *               "recentSent": [{"at","text", "occurrenceKey"*, "monitor"*}], "digestTime"*,
 *               "recentFromPerson"*: [{"at","text"}]},
 *    "candidate": {"origin","notify","urgency","needsAction","goal","text", "deadline"*, "occurrenceKey"*,
 *                  "monitor"*, "provenance"*: {"tainted","fromPersonWords"}},
 *    "expected": "send" | "hold" | "drop"}
 * A candidate without `provenance` is taken as the person's own, untainted (the labelled intent).
 */
import { Writable } from "node:stream";
import { z } from "zod";
import { createLogger } from "../../core/log/logger.js";
import type { ModelClient } from "../../core/model/port.js";
import { candidateSchema } from "../../core/notify/candidate.js";
import { startOfLocalDay } from "../../core/notify/digest-timing.js";
import { Notifier } from "../../core/notify/notifier.js";
import { Outbound } from "../../core/outbox/outbound.js";
import { monitorStateSchema } from "../../core/notify/index.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import type { NotificationDecision } from "../../core/notify/index.js";
import { isValidTimeZone } from "../../core/time/zones.js";

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "HH:MM");
const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const decision = z.enum(["send", "hold", "drop"]);

/** One labelled line (unknown extra keys are ignored). */
export const evalLineSchema = z.object({
  id: z.string().min(1),
  now: instant,
  person: z.object({
    timezone: z.string().refine(isValidTimeZone, "an IANA time zone"),
    proactivity: z.enum(["off", "low", "normal", "high"]),
    quietHours: z.object({ from: hhmm, to: hhmm }).nullable(),
    sentToday: z.number().int().min(0),
    recentSent: z.array(z.object({ at: instant, text: z.string(), occurrenceKey: z.string().optional(), monitor: monitorStateSchema.optional() })).default([]),
    digestTime: hhmm.nullish(),
    recentFromPerson: z.array(z.object({ at: instant, text: z.string() })).default([]),
  }),
  candidate: candidateSchema.omit({ goal: true }).extend({ goal: z.string().max(500).nullish() }).strip(),
  expected: decision,
});

export type EvalLine = z.infer<typeof evalLineSchema>;

/** One line's result. */
export interface EvalResult {
  id: string;
  expected: NotificationDecision;
  got: NotificationDecision;
  rule: string;
  reasons: string[];
  mustSend: boolean;
  text: string;
}

/** Figures over a set of results. */
export interface EvalFigures {
  lines: number;
  accuracy: number;
  /** confusion[expected][got] = count */
  confusion: Record<NotificationDecision, Record<NotificationDecision, number>>;
  /** Of the lines sent, the share labelled send (1 when nothing was sent). */
  precisionSend: number;
  sent: number;
  /** Must-send: expected send with notify always, urgency high/critical, or needsAction. */
  mustSend: number;
  mustSendRecall: number;
}

/** A line that could not be read. */
export interface EvalError {
  line: number;
  id: string | null;
  error: string;
}

/** Parses a JSONL text; every unreadable line becomes an error naming its line number and id. */
export function parseEvalSet(text: string): { lines: EvalLine[]; errors: EvalError[] } {
  const lines: EvalLine[] = [];
  const errors: EvalError[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      errors.push({ line: i + 1, id: /"id"\s*:\s*"([^"]*)"/.exec(raw)?.[1] ?? null, error: `not JSON: ${(err as Error).message}` });
      return;
    }
    const parsed = evalLineSchema.safeParse(json);
    if (parsed.success) lines.push(parsed.data);
    else {
      const id = z.object({ id: z.string() }).safeParse(json).data?.id ?? null;
      errors.push({ line: i + 1, id, error: parsed.error.issues.map((x) => `${x.path.join(".") || "line"}: ${x.message}`).join("; ") });
    }
  });
  return { lines, errors };
}

const silent = new Writable({ write: (_c, _e, done) => done() });

/** Runs one line through a real Notifier on its own in-memory store. */
export async function evaluateLine(line: EvalLine, judge: ModelClient | null): Promise<EvalResult> {
  const store = openSqliteStore({ path: ":memory:" });
  try {
    const { person: p, now } = line;
    const person = await store.persons.createPerson({
      displayName: line.id,
      timeZone: p.timezone,
      proactivity: p.proactivity,
      quietHours: p.quietHours,
      ...(p.digestTime && { digestTime: p.digestTime }),
    });
    const history = [
      ...p.recentSent.map((s) => ({ ...s, role: "assistant" as const })),
      ...p.recentFromPerson.map((s) => ({ ...s, role: "user" as const, occurrenceKey: undefined, monitor: undefined })),
    ].sort((a, b) => a.at.getTime() - b.at.getTime());
    for (const h of history) {
      await store.conversation.appendMessage({ personId: person.id, role: h.role, channel: "local", text: h.text, taskId: null, at: h.at });
      if (h.role === "assistant") {
        await store.notifications.recordNotification({ personId: person.id, taskId: null, text: h.text, decision: "send", reasons: ["eval history"], at: h.at, occurrenceKey: h.occurrenceKey ?? null, monitor: h.monitor ?? null });
      }
    }
    // The rest of today's count: placeholder sends at local midnight that match nothing.
    const midnight = startOfLocalDay(now, p.timezone);
    const counted = p.recentSent.filter((s) => s.at >= midnight && s.at <= now).length;
    for (let i = counted; i < p.sentToday; i++) {
      await store.notifications.recordNotification({ personId: person.id, taskId: null, text: `[earlier message ${i + 1}]`, decision: "send", reasons: ["eval budget"], at: midnight });
    }
    const notifier = new Notifier({
      store,
      clock: { now: () => now },
      logger: createLogger({ level: "silent", destination: silent }).logger,
      outbound: new Outbound({ store, clock: { now: () => now }, wake: () => undefined }),
      scheduler: { schedule: async () => null, cancel: async () => 0 },
      judge,
    });
    const c = line.candidate;
    const outcome = await notifier.propose({
      personId: person.id,
      taskId: null,
      deliveryKey: `eval:${line.id}`,
      candidate: { ...c, deadline: c.deadline ?? null, goal: c.goal ?? null, occurrenceKey: c.occurrenceKey ?? null, monitor: c.monitor ?? null },
    });
    const mustSend = line.expected === "send" && (c.notify === "always" || c.urgency === "high" || c.urgency === "critical" || c.needsAction);
    return { id: line.id, expected: line.expected, got: outcome.decision, rule: outcome.rule, reasons: outcome.reasons, mustSend, text: c.text };
  } finally {
    await store.close();
  }
}

/** Accuracy, confusion matrix, precision of send and must-send recall. */
export function figures(results: EvalResult[]): EvalFigures {
  const zero = () => ({ send: 0, hold: 0, drop: 0 });
  const confusion = { send: zero(), hold: zero(), drop: zero() };
  for (const r of results) confusion[r.expected][r.got]++;
  const sent = results.filter((r) => r.got === "send");
  const must = results.filter((r) => r.mustSend);
  const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);
  return {
    lines: results.length,
    accuracy: ratio(results.filter((r) => r.got === r.expected).length, results.length),
    confusion,
    precisionSend: ratio(sent.filter((r) => r.expected === "send").length, sent.length),
    sent: sent.length,
    mustSend: must.length,
    mustSendRecall: ratio(must.filter((r) => r.got === "send").length, must.length),
  };
}

/** Runs every line (sequentially: each has its own store and clock). */
export async function evaluateSet(lines: EvalLine[], judge: ModelClient | null): Promise<EvalResult[]> {
  const out: EvalResult[] = [];
  for (const line of lines) out.push(await evaluateLine(line, judge));
  return out;
}
