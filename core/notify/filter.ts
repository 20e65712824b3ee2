import type { NotificationDecision, NotificationOrigin, Urgency } from "./records.js";
import type { Person } from "../persons/records.js";
import { inQuietHours, quietHoursEnd } from "./digest-timing.js";
import type { NoveltyVerdict } from "./novelty.js";

/**
 * The notification filter's rules, in their documented order; the first rule that matches decides
 * (README, "Proactive messages"):
 *
 * 1. `no-new-content` — nothing new (novelty stage) → drop, whatever the urgency or setting.
 * 2. `critical` — urgency critical → send, even with proactivity off, in quiet hours, over budget.
 * 3. `asked-for` — a reminder the person asked for (`notify: always` that counts) → send at its time.
 * 4. `needs-person` — a question, an approval, or an action needed before a deadline within 24 h →
 *    send; in quiet hours held unless urgency is high/critical or the deadline falls before they end.
 * 5. `proactivity-off` — proactivity off → drop informative messages; hold low-urgency ones that
 *    need action (others needing action go on to 6 and 7).
 * 6. `high-urgency` — urgency high → send.
 * 7. `hold` — quiet hours, proactivity low, daily budget used, or origin digest-item → hold.
 * 8. `send` — otherwise send.
 *
 * Pure and deterministic; it fails closed: a candidate it cannot place is held by the caller.
 */

export type RuleId = "no-new-content" | "critical" | "asked-for" | "needs-person" | "proactivity-off" | "high-urgency" | "hold" | "send";

/** Rule ids in their order (1-based position = rule number). */
export const ruleOrder: readonly RuleId[] = ["no-new-content", "critical", "asked-for", "needs-person", "proactivity-off", "high-urgency", "hold", "send"];

export interface FilterVerdict {
  decision: NotificationDecision;
  /** The rule that decided. */
  rule: RuleId;
  reasons: string[];
}

/** Messages Familiar may send first per local day (since local midnight), by proactivity. */
export const dailyBudget: Record<Person["proactivity"], number> = { off: 0, low: 2, normal: 6, high: 12 };

/** Deadlines within this much of now make an action time-critical (rule 4). */
export const actionHorizonMs = 24 * 3_600_000;

/** What the rules look at. `askedFor` is the effective value (provenance checked, under the hourly cap). */
export interface RuleInput {
  candidate: { origin: NotificationOrigin; askedFor: boolean; urgency: Urgency; needsAction: boolean; deadline: Date | null };
  person: Pick<Person, "proactivity" | "quietHours" | "timeZone">;
  now: Date;
  novelty: NoveltyVerdict;
  /** Messages sent to the person since local midnight. */
  sentToday: number;
}

/** Applies the rules in order and returns the first match. */
export function applyRules(input: RuleInput): FilterVerdict {
  const { candidate: c, person, now } = input;
  const verdict = (decision: NotificationDecision, rule: RuleId, reason: string): FilterVerdict => ({ decision, rule, reasons: [reason] });
  const urgent = c.urgency === "high" || c.urgency === "critical";
  const quiet = inQuietHours(person.quietHours, now, person.timeZone);

  if (!input.novelty.novel) return verdict("drop", "no-new-content", input.novelty.reason);
  if (c.urgency === "critical") return verdict("send", "critical", "critical");
  if (c.askedFor) return verdict("send", "asked-for", "a reminder the person asked for");

  const soon = c.needsAction && c.deadline !== null && c.deadline.getTime() - now.getTime() <= actionHorizonMs;
  if (c.origin === "question" || c.origin === "approval" || soon) {
    const what = c.origin === "question" ? "a question for the person" : c.origin === "approval" ? "an approval request" : `action needed before ${c.deadline!.toISOString()}`;
    if (!quiet) return verdict("send", "needs-person", what);
    if (urgent) return verdict("send", "needs-person", `${what}; urgent, so despite quiet hours`);
    const end = quietHoursEnd(person.quietHours, now, person.timeZone);
    if (c.deadline && end && c.deadline.getTime() <= end.getTime()) return verdict("send", "needs-person", `${what}; the deadline falls before quiet hours end`);
    return verdict("hold", "needs-person", `${what}; held until quiet hours end`);
  }

  if (person.proactivity === "off") {
    if (!c.needsAction) return verdict("drop", "proactivity-off", "proactivity is off: informative messages are dropped");
    if (c.urgency === "low") return verdict("hold", "proactivity-off", "proactivity is off: low-urgency action kept for the digest");
  }
  if (c.urgency === "high") return verdict("send", "high-urgency", "high urgency");

  const budget = dailyBudget[person.proactivity];
  if (quiet) return verdict("hold", "hold", "quiet hours");
  if (person.proactivity === "low") return verdict("hold", "hold", "proactivity is low");
  if (input.sentToday >= budget) return verdict("hold", "hold", `daily budget of ${budget} used (${input.sentToday} sent since local midnight)`);
  if (c.origin === "digest-item") return verdict("hold", "hold", "a digest item");
  return verdict("send", "send", `new, within the daily budget (${input.sentToday + 1} of ${budget})`);
}

/** The stricter of two decisions (send < hold < drop): the judge can never loosen the rules. */
export function stricter(a: NotificationDecision, b: NotificationDecision): NotificationDecision {
  const rank = { send: 0, hold: 1, drop: 2 } as const;
  return rank[a] >= rank[b] ? a : b;
}
