import type { Person, NotificationRecord, NotificationDecision } from "../storage/types.js";
import { localMinutes } from "../time/zones.js";

/**
 * The notification filter's rules: a background activation's output is a candidate message, and the
 * filter decides `send` now, `hold` for the digest, or `drop`. Deterministic and explainable: every
 * decision carries the reasons it was made for. It fails closed: anything it cannot judge is held.
 */

/** A candidate message from a background activation. */
export interface Candidate {
  text: string;
  /** The person asked for this exact notification (`schedule_wakeup` with notify "always"). */
  askedFor: boolean;
  /** The person must act: a question to them or an approval request. */
  mustAct: boolean;
  /** Explicit urgency from the producer; otherwise inferred from the text. */
  urgency?: "low" | "normal" | "high";
}

export interface FilterVerdict {
  decision: NotificationDecision;
  reasons: string[];
}

/** Markers a model uses to say "nothing to report"; only such a marker (plus decoration) is dropped. */
const noNewsMarkers = ["nothing_to_report", "nothing to report", "no_reply", "no reply", "heartbeat_ok", "no news", "no updates", "nothing new", "noop"];

/** Strips whitespace, punctuation and markdown decoration, lower-cased. */
export function normalizeForMarker(text: string): string {
  return text
    .toLowerCase()
    .replace(/[*_`~#>\[\]()!.,;:?"'“”‘’\-–—\s]+/g, " ")
    .trim();
}

/**
 * True when the text is empty or only a "nothing to report" marker, whatever whitespace,
 * punctuation or markdown surrounds it (field case P2): such output is never delivered.
 */
export function isNoNews(text: string): boolean {
  const n = normalizeForMarker(text);
  if (n === "") return true;
  return noNewsMarkers.some((m) => normalizeForMarker(m) === n);
}

/** Pleasantries that carry no information on their own (field case P1). */
const chatterPhrases = [
  /\bjust (checking|popping) in\b/g,
  /\bchecking in\b/g,
  /\b(hope|hoping) (you('| a)re|you are|your day is|all is) [a-z ]{0,30}(well|good|great|going well)\b/g,
  /\bhave a (great|good|nice|lovely|wonderful) (day|evening|weekend|night|one)\b/g,
  /\b(hi|hey|hello|hiya|good (morning|afternoon|evening))( there)?\b/g,
  /\bhow('s| is| are) (it going|things|your day|you( doing)?)\b/g,
  /\b(let me know|just let me know) if (you need|there('s| is)) anything\b/g,
  /\b(i'?m|i am) (here|around) if you need (me|anything)\b/g,
  /\bjust (a )?(quick )?(reminder that i'?m here|wanted to say hi)\b/g,
  /\b(nothing|not much) (new|to report|happening)( (today|right now|at the moment))?\b/g,
  /\ball (good|quiet)( here)?\b/g,
];

/** Words that add little (so chatter plus "you", "today" is still chatter). */
const stopWords = new Set("a an the i im i'm you your me my we our it its is are was be to of and or for on in at with just so here there today now again all any anything some this that do did have has".split(" "));

/** True when the text is small talk without information (what is left after pleasantries is tiny). */
export function isChatter(text: string): boolean {
  let rest = text.toLowerCase().replace(/[`*_~>#]/g, " ");
  for (const p of chatterPhrases) rest = rest.replace(p, " ");
  const words = rest.match(/[\p{L}\p{N}'']+/gu) ?? [];
  const content = words.filter((w) => !stopWords.has(w));
  return content.length < 3 && !/\d/.test(rest) && !/https?:\/\//.test(text);
}

const deadlinePatterns = [
  /\b(deadline|due|expires?|expiring|last chance|ends? (today|tonight|soon)|closes? (today|tonight|soon)|urgent|asap|immediately|right away|final call)\b/i,
  /\bby (today|tonight|tomorrow|noon|midnight|\d{1,2}(:\d{2})?\s?(am|pm)?)\b/i,
  /\b(in|within) (\d+|a|an|one|two|few) (minutes?|hours?|mins?)\b/i,
  /\b(today|tonight|tomorrow morning|this (morning|afternoon|evening))\b/i,
];

/** Urgency from the text: deadlines and near times make it high. */
export function inferUrgency(text: string): "low" | "normal" | "high" {
  return deadlinePatterns.some((p) => p.test(text)) ? "high" : "normal";
}

/** Word-trigram Jaccard similarity in [0, 1]. */
export function similarity(a: string, b: string): number {
  const grams = (t: string) => {
    const w = t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const out = new Set<string>();
    if (w.length < 3) out.add(w.join(" "));
    for (let i = 0; i + 2 < w.length; i++) out.add(`${w[i]} ${w[i + 1]} ${w[i + 2]}`);
    return out;
  };
  const x = grams(a);
  const y = grams(b);
  let inter = 0;
  for (const g of x) if (y.has(g)) inter++;
  const union = x.size + y.size - inter;
  return union === 0 ? 1 : inter / union;
}

/** Messages sent first per day, by proactivity. */
export const dailyBudget: Record<Person["proactivity"], number> = { off: 0, low: 2, normal: 5, high: 12 };

/** True when `now` falls in the person's quiet hours (wall clock in their time zone; may wrap midnight). */
export function inQuietHours(person: Person, now: Date): boolean {
  if (!person.quietHours) return false;
  const toMin = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const from = toMin(person.quietHours.from);
  const to = toMin(person.quietHours.to);
  const local = localMinutes(now, person.timeZone);
  return from <= to ? local >= from && local < to : local >= from || local < to;
}

/**
 * Decides what to do with a candidate. `recent` are the person's notification decisions of the last
 * days (newest first); `recentlySaid` are texts Familiar recently said to the person.
 */
export function decide(input: { candidate: Candidate; person: Person; now: Date; recent: NotificationRecord[]; recentlySaid: string[] }): FilterVerdict {
  const { candidate, person, now } = input;
  const reasons: string[] = [];
  if (isNoNews(candidate.text)) return { decision: "drop", reasons: ["nothing to report"] };

  const urgency = candidate.urgency ?? inferUrgency(candidate.text);
  const quiet = inQuietHours(person, now);

  if (candidate.askedFor) {
    reasons.push("the person asked for this notification");
    return { decision: "send", reasons };
  }
  if (candidate.mustAct) {
    if (quiet && urgency !== "high") return { decision: "hold", reasons: ["needs the person, but it is quiet hours and not urgent"] };
    return { decision: "send", reasons: [quiet ? "urgent and needs the person" : "needs the person to act"] };
  }

  const duplicate = input.recentlySaid.find((t) => similarity(t, candidate.text) >= 0.6);
  if (duplicate !== undefined) return { decision: "drop", reasons: ["near-duplicate of something recently said"] };
  if (isChatter(candidate.text)) return { decision: "drop", reasons: ["small talk without news"] };

  if (person.proactivity === "off") return { decision: "hold", reasons: ["proactivity is off: kept for the digest"] };
  if (quiet && urgency !== "high") return { decision: "hold", reasons: ["quiet hours"] };

  const dayAgo = now.getTime() - 86_400_000;
  const sentToday = input.recent.filter((r) => r.decision === "send" && r.at.getTime() > dayAgo).length;
  const budget = dailyBudget[person.proactivity];
  if (sentToday >= budget && urgency !== "high") return { decision: "hold", reasons: [`daily budget of ${budget} proactive messages used`] };

  if (urgency === "high") reasons.push("time-sensitive");
  if (person.proactivity === "low" && urgency !== "high") return { decision: "hold", reasons: ["proactivity is low and this is not time-sensitive"] };
  reasons.push("new information within the daily budget");
  return { decision: "send", reasons };
}
