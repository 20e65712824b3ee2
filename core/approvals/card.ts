/**
 * Builds the approval card view model (core/channels/card-view.ts) from a stored request: a plain-language
 * sentence, the method in words, every destination in full, the payload decoded, headers by name,
 * where the destination came from, the expiry in the person's own time zone plus a relative time,
 * what each wider choice covers, and the buttons the request may offer.
 *
 * Budgets keep a card within every messenger's limits (Telegram 4,096 characters, Slack 3,000 per
 * section): a field longer than its budget is cut *visibly* — the field says how many characters are
 * not shown, a warning says so, and the request offers only Deny (decided when Sentinel asks, with
 * {@link cardFits}). Surfaces with room (the web chat) get the complete payload as `full`.
 */
import type { Person } from "../persons/records.js";
import type { ApprovalChoiceKind } from "./records.js";
import type { CardButton, CardField, CardView } from "../channels/index.js";
import { describePattern, methodGerund, methodPhrase, patternFor, SESSION_IDLE_MS } from "../policy/index.js";
import type { ApprovalDetails } from "./request.js";
import type { ActionSummary } from "./summary.js";

/** Characters each part of the card may take. */
const BUDGET = { target: 600, body: 1_500, decoded: 500, headers: 500, other: 300, otherTotal: 900 } as const;

/** The scope names the card's explanations use ("This task: until …"). */
export const CHOICE_LABELS: Record<ApprovalChoiceKind, string> = {
  once: "Approve once",
  task: "This task",
  session: `This session (ends after ${SESSION_IDLE_MS / 3_600_000} h away)`,
  until: "For 24 h",
  always: "Always",
  deny: "Deny",
};

/** At most this many characters on a button (Slack allows 75, Discord 80; Telegram shows about 40 on a phone). */
const BUTTON_CHARS = 48;

/**
 * A button's label: a verb and its scope ("Approve once", "Allow for this task", "Allow for 24 h",
 * "Always allow sending data to shop.example"); the wide choice names what it covers, cut to
 * {@link BUTTON_CHARS} (the card's scope lines say it whole).
 */
export function choiceLabel(choice: ApprovalChoiceKind, method: string, where: string): string {
  switch (choice) {
    case "task":
      return "Allow for this task";
    case "session":
      return `Allow for this session (until ${SESSION_IDLE_MS / 3_600_000} h away)`;
    case "until":
      return "Allow for 24 h";
    case "always": {
      const host = where.split("/")[0] ?? where;
      const label = `Always allow ${methodGerund(method, host)}`;
      return label.length > BUTTON_CHARS ? `${label.slice(0, BUTTON_CHARS - 1)}…` : label;
    }
    default:
      return CHOICE_LABELS[choice];
  }
}

function cut(label: string, value: string, format: CardField["format"], budget: number): CardField {
  const chars = [...value];
  if (chars.length <= budget) return { label, value, format, hidden: 0 };
  return { label, value: `${chars.slice(0, budget).join("")}…`, format, hidden: chars.length - budget };
}

/** The fields that show the request itself (destinations, payload, headers, other arguments). */
export function requestFields(summary: ActionSummary): CardField[] {
  const fields: CardField[] = [{ label: "Action", value: methodPhrase(summary.method), format: "text", hidden: 0 }];
  for (const t of summary.targets) fields.push(cut(t.label, t.value, "code", BUDGET.target));
  if (summary.body !== null) {
    const body = summary.body;
    const field = cut(`Body (${body.label}, ${body.length.toLocaleString("en-US")} characters)`, body.text || "(empty)", "block", BUDGET.body);
    // Content beyond what Sentinel kept for the full view counts as not shown too.
    fields.push(body.text.length < body.length && body.label === "text" ? { ...field, hidden: field.hidden + (body.length - body.text.length) } : field);
  }
  if (summary.headers.length > 0) fields.push(cut("Headers", summary.headers.join("\n"), "block", BUDGET.headers));
  if (summary.decoded.length > 0) fields.push(cut("Encoded values, decoded", summary.decoded.join("\n"), "block", BUDGET.decoded));
  let otherLeft: number = BUDGET.otherTotal;
  for (const o of summary.other) {
    const budget = Math.max(0, Math.min(BUDGET.other, otherLeft));
    const field = cut(o.name, o.value, "code", budget);
    otherLeft -= [...field.value].length;
    fields.push(field);
  }
  return fields;
}

/** True when the whole request fits on a card (else only Deny may be offered). */
export function cardFits(summary: ActionSummary): boolean {
  return requestFields(summary).every((f) => f.hidden === 0);
}

