import type { TaskId } from "../ids.js";
import type { MonitorState, NotificationOrigin, Urgency } from "../storage/index.js";
import { compareMonitor } from "./monitor-state.js";
import { reportsOnlyTrivialChange, targetsOf } from "./change-text.js";
import { conceptsOf, differentSubjects, normaliseWords } from "./concepts.js";
import { saysNothingNew } from "./no-news.js";
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
  };
  now: Date;
  /** What was said to the person recently (any order). */
  said: SaidItem[];
  /** What the person said recently. */
  heard: HeardItem[];
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
/**
 * For reminders the person asked for, a same-worded message counts as a duplicate only this close
 * (a scheduler firing twice); a recurring reminder legitimately repeats its words every occurrence.
 */
export const reminderDuplicateWindowMs = 10 * 60_000;
/** A numeric change below this fraction of the earlier value is trivial when the sentence is otherwise the same. */
export const trivialNumericChange = 0.01;

/** Decides whether the candidate is new; the first reason that makes it stale wins. */
export function assessNovelty(input: NoveltyInput): NoveltyVerdict {
  const { candidate: c, now } = input;
  if (isNoNews(c.text)) return stale("empty", "empty or a no-news marker");
  if (c.occurrenceKey && input.occurrenceTaken) return stale("occurrence", `occurrence ${c.occurrenceKey} was already delivered`);
  if (c.monitor && input.monitorBaseline) {
    const change = compareMonitor(input.monitorBaseline, c.monitor);
    if (change.change !== "significant") return stale(change.change, change.detail);
    return { novel: true, reason: `monitor: ${change.detail}` };
  }
  const isReminder = c.origin === "reminder" || c.askedFor;
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
  return { novel: true, reason: "new content" };
}

/** Words that say an event happened once more ("again", "erneut"): a new occurrence, not a repeat. */
const again = /\b(again|once more|another|erneut|wieder|nochmals|de nuevo|otra vez|encore|de nouveau|novamente|outra vez|di nuovo|ancora una volta)\b/;

/** Words that say a reported state continues. */
const continuation = /\b(ongoing|still|continues|continuing|persists|persisting|weiterhin|noch immer|immer noch|sigue|continua|toujours|persiste|ainda|ancora)\b/;

const stale = (kind: StaleKind, reason: string): NoveltyVerdict => ({ novel: false, kind, reason });

/** Facts compared by identity (numbers are compared by magnitude elsewhere). */
const key = (f: Fact) => `${f.kind}:${f.value}`;
const identities = (a: Analysis) => new Set(a.facts.filter((f) => f.kind !== "num").map(key));
const numbers = (a: Analysis) => a.facts.filter((f) => f.kind === "num").map((f) => f.n ?? Number(f.value));
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
  if (!subset(mine.statuses, theirs.statuses)) return null;
  const ids = identities(mine);
  if (!subset(ids, identities(theirs))) return null;
  // Different subjects in the same words ("water bill" / "electricity bill"), or the same event happening again, are news.
  const [myConcepts, theirConcepts] = [conceptsOf(text), conceptsOf(earlier)];
  if (differentSubjects(myConcepts, theirConcepts)) return null;
  if (again.test(fold(text)) && !again.test(fold(earlier))) return null;
  const sameSubjects = myConcepts.size > 0 && subset(myConcepts, theirConcepts) && subset(theirConcepts, myConcepts);
  if (similarity(text, earlier) >= 0.75 && numbers(mine).every((n) => numbers(theirs).includes(n))) return { kind: "duplicate", reason: "near-duplicate of something already said" };
  // Synonyms and translations of the lexicon's subjects ("e-mail"/"email"/"correo") count as the same word.
  const words = jaccard(normaliseWords(mine.words), normaliseWords(theirs.words));
  const theirNums = numbers(theirs);
  // A target the text names ("your target is $330") is a reference the value moves toward, not a new value.
  const targets = targetsOf(text);
  const myNums = numbers(mine).filter((n) => !targets.includes(n) || theirNums.includes(n));
  const numsKnown = myNums.every((n) => theirNums.includes(n));
  const factCount = mine.facts.length;
  if (numsKnown) {
    // Same facts and status: a rewording (words overlap) or a translation (facts identify the incident).
    if (factCount > 0 && (words >= 0.3 || strong(mine) || factCount >= 2 || sameSubjects)) return { kind: "duplicate", reason: "the same facts were already said (reworded or in another language)" };
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
 * Every number of the new text is one the earlier text gave (in the same place when both give as
 * many), or within 1% of it (a move below
 * the noise), and no move passes another number the earlier text gave (a target). Null when any
 * number is new or moved by more.
 */
function trivialDrift(before: number[], after: number[], targets: number[] = []): string | null {
  const moves: string[] = [];
  const aligned = before.length === after.length;
  for (const [i, b] of after.entries()) {
    if (before.includes(b)) continue;
    // The same sentence shape keeps numbers in place; otherwise compare with the nearest earlier number.
    const a = aligned ? before[i]! : before.reduce<number | null>((best, n) => (best === null || Math.abs(n - b) < Math.abs(best - b) ? n : best), null);
    if (a === null || a === 0 || Math.abs(b - a) / Math.abs(a) >= trivialNumericChange) return null;
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
