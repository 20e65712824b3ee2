import { channelInWords } from "../../core/channels/index.js";
import { methodPhrase } from "../../core/policy/index.js";
import { KIND_WORDS } from "../shared/index.js";

/**
 * The activity log in words a person reads: every audit kind (KIND_WORDS, activity-kinds.ts) and
 * every Sentinel rule (decision reason) has a plain label in one table each; anything not in a
 * table still reads as words (`task.skipped` → "Task skipped"), never as an identifier.
 */
/** Sentinel's rule ids (`Decision.ruleId`, core/policy/rules.ts) as the reason in words. */
export const RULE_WORDS: Record<string, string> = {
  "allow-granted": "you allowed this before",
  "allow-internal": "it stays inside Familiar",
  "ask-write": "it changes or sends something",
  "ask-hard-to-undo": "it is hard to undo",
  "ask-read-new-destination": "it reads from a place Familiar has not used before",
  "ask-tainted-egress": "it would send data after reading content from outside",
  "ask-tainted-persistence": "it would keep something after reading content from outside",
  "ask-job-chain": "it would start more background work from background work",
  "allow-granted-persistence": "you allowed keeping this before",
  "deny-blocked-destination": "that destination is blocked",
  "secret-binding": "a secret may only go to the site it belongs to",
  default: "no rule covered it, so Familiar asks",
};

const DECISION_WORDS: Record<string, string> = { allow: "Allowed", ask: "Asked you first", deny: "Blocked" };

const tables = { kind: new Map(Object.entries(KIND_WORDS)), rule: new Map(Object.entries(RULE_WORDS)), decision: new Map(Object.entries(DECISION_WORDS)) };

/** An identifier as words: `task.skipped` → "Task skipped", `ask-write` → "ask write". */
function asWords(id: string, capital: boolean): string {
  const words = id.replace(/[._-]+/g, " ").trim();
  return capital ? words.charAt(0).toUpperCase() + words.slice(1) : words;
}

/** An audit kind in words. */
export function kindInWords(kind: string): string {
  return tables.kind.get(kind) ?? asWords(kind, true);
}

/** A Sentinel rule id in words (the "why" of a decision). */
export function ruleInWords(ruleId: string): string {
  return tables.rule.get(ruleId) ?? asWords(ruleId, false);
}

/**
 * Identifiers in core's summaries as words: channel names (`on local` → "in the web chat",
 * `via telegram` → "via Telegram") and grant descriptions (`web.fetch → GET anything on x` →
 * "read (GET) anything on x").
 */
export function channelsInWords(text: string): string {
  return text
    .replace(/\b[a-z]+\.[a-z_]+ → ([A-Z]+) (?:requests to )?/g, (_m, method: string) => {
      // The phrase with its preposition ("send data (POST) to"); what follows is the destination.
      const phrase = methodPhrase(method, "\u0000").replace(" \u0000", "");
      return `${phrase.charAt(0).toLowerCase()}${phrase.slice(1)} `;
    }).replace(/\b(on|via|from) (local|telegram|slack|discord|whatsapp)\b/g, (_m, prep: string, channel: string) => `${channel === "local" && prep === "on" ? "in" : prep} ${channelInWords(channel)}`);
}

/** An audit event's data fields this module reads. */
interface EventData {
  get(key: string): string | null;
  list(key: string): string[];
}

/** One activity line: `label` (the kind in words), `summary` and `why` as sentences or phrases. */
export function activityInWords(kind: string, summary: string, data: EventData): { label: string; summary: string; why: string | null } {
  const label = kindInWords(kind);
  if (kind === "sentinel.decision") {
    const method = data.get("method");
    const where = data.list("destinations").join(", ");
    const what = method ? methodPhrase(method, where) : `Use ${(data.get("tool") ?? "a tool").replace(/[_.]+/g, " ")}`;
    const effect = data.get("effect");
    const rule = data.get("ruleId");
    return { label, summary: `${tables.decision.get(effect ?? "") ?? asWords(effect ?? "decided", true)}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`, why: rule ? ruleInWords(rule) : data.get("reason") };
  }
  if (kind === "outbound.sent") {
    const start = data.get("start");
    const channel = data.get("channel");
    if (start !== null && channel !== null) {
      const updated = summary.startsWith("Updated");
      const where = channel === "local" ? "in the web chat" : `on ${channelInWords(channel)}`;
      const shown = start.replace(/\s+/g, " ").trim();
      return { label, summary: `${updated ? "Updated a message" : "Sent"} ${where}: “${shown}${/characters\)$/.test(summary) && start.length >= 80 ? "…" : ""}”`, why: null };
    }
  }
  const why = data.get("reason");
  return { label, summary: channelsInWords(summary), why: why === null ? null : channelsInWords(why) };
}
