import { z } from "zod";
import type { Clock } from "../clock.js";
import type { PersonId, TaskId } from "../ids.js";
import type { Logger } from "../log.js";
import type { ModelClient } from "../model/port.js";
import type { Scheduler } from "../scheduling/scheduler.js";
import type { Store } from "../storage/ports.js";
import type { Button, Person } from "../storage/types.js";
import { decide, isNoNews, type Candidate, type FilterVerdict } from "./filter.js";

/** Job that sends a person's digest of held messages at their digest time. */
export const digestJobName = "digest.send";

const judgementSchema = z.object({ worthwhile: z.boolean(), reason: z.string().max(300) }).strict();

/**
 * Runs candidates from background activations through the notification filter, records every
 * decision with its reasons (audit and notification log), delivers what passes through the outbox,
 * and keeps held messages for the person's daily digest.
 */
export class Notifier {
  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      /** Wakes the outbox's delivery loop after a message is queued. */
      outbox: { poke(): void };
      scheduler: Scheduler;
      /** When set, a strict JSON judgement by the model may hold a message the rules would send. */
      judge: ModelClient | null;
    },
  ) {}

  /**
   * Decides and acts on one candidate. `deliveryKey` makes the send idempotent (an activation that
   * is re-run after a crash proposes the same key). Returns the verdict.
   */
  async propose(input: { personId: PersonId; taskId: TaskId | null; deliveryKey: string; candidate: Candidate; buttons?: Button[] }): Promise<FilterVerdict> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const person = await store.persons.getPerson(input.personId);
    if (!person) return { decision: "drop", reasons: ["unknown person"] };

    let verdict: FilterVerdict;
    if (isNoNews(input.candidate.text)) {
      verdict = { decision: "drop", reasons: ["nothing to report"] };
    } else {
      const since = new Date(now.getTime() - 7 * 86_400_000);
      const [recent, said] = await Promise.all([
        store.notifications.listNotificationsSince(person.id, since),
        store.conversation.listRecentMessages(person.id, 30),
      ]);
      const recentlySaid = [
        ...said.filter((m) => m.role === "assistant").map((m) => m.text),
        ...recent.filter((r) => r.decision !== "drop").map((r) => r.text),
      ];
      verdict = decide({ candidate: input.candidate, person, now, recent, recentlySaid });
      if (verdict.decision === "send" && !input.candidate.askedFor && !input.candidate.mustAct && this.deps.judge) {
        verdict = await this.judge(person, input.candidate.text, verdict);
      }
    }

    await store.notifications.recordNotification({ personId: person.id, taskId: input.taskId, text: input.candidate.text, decision: verdict.decision, reasons: verdict.reasons });
    await store.audit.appendAudit({
      personId: person.id,
      kind: "notification.decision",
      summary: `${verdict.decision}: ${verdict.reasons.join("; ")}`,
      data: { taskId: input.taskId, decision: verdict.decision, reasons: verdict.reasons, preview: input.candidate.text.slice(0, 120) },
    });

    if (verdict.decision === "send") await this.send(person, input.taskId, input.deliveryKey, input.candidate.text, input.buttons ?? []);
    if (verdict.decision === "hold") await this.scheduleDigest(person);
    return verdict;
  }

  /** Sends the person's held messages as one digest (nothing when none are held). */
  async sendDigest(personId: PersonId): Promise<number> {
    const { store, clock } = this.deps;
    const person = await store.persons.getPerson(personId);
    if (!person) return 0;
    const held = await store.notifications.listHeldNotifications(personId);
    if (held.length === 0) return 0;
    const text = `While you were away:\n${held.map((h) => `• ${h.text.replace(/\s+/g, " ").slice(0, 500)}`).join("\n")}`;
    const day = clock.now().toISOString().slice(0, 10);
    await this.send(person, null, `digest:${personId}:${day}:${held[0]!.id}`, text, []);
    await store.notifications.markDigested(held.map((h) => h.id), clock.now());
    return held.length;
  }

  private async send(person: Person, taskId: TaskId | null, deliveryKey: string, text: string, buttons: Button[]): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    await store.transaction(async () => {
      const row = await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey, text, buttons }, now);
      // Only a new row is recorded in the conversation (a re-run proposes the same key and gets the old row).
      if (row.createdAt.getTime() === now.getTime()) {
        const recent = await store.conversation.listRecentMessages(person.id, 20);
        const channel = [...recent].reverse().find((m) => m.role === "user")?.channel ?? "local";
        await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel, text, taskId });
      }
    });
    this.deps.outbox.poke();
  }

  private async scheduleDigest(person: Person): Promise<void> {
    const [hh, mm] = person.digestTime.split(":");
    await this.deps.scheduler.schedule({
      name: digestJobName,
      key: person.id,
      data: { personId: person.id },
      timing: { kind: "cron", cron: `${Number(mm)} ${Number(hh)} * * *`, timeZone: person.timeZone },
    });
  }

  /** Strict JSON judgement; any failure holds (never sends). */
  private async judge(person: Person, text: string, rules: FilterVerdict): Promise<FilterVerdict> {
    try {
      const response = await this.deps.judge!.complete({
        json: true,
        temperature: 0,
        maxTokens: 120,
        messages: [
          {
            role: "system",
            content:
              'You decide whether a proactive message is worth interrupting a person for right now. Answer only JSON: {"worthwhile": boolean, "reason": string}. Small talk, repetition and vague updates are not worthwhile; new facts the person cares about, deadlines and changes are.',
          },
          { role: "user", content: `Person: ${person.displayName}. Proposed message:\n${text}` },
        ],
      });
      const parsed = judgementSchema.safeParse(JSON.parse(response.content ?? ""));
      if (!parsed.success) return { decision: "hold", reasons: [...rules.reasons, "model judgement unreadable: held"] };
      return parsed.data.worthwhile
        ? { decision: "send", reasons: [...rules.reasons, `model: ${parsed.data.reason}`] }
        : { decision: "hold", reasons: [`model: ${parsed.data.reason}`] };
    } catch (err) {
      this.deps.logger.warn({ err }, "notification judgement failed; holding");
      return { decision: "hold", reasons: [...rules.reasons, "model judgement failed: held"] };
    }
  }
}
