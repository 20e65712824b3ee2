import { minimumMove } from "./monitor-state.js";
import { fold } from "./text.js";

/**
 * Changes a message reports about itself ("went from $349.99 to $349.49", "now €629 (was €629.90)",
 * "dropped by $0.50 to $248.50", "up 0.2%", "um 0,50 $ auf 349,50 $ gefallen") and the targets it
 * names ("your target is $330", "Ziel: 330 $"), so that a trivial move is recognised as trivial even
 * without an earlier message to compare with (issue 12: "a $0.50 move toward a $330 target").
 * Lexicons cover English, German, Spanish, French, Portuguese and Italian.
 */

/** A reported change of one value. */
export interface ReportedChange {
  before: number;
  after: number;
}

/** A number as written in prose: 1,234.50 / 1.234,50 / 349,50 / 0.5. */
const num = String.raw`(\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d+(?:[.,]\d+)?)`;
/** Currency marks and spaces that may surround a number. */
const cur = String.raw`\s*(?:[$€£¥₹]|r\$|us\$|usd|eur|gbp|chf|brl|inr|jpy)?\s*`;

/** Reads a prose number (null when unreadable). */
export function proseNumber(raw: string): number | null {
  let s = raw;
  if (/^\d{1,3}(\.\d{3})+(,\d{1,2})?$/.test(s)) s = s.replace(/\./g, "").replace(",", ".");
  else if (/^\d{1,3}(,\d{3})+(\.\d{1,2})?$/.test(s)) s = s.replace(/,/g, "");
  else if (/^\d+,\d+$/.test(s)) s = s.replace(",", ".");
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

const fromTo = new RegExp(String.raw`\b(from|von|de|da|desde)${cur}${num}${cur}(?:to|auf|a|para|à|al|zu|nach)${cur}${num}`, "g");
const wasNow = new RegExp(String.raw`${num}${cur}\(\s*(?:was|previously|before|yesterday|last week|vorher|zuvor|bisher|gestern|antes|ayer|avant|auparavant|hier|ontem|prima|era|ieri)\s*:?${cur}${num}`, "g");
const arrow = new RegExp(String.raw`${num}${cur}(?:→|->|=>)${cur}${num}`, "g");
const byTo = new RegExp(String.raw`\b(?:by|um|en|down|up|dropped|fell|rose|lost|gained|cut|gesunken|gestiegen|bajo|subio|baisse|caiu|subiu|sceso|salito)${cur}${num}${cur}(?:to|auf|a|para|à|al|zu)${cur}${num}`, "g");
const percent = new RegExp(String.raw`(?:[+-]|\b(?:up|down|rose|fell|gained|lost|increased|decreased|changed|moved|plus|minus|um|de|of|by))\s*${num}\s*%`, "g");
const falling = /\b(dropped|fell|down|decreased|cheaper|lower|lost|gesunken|gefallen|billiger|bajo|bajado|baisse|caiu|baixou|sceso|calato)\b/;
const target = new RegExp(
  String.raw`\b(?:target(?: price)?|goal|alert level|limit|threshold|ziel(?:preis|wert)?|schwelle|(?:precio )?objetivo|umbral|(?:prix )?cible|objectif|seuil|alvo|meta|obiettivo|soglia)\b(?:\s*(?:is|was|of|ist|liegt bei|es|est|e|é|de|di|von|bei|at))?\s*:?${cur}${num}`,
  "g",
);

/** The changes `text` reports (before → after), in order. */
export function reportedChanges(text: string): { changes: ReportedChange[]; percents: number[] } {
  const f = fold(text);
  const changes: ReportedChange[] = [];
  const pair = (a: string | undefined, b: string | undefined) => {
    const [x, y] = [proseNumber(a ?? ""), proseNumber(b ?? "")];
    if (x !== null && y !== null) changes.push({ before: x, after: y });
  };
  const byDelta = (d: number | null, to: number | null) => {
    if (d !== null && to !== null) changes.push({ before: falling.test(f) ? to + d : to - d, after: to });
  };
  for (const m of f.matchAll(fromTo)) {
    const [a, b] = [proseNumber(m[2]!), proseNumber(m[3]!)];
    // Romance "de X à Y" also reads "by X to Y" ("baissé de 0,50 $ à 349,50 $"): a first number far below the second is a delta.
    if (/^d[ea]$/.test(m[1]!) && a !== null && b !== null && Math.abs(a) < Math.abs(b) / 2) byDelta(a, b);
    else pair(m[2], m[3]);
  }
  for (const m of f.matchAll(wasNow)) pair(m[2], m[1]);
  for (const m of f.matchAll(arrow)) pair(m[1], m[2]);
  const rest = f.replace(fromTo, " ").replace(wasNow, " ").replace(arrow, " ");
  for (const m of rest.matchAll(byTo)) byDelta(proseNumber(m[1]!), proseNumber(m[2]!));
  const percents: number[] = [];
  for (const m of rest.replace(byTo, " ").matchAll(percent)) {
    const p = proseNumber(m[1]!);
    if (p !== null) percents.push(p);
  }
  return { changes, percents };
}

/** A target written after its number ("your $1,200 target", "the 60% limit"). */
const targetAfter = new RegExp(String.raw`${num}\s*(?:[$€£¥₹%]|r\$|us\$|usd|eur|gbp)?\s*(?:target|goal|alert level|limit|threshold|ziel|limite|objetivo|cible|objectif|seuil|alvo|meta|obiettivo|soglia)\b`, "g");

/** The targets, thresholds and limits `text` names ("your target is $330", "your $330 target" → 330). */
export function targetsOf(text: string): number[] {
  const out: number[] = [];
  const f = fold(text);
  for (const m of [...f.matchAll(target), ...f.matchAll(targetAfter)]) {
    const n = proseNumber(m[1]!);
    if (n !== null) out.push(n);
  }
  return out;
}

/**
 * A description of why the changes `text` reports are trivial, or null. Trivial: it reports at
 * least one change, every change moves its value by less than `relative` (a fraction of the earlier
 * value; percentages likewise) — or, when the text names a target, by less than a quarter of the
 * distance to it (`minimumMove`) — and none reaches or passes a target the text names.
 */
export function reportsOnlyTrivialChange(text: string, relative: number): string | null {
  const { changes, percents } = reportedChanges(text);
  if (changes.length === 0 && percents.length === 0) return null;
  const targets = targetsOf(text);
  const moves: string[] = [];
  for (const c of changes) {
    if (c.before === 0 || Math.abs(c.after - c.before) >= Math.max(Math.abs(c.before) * relative, minimumMove(c.before, undefined, targets))) return null;
    if (targets.some((t) => c.before !== t && Math.sign(c.before - t) !== Math.sign(c.after - t))) return null;
    moves.push(`${c.before} → ${c.after}`);
  }
  for (const p of percents) {
    if (p / 100 >= relative) return null;
    moves.push(`${p}%`);
  }
  return `reports only a trivial change (${moves.join(", ")})`;
}
