import type { TaskId } from "../ids.js";
import type { MonitorState, NotificationOrigin, Urgency } from "./records.js";
import { compareMonitor, minimumMove } from "./monitor-state.js";
import { reportsOnlyTrivialChange, targetsOf } from "./change-text.js";
import { conceptsOf, differentSubjects, normaliseWords } from "./concepts.js";
import { saysNothingNew } from "./no-news.js";
import { affirmedStatuses, carriesNoNews, changeWords } from "./shape.js";
import {
  analyse,
  fold,
  hasRestatementMarker,
  isChatter,
  isNoNews,
  jaccard,
  similarity,
  type Analysis,
  type Fact,
} from "./text.js";

/**
 * The deterministic novelty stage (rule 1 of the filter): does a candidate carry anything the
 * person has not been told? Decided from occurrence keys, normalised text, structured monitor
 * state and numeric thresholds; no model involved.
 */

/** Something Familiar said (or holds for the digest) to the person. */
export interface SaidItem {
  at: Date;
  text: string;
  taskId?: TaskId | null;
  occurrenceKey?: string | null;
}

/** Something the person said. */
export interface HeardItem {
  at: Date;
  text: string;
}

export interface NoveltyInput {
  candidate: {
    text: string;
    origin: NotificationOrigin;
    /** `notify: always` that counts (the person's own words, under the cap). */
    askedFor: boolean;
    needsAction: boolean;
    urgency: Urgency;
    occurrenceKey: string | null;
    monitor: MonitorState | null;
    taskId: TaskId | null;
    /** The goal the message serves (its words are known to the person). */
    goal?: string | null;
  };
  now: Date;
  /** What was said to the person recently (any order). */
  said: SaidItem[];
  /** What the person said recently. */
  heard: HeardItem[];
  /** What was said to the person in the last week (`continuationWindowMs`), for "still the same" reports; defaults to `said`. */
  history?: SaidItem[];
  /** A sent or held record with the candidate's occurrence key exists. */
  occurrenceTaken: boolean;
  /** Monitor state of the last report about the same subject the person got (or will get). */
  monitorBaseline: MonitorState | null;
}

/** Why a candidate has no new content. */
export type StaleKind = "empty" | "occurrence" | "unchanged" | "trivial" | "chatter" | "restatement" | "duplicate";

export type NoveltyVerdict = { novel: true; reason: string } | { novel: false; kind: StaleKind; reason: string };

/** Near-duplicates count within this window (issue 12: "something said in the last 24 h"). */
export const duplicateWindowMs = 24 * 3_600_000;
/** A report that says a state continues ("still in review") is no news when nothing changed within this window. */
export const continuationWindowMs = 7 * 24 * 3_600_000;
/**
 * For a reminder whose "always" did not count (not the person's words, or over the hourly cap), a
 * same-worded message counts as a duplicate only this close; a recurring reminder legitimately
 * repeats its words every occurrence. (A reminder the person asked for is never compared by words.)
 */
export const reminderDuplicateWindowMs = 10 * 60_000;
/** A numeric change below this fraction of the earlier value is trivial when the sentence is otherwise the same. */
export const trivialNumericChange = 0.01;