/** "Wed 3 Dec, 14:32" in the person's zone and locale. */
export function localTime(at: Date, person: Pick<Person, "timeZone" | "locale">): string {
  try {
    return new Intl.DateTimeFormat(person.locale, { timeZone: person.timeZone, weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" }).format(at);
  } catch {
    return at.toISOString();
  }
}

/** "in 24 hours", "in 5 minutes", "2 days ago" in the person's locale. */
export function relativeTime(at: Date, now: Date, locale: string): string {
  const s = Math.round((at.getTime() - now.getTime()) / 1000);
  const abs = Math.abs(s);
  const [value, unit]: [number, Intl.RelativeTimeFormatUnit] =
    abs < 90 ? [s, "second"] : abs < 90 * 60 ? [Math.round(s / 60), "minute"] : abs < 48 * 3600 ? [Math.round(s / 3600), "hour"] : [Math.round(s / 86_400), "day"];
  try {
    return new Intl.RelativeTimeFormat(locale, { numeric: "always" }).format(value, unit);
  } catch {
    return new Intl.RelativeTimeFormat("en", { numeric: "always" }).format(value, unit);
  }
}

function provenanceField(details: ApprovalDetails): CardField {
  const p = details.provenance;
  switch (p.kind) {
    case "person":
      return { label: "The address came from", value: "your own message", format: "text", hidden: 0 };
    case "memory":
      return { label: "The address came from", value: "your saved memory", format: "text", hidden: 0 };
    case "untrusted":
      return p.source !== null
        ? cut("The address came from outside content (not you)", p.source, "code", BUDGET.target)
        : { label: "The address came from", value: "outside content (not you)", format: "text", hidden: 0 };
    case "familiar":
      return { label: "The address came from", value: "Familiar itself — it is not in your recent messages or memory", format: "text", hidden: 0 };
  }
}

/** What a card needs besides the request. */
export interface CardContext {
  person: Pick<Person, "timeZone" | "locale">;
  /** The button id of each offered choice. */
  buttonIds: Partial<Record<ApprovalChoiceKind, string>>;
  /** The task's title (for the "This task" explanation); null for a conversation turn. */
  taskTitle: string | null;
  now: Date;
  expiresAt: Date;
}

/** Builds the pending card of a request (see module doc). */
export function buildApprovalCard(approvalId: string, details: ApprovalDetails, context: CardContext): CardView {
  const s = details.summary;
  const fields = requestFields(s);
  fields.push(provenanceField(details));
  fields.push({ label: "Expires", value: `${localTime(context.expiresAt, context.person)} (${context.person.timeZone}), ${relativeTime(context.expiresAt, context.now, context.person.locale)}`, format: "text", hidden: 0 });

  const notices: CardView["notices"] = [];
  const hiddenChars = fields.reduce((n, f) => n + f.hidden, 0);
  if (hiddenChars > 0) {
    notices.push({ tone: "warning", text: `${hiddenChars.toLocaleString("en-US")} characters of this request are not shown here, so it can only be denied from this card.` });
  }
  if (s.hidden > 0) notices.push({ tone: "warning", text: `The request contains ${s.hidden} hidden or direction-changing character${s.hidden === 1 ? "" : "s"}, shown as ⟦U+…⟧.` });
  if (s.addressEncoded > 0) {
    notices.push({ tone: "warning", text: `The address carries encoded data (${s.addressEncoded} value${s.addressEncoded === 1 ? "" : "s"} in its query or path): read “Encoded values, decoded” to see what would be sent.` });
  }
  if (s.targets.some((t) => t.lookalike)) notices.push({ tone: "warning", text: "The address uses non-Latin letters (shown in punycode, xn--…): it may imitate another site." });
  if (details.restriction !== null) notices.push({ tone: "warning", text: details.restriction });

  const wider = details.offered.filter((c) => c !== "once" && c !== "deny");
  const scopes: string[] = [];
  const pattern = patternFor(details.action, "payload");
  if (wider.length > 0 && pattern !== null) {
    scopes.push(`${wider.map((c) => CHOICE_LABELS[c].replace(/ \(.*\)$/, "")).join(", ")} cover only: ${describePattern(pattern)}.`);
    if (wider.includes("task")) scopes.push(context.taskTitle ? `This task: until “${context.taskTitle}” is finished.` : "This task: until I have finished answering this message.");
    if (wider.includes("session")) scopes.push(`This session: until you have been away for ${SESSION_IDLE_MS / 3_600_000} hours.`);
    if (wider.includes("until")) {
      const until = new Date(context.now.getTime() + 24 * 3_600_000);
      scopes.push(`For 24 h: until ${localTime(until, context.person)}, counted from your answer.`);
    }
  }
  if (details.offered.includes("once")) scopes.unshift("Approve once: exactly this request, one time.");

  const buttons: CardButton[] = details.offered.flatMap((c): CardButton[] => {
    const id = context.buttonIds[c];
    return id === undefined ? [] : [{ id, label: choiceLabel(c, s.method, s.where), style: c === "deny" ? "danger" : c === "once" ? "primary" : "secondary" }];
  });
  const full = hiddenChars > 0 && s.body !== null ? { label: `Complete body (${s.body.label})`, text: s.body.text } : undefined;
  return {
    v: 1,
    kind: "approval",
    approvalId,
    headline: [{ text: "Familiar wants to " }, { text: s.methodWords.replace(/ \([A-Z]+\)$/, ""), strong: true }, { text: " " }, { text: s.where, code: true }],
    fields,
    notices,
    scopes,
    buttons,
    status: null,
    ...(full ? { full } : {}),
  };
}

/** The card after a decision: same facts, no buttons, the outcome line. */
export function decidedCard(card: CardView, status: NonNullable<CardView["status"]>): CardView {
  return { ...card, buttons: [], status };
}
