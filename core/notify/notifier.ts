import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { PersonId, TaskId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { ModelClient } from "../model/index.js";
import type { Scheduler } from "../scheduling/index.js";
import type { Store, Button, NotificationRecord, Person } from "../storage/index.js";
import type { Candidate } from "./candidate.js";
import { releaseAt, startOfLocalDay } from "./digest-timing.js";
import { applyRules, stricter, type FilterVerdict, type RuleId } from "./filter.js";
import { impliedDeadline } from "./deadline-text.js";
import { judgeCandidate } from "./judge.js";
import { assessNovelty, duplicateWindowMs, type HeardItem, type SaidItem } from "./novelty.js";

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
  store: Pick<Store, "persons" | "notifications" | "conversation" | "audit" | "outbox" | "transaction">;
  clock: Clock;
  logger: Logger;
  /** Wakes the outbox's delivery loop after a message is queued. */
  outbox: { poke(): void };
  scheduler: Pick<Scheduler, "schedule" | "cancel">;
  /** When set, a strict-JSON judgement by the model may make a decision stricter (never looser). */
  judge: ModelClient | null;
  /** Asked-for notifications per person and rolling hour before the cap trips (default 10). */
  askedForPerHour?: number;
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
    const { store, clock } = this.deps;
    const now = clock.now();
    // Untrusted content cannot force its way through quiet hours or "proactivity off": a critical
    // claim from a tainted activation counts as high.
    let c: Candidate = input.candidate.urgency === "critical" && input.candidate.provenance.tainted ? { ...input.candidate, urgency: "high" } : input.candidate;
    const person = await store.persons.getPerson(input.personId);
    if (!person) return { decision: "drop", rule: "no-new-content", reasons: ["unknown person"], record: null };

    const midnight = startOfLocalDay(now, person.timeZone);
    const dayAgo = new Date(now.getTime() - duplicateWindowMs);
    const [records, messages] = await Promise.all([
      store.notifications.listNotificationsSince(person.id, midnight < dayAgo ? midnight : dayAgo),
      store.conversation.listRecentMessages(person.id, 40),
    ]);

    // Only the person can make a notification "always" (issue 11), and only so many per hour.
    const claimed = c.notify === "always";
    const trusted = c.provenance.fromPersonWords && !c.provenance.tainted;
    const hourAgo = now.getTime() - 3_600_000;
    const askedLastHour = records.filter((r) => r.askedFor && r.decision === "send" && r.at.getTime() > hourAgo).length;
    const capped = claimed && trusted && askedLastHour >= (this.deps.askedForPerHour ?? defaultAskedForPerHour);
    const demoted = !claimed ? null : !trusted ? ("provenance" as const) : capped ? ("cap" as const) : null;
    const askedFor = claimed && demoted === null;
    // A tainted "always" cannot claim urgency either: quiet hours and the daily budget apply to it as
    // to any ordinary update (field case: injected reminders delivered in quiet hours).
    const urgencyCapped = demoted === "provenance" && c.provenance.tainted && (c.urgency === "high" || c.urgency === "critical");
    if (urgencyCapped) c = { ...c, urgency: "normal" };

    const said: SaidItem[] = [
      ...records.filter((r) => r.decision !== "drop").map((r) => ({ at: r.at, text: r.text, taskId: r.taskId, occurrenceKey: r.occurrenceKey })),
      ...messages.filter((m) => m.role === "assistant").map((m) => ({ at: m.at, text: m.text, taskId: m.taskId })),
    ].filter((s) => s.at >= dayAgo);
    const heard: HeardItem[] = messages.filter((m) => m.role === "user").map((m) => ({ at: m.at, text: m.text }));
    const sentToday = records.filter((r) => r.decision === "send" && r.at >= midnight).length;
    const occurrenceTaken = c.occurrenceKey ? (await store.notifications.findOccurrence(person.id, c.occurrenceKey)) !== null : false;
    const baseline = c.monitor ? ((await store.notifications.lastMonitorReport(person.id, c.monitor.subject))?.monitor ?? null) : null;

    const novelty = assessNovelty({
      candidate: { text: c.text, origin: c.origin, askedFor, needsAction: c.needsAction, urgency: c.urgency, occurrenceKey: c.occurrenceKey ?? null, monitor: c.monitor ?? null, taskId: input.taskId },
      now,
      said,
      heard,
      occurrenceTaken,
      monitorBaseline: baseline,
    });
    // An action whose deadline is only stated in words ("due today") still counts as one (rule 4).
    const deadline = c.deadline ?? (c.needsAction ? impliedDeadline(c.text, now, person.timeZone) : null);
    const rules = applyRules({
      candidate: { origin: c.origin, askedFor, urgency: c.urgency, needsAction: c.needsAction, deadline },
      person,
      now,
      novelty,
      sentToday,
    });
    const reasons = [...rules.reasons];
    if (input.candidate.urgency === "critical" && input.candidate.provenance.tainted && !urgencyCapped) reasons.push("critical from a tainted activation: treated as high");
    if (urgencyCapped) reasons.push(`${input.candidate.urgency} urgency claimed with a notify 'always' that is not the person's: treated as normal`);
    if (demoted === "provenance") reasons.push("notify 'always' does not trace to the person's own words in an untainted activation: treated as if worthwhile");
    if (demoted === "cap") reasons.push(`over the cap of ${this.deps.askedForPerHour ?? defaultAskedForPerHour} asked-for notifications per hour: treated as if worthwhile`);

    let decision = rules.decision;
    let rule: RuleId | "judge" = rules.rule;
    // The judge may only make a decision stricter, and never second-guesses critical alerts,
    // reminders the person asked for, or approval requests.
    if (this.deps.judge && decision !== "drop" && rules.rule !== "critical" && rules.rule !== "asked-for" && c.origin !== "approval") {
      const judged = await judgeCandidate(this.deps.judge, { candidate: c, person, now, said, sentToday, rules });
      const wanted = judged.ok ? judged.decision : "hold";
      const bounded = stricter(decision, wanted);
      reasons.push(judged.ok ? `model: ${judged.decision} — ${judged.reason}` : `${judged.reason}: held`);
      if (!judged.ok) this.deps.logger.warn({ personId: person.id, reason: judged.reason }, "notification judgement failed; holding");
      if (bounded !== decision) rule = "judge";
      decision = bounded;
    }

    // The decision and the outbound message are written together: a crash between them would
    // leave a "sent" record whose message never went out (and a re-run would see a duplicate).
    const record = await store.transaction(async () => {
      const written = await store.notifications.recordNotification({
        personId: person.id,
        taskId: input.taskId,
        text: c.text,
        decision,
        reasons,
        at: now,
        origin: c.origin,
        urgency: c.urgency,
        needsAction: c.needsAction,
        askedFor,
        demoted,
        deadline,
        occurrenceKey: c.occurrenceKey ?? null,
        monitor: c.monitor ?? null,
        rule,
      });
      if (decision === "send") await this.enqueue(person, input.taskId, input.deliveryKey, c.text, input.buttons ?? []);
      return written;
    });
    await store.audit.appendAudit({
      personId: person.id,
      kind: "notification.decision",
      summary: `${decision} (${rule}): ${reasons.join("; ")}`.slice(0, 500),
      data: { taskId: input.taskId, notificationId: record.id, decision, rule, reasons, origin: c.origin, urgency: c.urgency, demoted, preview: c.text.slice(0, 120) },
    });
    this.deps.logger.info({ personId: person.id, taskId: input.taskId, decision, rule, origin: c.origin }, "notification decided");

    if (decision === "send") this.deps.outbox.poke();
    // Also after a drop: a re-run after a crash may drop what the first run held before scheduling it.
    else await this.scheduleRelease(person);
    if (demoted === "cap" && !records.some((r) => r.demoted === "cap" && r.at.getTime() > hourAgo)) await this.capNotice(person, record);
    return { decision, rule, reasons, record };
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
      this.deps.outbox.poke();
    }
    await this.scheduleRelease(person);
    return due.length;
  }

  private async send(person: Person, taskId: TaskId | null, deliveryKey: string, text: string, buttons: Button[]): Promise<void> {
    await this.deps.store.transaction(() => this.enqueue(person, taskId, deliveryKey, text, buttons));
    this.deps.outbox.poke();
  }

  /** Queues a message; only a new outbox row is recorded in the conversation (a re-run gets the old row). */
  private async enqueue(person: Person, taskId: TaskId | null, deliveryKey: string, text: string, buttons: Button[]): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const row = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey, text, buttons }, now);
    if (row.createdAt.getTime() === now.getTime()) {
      const recent = await store.conversation.listRecentMessages(person.id, 20);
      const channel = [...recent].reverse().find((m) => m.role === "user")?.channel ?? "local";
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel, text, taskId });
    }
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