/** Decides whether the candidate is new; the first reason that makes it stale wins. */
export function assessNovelty(input: NoveltyInput): NoveltyVerdict {
  const { candidate: c, now } = input;
  if (isNoNews(c.text)) return stale("empty", "empty or a no-news marker");
  if (c.occurrenceKey && input.occurrenceTaken) return stale("occurrence", `occurrence ${c.occurrenceKey} was already delivered`);
  // What the person asked for is deduplicated by its occurrence, and by nothing else (issue 18, field
  // case E5): never by its words against other messages — the confirmation that scheduled it restates
  // it ("Scheduled: pay invoice INV-2231 at 19:00." then "Reminder: pay invoice INV-2231.") — nor by a
  // monitor's unchanged state, small talk or worth. A re-run of the same activation is kept from
  // saying it twice by its delivery key in the outbox.
  if (c.askedFor) return { novel: true, reason: c.occurrenceKey ? `asked for: occurrence ${c.occurrenceKey} not yet delivered` : "asked for" };
  if (c.monitor && input.monitorBaseline) {
    const change = compareMonitor(input.monitorBaseline, c.monitor);
    if (change.change !== "significant") return stale(change.change, change.detail);
    return { novel: true, reason: `monitor: ${change.detail}` };
  }
  // A reminder whose "always" did not count (not the person's words, or over the hourly cap) is an ordinary update.
  const isReminder = c.origin === "reminder";
  // A reminder's words are what the person asked to hear, and an approval is a request: neither is small talk.
  if (!isReminder && c.origin !== "approval" && isChatter(c.text)) return stale("chatter", "small talk without news");
  // A sentence saying nothing is new; not for anything that asks the person to act or is urgent.
  const routine = !isReminder && c.origin !== "approval" && c.origin !== "question" && !c.needsAction && c.urgency !== "high" && c.urgency !== "critical";
  if (routine && saysNothingNew(c.text)) return stale("empty", "says there is nothing new");
  const selfTrivial = routine ? reportsOnlyTrivialChange(c.text, trivialNumericChange) : null;
  if (selfTrivial) return stale("trivial", selfTrivial);

  const mine = analyse(c.text);
  if (!isReminder && c.origin !== "approval") {
    const restated = restatement(c, mine, input.heard, now);
    if (restated) return stale("restatement", restated);
  }

  const window = isReminder ? reminderDuplicateWindowMs : duplicateWindowMs;
  for (const p of input.said) {
    const age = now.getTime() - p.at.getTime();
    if (age < 0 || age >= window) continue;
    // Another occurrence of the same recurring work is not a duplicate of this one.
    if (isReminder && c.taskId && p.taskId === c.taskId && p.occurrenceKey && c.occurrenceKey && p.occurrenceKey !== c.occurrenceKey) continue;
    const why = sameContent(c.text, mine, p.text);
    if (why) return stale(why.kind, `${why.reason} (said ${Math.round(age / 60_000)} min ago)`);
  }
  // No news by its shape: no number, time, date, code, name or status the person was not already
  // told (or said), and no change about something new — however the sentence is worded.
  if (routine) {
    // A text that says the state continues ("still in review", "unchanged") is weighed against the last week.
    const lookback = continuation.test(fold(c.text)) || /\b(unchanged|no change|unverandert|sin cambios|sans changement|inalterad[oa]|invariat[oa])\b/.test(fold(c.text)) ? continuationWindowMs : duplicateWindowMs;
    // What Familiar told the person; the person's own words are not news they received ("tell me when my visa is approved").
    const told = [...input.said, ...(input.history ?? [])].filter((p) => p.at.getTime() <= now.getTime() && now.getTime() - p.at.getTime() < lookback).map((p) => p.text);
    if (carriesNoNews(c.text, told, c.goal ? [c.goal] : [])) return stale("empty", told.length > 0 ? "no new number, name, status or change beyond what was already said" : "no number, name, status or change: nothing to tell");
  }
  return { novel: true, reason: "new content" };
}

/** Words that say an event happened once more or in addition ("again", "too", "erneut", "también"): a new occurrence, not a repeat. */
const again =
  /\b(again|once more|another|erneut|wieder|nochmals|de nuevo|otra vez|encore|de nouveau|novamente|outra vez|di nuovo|ancora una volta|too|also|as well|in addition|additional|second|auch|ebenfalls|zusatzlich|tambien|ademas|aussi|egalement|tambem|anche|pure)\b/;
/** …unless it is the telling that happens again ("heads up again", "reminding you again"): a repeat. */
const tellingAgain =
  /\b(heads[- ]?up|reminder|reminding you|flagging( this| it)?|mentioning( this| it)?|telling you|letting you know|pinging you|alerting you|warning you|just so you know|fyi|noting( this| it)?|hinweis|erinnerung|aviso|recordatorio|rappel|lembrete|promemoria)\s+(again|once more|erneut|nochmals|de nuevo|otra vez|encore|de nouveau|novamente|di nuovo)\b/g;
const saysAgain = (text: string) => again.test(fold(text).replace(tellingAgain, " "));

/** Words that say a reported state continues. */
const continuation = /\b(ongoing|still|continues|continuing|persists|persisting|weiterhin|noch immer|immer noch|sigue|continua|toujours|persiste|ainda|ancora)\b/;

