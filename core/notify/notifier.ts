import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { PersonId, TaskId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { ModelClient } from "../model/index.js";
import type { Outbound } from "../outbox/index.js";
import type { Scheduler } from "../scheduling/index.js";
import type { Store } from "../storage/index.js";
import type { Button } from "../channels/records.js";
import type { MonitorState, NotificationDecision, NotificationRecord } from "./records.js";
import type { Person } from "../persons/records.js";
import type { Candidate } from "./candidate.js";
import { releaseAt, startOfLocalDay } from "./digest-timing.js";
import { applyRules, stricter, type FilterVerdict, type RuleId } from "./filter.js";
import { impliedDeadline } from "./deadline-text.js";
import { judgeCandidate } from "./judge.js";
import { sameSubject } from "./monitor-state.js";
import { withoutSilenceTokens } from "./silence.js";
import { assessNovelty, continuationWindowMs, duplicateWindowMs, type HeardItem, type SaidItem } from "./novelty.js";

/** Job that sends a person's held messages that are due (the digest, or a deadline item early). */
export const digestJobName = "digest.send";

/** Default cap on asked-for (`notify: always`) notifications per person and hour (issue 11). */
export const defaultAskedForPerHour = 10;

/** What the filter decided for one candidate, and by which rule (`judge` when the model made it stricter). */
export interface NotificationOutcome extends Omit<FilterVerdict, "rule"> {
  rule: RuleId | "judge";
  /** The stored record (null when the person is unknown). */
  record: NotificationRecord | null;
}

export interface NotifierDeps {
  store: Pick<Store, "persons" | "notifications" | "conversation" | "audit" | "transaction">;
  clock: Clock;
  logger: Logger;
  /** The one outbound door (core/outbox): queues what passes and wakes delivery once it is committed. */
  outbound: Pick<Outbound, "queue" | "wake">;
  scheduler: Pick<Scheduler, "schedule" | "cancel">;
  /**
   * The model that judges candidates the rules did not drop: a strict-JSON judgement may make a
   * decision stricter, never looser; any failure holds. A function is asked at every candidate, so a
   * model configured later (the setup page) judges from then on; null (or a function returning
   * null) means rules only.
   */
  judge: ModelClient | null | (() => ModelClient | null);
  /** Asked-for notifications per person and rolling hour before the cap trips (default 10). */
  askedForPerHour?: number;
  /** Counts the judge's calls against the person's daily model budget (core/runtime/model-budget.ts); a refused call holds, like any judge failure. */
  meter?: (person: Person, model: ModelClient) => ModelClient;
}

/**
 * Runs candidates from background activations through the notification filter (novelty, then the
 * ordered rules, then the optional model judge bounded by them), records every decision with its
 * rule and reasons (notification log and audit), delivers what passes through the outbox, and
 * releases held messages with the digest — or earlier when their deadline requires it.
 */
export class Notifier {
  constructor(private readonly deps: NotifierDeps) {}

  /**
   * Decides and acts on one candidate. `deliveryKey` makes the send idempotent (an activation re-run
   * after a crash proposes the same key). Never throws for a bad judgement (it holds); store errors
   * propagate.
   */
  async propose(input: { personId: PersonId; taskId: TaskId | null; deliveryKey: string; candidate: Candidate; buttons?: Button[] }): Promise<NotificationOutcome> {
    const now = this.deps.clock.now();
    // Untrusted content cannot force its way through quiet hours or "proactivity off": a critical
    // claim from a tainted activation counts as high.
    let c: Candidate = input.candidate.urgency === "critical" && input.candidate.provenance.tainted ? { ...input.candidate, urgency: "high" } : input.candidate;
    // A silence token ("[SILENT]", "<no_reply>", any bracket or casing) never becomes (part of) a message.
    const spoken = withoutSilenceTokens(c.text);
    if (spoken !== c.text) c = { ...c, text: spoken };
    const person = await this.deps.store.persons.getPerson(input.personId);
    if (!person) return { decision: "drop", rule: "no-new-content", reasons: ["unknown person"], record: null };

    const past = await this.history(person, now);
    const asked = this.askedFor(c, input.candidate.urgency, past.records, now);
    c = asked.candidate;
    const { store } = this.deps;
    const occurrenceTaken = c.occurrenceKey ? (await store.notifications.findOccurrence(person.id, c.occurrenceKey)) !== null : false;
    const baseline = c.monitor ? await this.monitorBaseline(person.id, c.monitor.subject, past.records) : null;
    const novelty = assessNovelty({
      candidate: { text: c.text, origin: c.origin, askedFor: asked.askedFor, needsAction: c.needsAction, urgency: c.urgency, occurrenceKey: c.occurrenceKey ?? null, monitor: c.monitor ?? null, taskId: input.taskId, goal: c.goal ?? null },
      now,
      said: past.said,
      heard: past.heard,
      history: past.older,
      occurrenceTaken,
      monitorBaseline: baseline,
    });
    // An action whose deadline is only stated in words ("due today") still counts as one (rule 4).
    const deadline = c.deadline ?? (c.needsAction ? impliedDeadline(c.text, now, person.timeZone) : null);
    const rules = applyRules({ candidate: { origin: c.origin, askedFor: asked.askedFor, urgency: c.urgency, needsAction: c.needsAction, deadline }, person, now, novelty, sentToday: past.sentToday });
    const reasons = [...rules.reasons];
    if (input.candidate.urgency === "critical" && input.candidate.provenance.tainted && !asked.urgencyCapped) reasons.push("critical from a tainted activation: treated as high");
    reasons.push(...asked.reasons);
    const { decision, rule } = await this.judged(c, person, now, past, rules, reasons);

    const record = await this.commit({ person, taskId: input.taskId, deliveryKey: input.deliveryKey, buttons: input.buttons ?? [], candidate: c, now, decision, rule, reasons, askedFor: asked.askedFor, demoted: asked.demoted, deadline });
    if (decision === "send") this.deps.outbound.wake();
    // Also after a drop: a re-run after a crash may drop what the first run held before scheduling it.
    else await this.scheduleRelease(person);
    const hourAgo = now.getTime() - 3_600_000;
    if (asked.demoted === "cap" && !past.records.some((r) => r.demoted === "cap" && r.at.getTime() > hourAgo)) await this.capNotice(person, record);
    return { decision, rule, reasons, record };
  }

  /**
   * What the person was told and said: this week's notification records and the recent
   * conversation, as `said` (last 24 h), `older` (the rest of the week, for "still the same"
   * reports), `heard` (the person's words) and the count sent since local midnight.
   */
  private async history(person: Person, now: Date): Promise<{ records: NotificationRecord[]; said: SaidItem[]; older: SaidItem[]; heard: HeardItem[]; sentToday: number }> {
    const { store } = this.deps;
    const midnight = startOfLocalDay(now, person.timeZone);
    const dayAgo = new Date(now.getTime() - duplicateWindowMs);
    const weekAgo = new Date(now.getTime() - continuationWindowMs);
    const [records, messages] = await Promise.all([
      store.notifications.listNotificationsSince(person.id, midnight < weekAgo ? midnight : weekAgo),
      store.conversation.listRecentMessages(person.id, 40),
    ]);
    const told: SaidItem[] = [
      ...records.filter((r) => r.decision !== "drop").map((r) => ({ at: r.at, text: r.text, taskId: r.taskId, occurrenceKey: r.occurrenceKey })),
      ...messages.filter((m) => m.role === "assistant").map((m) => ({ at: m.at, text: m.text, taskId: m.taskId })),
    ];
    return {
      records,
      said: told.filter((s) => s.at >= dayAgo),
      older: told.filter((s) => s.at < dayAgo),
      heard: messages.filter((m) => m.role === "user").map((m) => ({ at: m.at, text: m.text })),
      sentToday: records.filter((r) => r.decision === "send" && r.at >= midnight).length,
    };
  }

  /**
   * Whether a claimed `notify: always` counts: only the person can make a notification "always"
   * (issue 11), and only so many per hour. A tainted "always" cannot claim urgency either: quiet
   * hours and the daily budget apply to it as to any ordinary update (field case: injected
   * reminders delivered in quiet hours). Returns the candidate with its urgency as it counts;
   * `claimedUrgency` is what the producer claimed, for the reason.
   */
  private askedFor(c: Candidate, claimedUrgency: Candidate["urgency"], records: NotificationRecord[], now: Date): { candidate: Candidate; askedFor: boolean; demoted: "provenance" | "cap" | null; urgencyCapped: boolean; reasons: string[] } {
    const cap = this.deps.askedForPerHour ?? defaultAskedForPerHour;
    const claimed = c.notify === "always";
    const trusted = c.provenance.fromPersonWords && !c.provenance.tainted;
    const hourAgo = now.getTime() - 3_600_000;
    const askedLastHour = records.filter((r) => r.askedFor && r.decision === "send" && r.at.getTime() > hourAgo).length;
    const demoted = !claimed ? null : !trusted ? ("provenance" as const) : askedLastHour >= cap ? ("cap" as const) : null;
    const urgencyCapped = demoted === "provenance" && c.provenance.tainted && (c.urgency === "high" || c.urgency === "critical");
    const reasons: string[] = [];
    if (urgencyCapped) reasons.push(`${claimedUrgency} urgency claimed with a notify 'always' that is not the person's: treated as normal`);
    if (demoted === "provenance") reasons.push("notify 'always' does not trace to the person's own words in an untainted activation: treated as if worthwhile");
    if (demoted === "cap") reasons.push(`over the cap of ${cap} asked-for notifications per hour: treated as if worthwhile`);
    return { candidate: urgencyCapped ? { ...c, urgency: "normal" } : c, askedFor: claimed && demoted === null, demoted, urgencyCapped, reasons };
  }

  /**
   * The rules' verdict, made stricter by the judge when a model is configured (never looser; a
   * failure holds). Critical alerts, reminders the person asked for and approval requests are not
   * second-guessed. Appends the judge's reason to `reasons`.
   */
  private async judged(c: Candidate, person: Person, now: Date, past: { said: SaidItem[]; sentToday: number }, rules: FilterVerdict, reasons: string[]): Promise<{ decision: NotificationDecision; rule: RuleId | "judge" }> {
    const judge = typeof this.deps.judge === "function" ? this.deps.judge() : this.deps.judge;
    if (!judge || rules.decision === "drop" || rules.rule === "critical" || rules.rule === "asked-for" || c.origin === "approval") return { decision: rules.decision, rule: rules.rule };
    const verdict = await judgeCandidate(this.deps.meter ? this.deps.meter(person, judge) : judge, { candidate: c, person, now, said: past.said, sentToday: past.sentToday, rules });
    const bounded = stricter(rules.decision, verdict.ok ? verdict.decision : "hold");
    reasons.push(verdict.ok ? `model: ${verdict.decision} — ${verdict.reason}` : `${verdict.reason}: held`);
    if (!verdict.ok) this.deps.logger.warn({ personId: person.id, reason: verdict.reason }, "notification judgement failed; holding");
    return { decision: bounded, rule: bounded !== rules.decision ? "judge" : rules.rule };
  }

  /**
   * Records the decision and, when it is send, queues the message — together: a crash between them
   * would leave a "sent" record whose message never went out (and a re-run would see a duplicate).
   * Then the audit line and the log.
   */
  private async commit(d: {
    person: Person;
    taskId: TaskId | null;
    deliveryKey: string;
    buttons: Button[];
    candidate: Candidate;
    now: Date;
    decision: NotificationDecision;
    rule: RuleId | "judge";
    reasons: string[];
    askedFor: boolean;
    demoted: "provenance" | "cap" | null;
    deadline: Date | null;
  }): Promise<NotificationRecord> {
    const { store } = this.deps;
    const { person, candidate: c, decision, rule, reasons } = d;
    const record = await store.transaction(async () => {
      const written = await store.notifications.recordNotification({
        personId: person.id,
        taskId: d.taskId,
        text: c.text,
        decision,
        reasons,
        at: d.now,
        origin: c.origin,
        urgency: c.urgency,
        needsAction: c.needsAction,
        askedFor: d.askedFor,
        demoted: d.demoted,
        deadline: d.deadline,
        occurrenceKey: c.occurrenceKey ?? null,
        monitor: c.monitor ?? null,
        rule,
      });
      if (decision === "send") await this.enqueue(person, d.taskId, d.deliveryKey, c.text, d.buttons);
      return written;
    });
    await store.audit.appendAudit({
      personId: person.id,
      kind: "notification.decision",
      summary: `${decision} (${rule}): ${reasons.join("; ")}`.slice(0, 500),
      data: { taskId: d.taskId, notificationId: record.id, decision, rule, reasons, origin: c.origin, urgency: c.urgency, demoted: d.demoted, preview: c.text.slice(0, 120) },
    });
    this.deps.logger.info({ personId: person.id, taskId: d.taskId, decision, rule, origin: c.origin }, "notification decided");
    return record;
  }

  /**
   * Sends the person's held messages that are due now (the digest, or items whose deadline needs
   * them early) as one message, marks them digested in the same transaction, and schedules the next
   * release. Returns how many went out.
   */
  async sendDigest(personId: PersonId): Promise<number> {
    const { store, clock } = this.deps;
    const person = await store.persons.getPerson(personId);
    if (!person) return 0;
    const now = clock.now();
    const held = await store.notifications.listHeldNotifications(personId);
    // A second of slack: the job fires at the release instant and its own clock may read a hair earlier.
    const due = held.filter((h) => releaseAt(person, h.at, h.deadline).getTime() <= now.getTime() + 1_000);
    if (due.length > 0) {
      const text = due.length === 1 ? due[0]!.text : `Here is what I held for you:\n${due.map((h) => `• ${h.text.replace(/\s+/g, " ").slice(0, 500)}`).join("\n")}`;
      const key = `digest:${personId}:${createHash("sha256").update(due.map((h) => h.id).join(",")).digest("hex").slice(0, 16)}`;
      await store.transaction(async () => {
        await this.enqueue(person, null, key, text, []);
        await store.notifications.markDigested(due.map((h) => h.id), now);
      });
      this.deps.outbound.wake();
    }
    await this.scheduleRelease(person);
    return due.length;
  }

  private async send(person: Person, taskId: TaskId | null, deliveryKey: string, text: string, buttons: Button[]): Promise<void> {
    await this.deps.store.transaction(() => this.enqueue(person, taskId, deliveryKey, text, buttons));
    this.deps.outbound.wake();
  }

  /** Queues a message; only a new outbox row is recorded in the conversation (a re-run gets the old row). */
  private async enqueue(person: Person, taskId: TaskId | null, deliveryKey: string, text: string, buttons: Button[]): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const row = await this.deps.outbound.queue({ personId: person.id, deliveryKey, text, buttons }, { wake: false, now });
    if (row.createdAt.getTime() === now.getTime()) {
      const recent = await store.conversation.listRecentMessages(person.id, 20);
      const channel = [...recent].reverse().find((m) => m.role === "user")?.channel ?? "local";
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel, text, taskId });
    }
  }

  /**
   * The state the person was last told about a monitor's subject: the newest delivered report of
   * the same subject, also when this week's report worded the subject differently ("parcel
   * JD014600006" / "DHL parcel JD014600006"; see `sameSubject`). Null when they were never told.
   */
  private async monitorBaseline(personId: PersonId, subject: string, recent: NotificationRecord[]): Promise<MonitorState | null> {
    const exact = await this.deps.store.notifications.lastMonitorReport(personId, subject);
    const similar = recent.filter((r) => r.decision !== "drop" && r.monitor && sameSubject(r.monitor.subject, subject)).sort((a, b) => b.at.getTime() - a.at.getTime())[0];
    const newest = [exact, similar].filter((r): r is NotificationRecord => !!r?.monitor).sort((a, b) => b.at.getTime() - a.at.getTime())[0];
    return newest?.monitor ?? null;
  }

  /** Schedules the digest job at the earliest release among held messages (cancels it when none are held). */
  private async scheduleRelease(person: Person): Promise<void> {
    const held = await this.deps.store.notifications.listHeldNotifications(person.id);
    if (held.length === 0) {
      await this.deps.scheduler.cancel(digestJobName, person.id);
      return;
    }
    const next = Math.min(...held.map((h) => releaseAt(person, h.at, h.deadline).getTime()));
    await this.deps.scheduler.schedule({ name: digestJobName, key: person.id, data: { personId: person.id }, timing: { kind: "at", at: new Date(next) } });
  }

  /** Tells the person once per trip that the hourly cap on asked-for notifications tripped. */
  private async capNotice(person: Person, record: NotificationRecord): Promise<void> {
    const cap = this.deps.askedForPerHour ?? defaultAskedForPerHour;
    const text = `I've delivered ${cap} notifications you asked for within the last hour, so I'm treating further ones as ordinary updates for now (quiet hours, your budget and duplicate checks apply). If something scheduled them without you, check /goals; /pause stops all background work.`;
    await this.deps.store.audit.appendAudit({ personId: person.id, kind: "notification.cap", summary: `asked-for notifications over ${cap}/hour: cap tripped`, data: { notificationId: record.id, cap } });
    await this.send(person, null, `notify-cap:${person.id}:${record.id}`, text, []);
  }
}