const stale = (kind: StaleKind, reason: string): NoveltyVerdict => ({ novel: false, kind, reason });

/** Facts compared by identity (numbers are compared by magnitude elsewhere). */
const key = (f: Fact) => `${f.kind}:${f.value}`;
const identities = (a: Analysis) => new Set(a.facts.filter((f) => f.kind !== "num").map(key));
/** The numbers of a text; a reference ("#44120") is also the number 44120 another text may write bare. */
const numbers = (a: Analysis) => [
  ...a.facts.filter((f) => f.kind === "num").map((f) => f.n ?? Number(f.value)),
  ...a.facts.filter((f) => f.kind === "code" && /^#\d+$/.test(f.value)).map((f) => Number(f.value.slice(1))),
];
/** Identities of `a` not also written as a number in `b` ("#44120" after "order 44120"). */
const identitiesAgainst = (a: Analysis, b: Analysis) => {
  const bare = new Set(numbers(b));
  return new Set([...identities(a)].filter((id) => !(/^code:#\d+$/.test(id) && bare.has(Number(id.slice(6))))));
};
/** Direction words follow from the numbers ("above your target", "fell"): with numbers on both sides, the numbers decide. */
const directions = new Set(["above", "below", "fell", "rose"]);
const subset = <T>(a: Set<T>, b: Set<T>) => [...a].every((x) => b.has(x));
/** A fact strong enough to identify an incident on its own (a code, link, clock time or date). */
const strong = (a: Analysis) => a.facts.some((f) => f.kind !== "num");

/**
 * Whether `text` says nothing beyond `earlier`: the same words (reworded or translated: the same
 * facts and status words), or the same sentence with numbers moved trivially.
 */
export function sameContent(text: string, mine: Analysis, earlier: string): { kind: "duplicate" | "trivial"; reason: string } | null {
  const theirs = analyse(earlier);
  // A new status ("today" after "tomorrow", "cancelled" after "delayed") or a new fact is news, however similar the wording.
  const numeric = numbers(mine).length > 0 && numbers(theirs).length > 0;
  // Statuses as affirmed: "The school confirmed the trip." after "…hasn't confirmed the trip yet." is news.
  const [myStatuses, theirStatuses] = [affirmedStatuses(text), affirmedStatuses(earlier)];
  const statuses = numeric ? new Set([...myStatuses].filter((st) => !directions.has(st))) : myStatuses;
  if (!subset(statuses, theirStatuses)) return null;
  const ids = identitiesAgainst(mine, theirs);
  if (!subset(ids, identitiesAgainst(theirs, mine))) return null;
  // Different subjects in the same words ("water bill" / "electricity bill"), or the same event happening again, are news.
  const [myConcepts, theirConcepts] = [conceptsOf(text), conceptsOf(earlier)];
  if (differentSubjects(myConcepts, theirConcepts)) return null;
  if (saysAgain(text) && !saysAgain(earlier)) return null;
  const sameSubjects = myConcepts.size > 0 && subset(myConcepts, theirConcepts) && subset(theirConcepts, myConcepts);
  if (similarity(text, earlier) >= 0.75 && numbers(mine).every((n) => numbers(theirs).includes(n))) return { kind: "duplicate", reason: "near-duplicate of something already said" };
  // Synonyms and translations of the lexicon's subjects ("e-mail"/"email"/"correo") count as the same word.
  const words = jaccard(normaliseWords(mine.words), normaliseWords(theirs.words));
  const theirNums = numbers(theirs);
  // A target the text names ("your target is $330") is a reference the value moves toward, not a new value.
  const targets = targetsOf(text);
  const myNums = derivedOmitted(numbers(mine).filter((n) => !targets.includes(n) || theirNums.includes(n)), theirNums, targets);
  const numsKnown = myNums.every((n) => theirNums.includes(n));
  const factCount = mine.facts.length;
  if (numsKnown) {
    // Same facts and status: a rewording (words overlap) or a translation (facts identify the incident).
    // …but not when it reports a change the earlier text did not ("1Z84W2: delivery exception, address
    // needs correction" after "1Z84W2 in transit"; a translation keeps the change words on both sides).
    const newChange = changeWords(text).size > 0 && changeWords(earlier).size === 0;
    if (factCount > 0 && (words >= 0.3 || ((strong(mine) || factCount >= 2) && !newChange) || sameSubjects)) return { kind: "duplicate", reason: "the same facts were already said (reworded or in another language)" };
    // The same incident found again: it says so ("ongoing", "still") with the same status about the same thing.
    if (continuation.test(fold(text)) && mine.statuses.size > 0 && subset(theirs.statuses, mine.statuses) && words >= 0.3) return { kind: "duplicate", reason: "the same incident, reported again as ongoing" };
    if (factCount === 0 && words >= 0.5 && mine.words.size + mine.statuses.size >= 2) return { kind: "duplicate", reason: "reworded duplicate of something already said" };
    // A translation without facts: the same subjects (two or more) and no new status.
    if (factCount === 0 && sameSubjects && myConcepts.size >= 2) return { kind: "duplicate", reason: "the same subjects and status were already said (in other words or another language)" };
    return null;
  }
  if (words >= 0.3 || strong(mine)) {
    const change = trivialDrift(theirNums, myNums, targets);
    if (change) return { kind: "trivial", reason: change };
  }
  return null;
}

/**
 * Drops the numbers of the new text that only restate a difference: the move from an earlier
 * number ("down $2 to $1,497.99" after "$1,499.99") or the distance left to a target ("$19.49 above
 * your $330 target"). Cent-rounded; the values themselves stay.
 */
function derivedOmitted(mine: number[], before: number[], targets: number[]): number[] {
  const close = (a: number, b: number) => Math.abs(a - b) < 0.006 + Math.abs(b) * 1e-9;
  const values = mine.filter((n) => !mine.some((m) => m !== n && before.some((b) => close(Math.abs(m - b), n)) && m > n));
  return values.filter((n) => !values.some((m) => m !== n && targets.some((t) => close(Math.abs(m - t), n))));
}

/**
 * Every number of the new text is one the earlier text gave (in the same place when both give as
 * many), or within 1% of it (a move below the noise) — with a target named, within a quarter of the
 * distance to it (`minimumMove`) — and no move passes another number the earlier text gave or a
 * target. Null when any number is new or moved by more.
 */
function trivialDrift(before: number[], after: number[], targets: number[] = []): string | null {
  const moves: string[] = [];
  const aligned = before.length === after.length;
  for (const [i, b] of after.entries()) {
    if (before.includes(b)) continue;
    // The same sentence shape keeps numbers in place; otherwise compare with the nearest earlier number.
    const a = aligned ? before[i]! : before.reduce<number | null>((best, n) => (best === null || Math.abs(n - b) < Math.abs(best - b) ? n : best), null);
    if (a === null || a === 0 || Math.abs(b - a) >= Math.max(Math.abs(a) * trivialNumericChange, minimumMove(a, undefined, targets))) return null;
    if ([...before, ...targets].some((t) => t !== a && Math.sign(a - t) !== Math.sign(b - t))) return null;
    moves.push(`${a} → ${b}`);
  }
  return moves.length ? `trivial change of a status already reported (${moves.join(", ")})` : null;
}

/** A restatement of what the person said: close to their recent words, or framed as one with nothing new. */
function restatement(c: NoveltyInput["candidate"], mine: Analysis, heard: HeardItem[], now: Date): string | null {
  const recent = heard.filter((h) => now.getTime() - h.at.getTime() <= duplicateWindowMs && h.at.getTime() <= now.getTime());
  for (const h of recent) {
    const theirs = analyse(h.text);
    if (similarity(c.text, h.text) >= 0.6) return "restates what the person said";
    const sameFacts = mine.facts.length > 0 && subset(new Set(mine.facts.map(key)), new Set(theirs.facts.map(key)));
    if (sameFacts && subset(mine.statuses, theirs.statuses) && jaccard(mine.words, theirs.words) >= 0.4) return "restates what the person said";
  }
  if (!hasRestatementMarker(c.text) || c.needsAction || c.urgency === "high" || c.urgency === "critical" || c.text.includes("?")) return null;
  if (recent.length === 0) return "only repeats back what the person said";
  const told = new Set(recent.flatMap((h) => analyse(h.text).facts.map(key)));
  return mine.facts.every((f) => told.has(key(f))) ? "only repeats back what the person said" : null;
}
