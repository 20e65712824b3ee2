/**
 * `npm run eval:mail-filter -- FILE.jsonl [--json]`: runs the mail-safety filter over a JSONL set
 * (format in mail-filter-eval.ts: one `{"id", "eml"}` per line, labels optional).
 *
 * With `--json`: exactly one JSON object `{"results": [{"id", "text", "removed": [{"kind", "marker"}]}]}`
 * on stdout, where `text` is exactly what the model would see of the mail (subject and body after
 * the filter). Without: a readable summary — per mail what was removed, and when the lines carry
 * labels, the figures (secrets that passed, harmless numbers and links removed) and every miss.
 * Exit code 2 when a line could not be read (reported with its line number), 1 on a usage error.
 */
import { readFileSync } from "node:fs";
import { evaluateMailSet, mailFigures, parseMailSet, type EvalError, type EvalResult } from "./mail-filter-eval.js";

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const files = argv.filter((a) => !a.startsWith("--"));
  if (files.length !== 1) {
    process.stderr.write("usage: npm run eval:mail-filter -- FILE.jsonl [--json]\n");
    return 1;
  }
  let text: string;
  try {
    text = readFileSync(files[0]!, "utf8");
  } catch (err) {
    process.stderr.write(`cannot read ${files[0]}: ${(err as Error).message}\n`);
    return 1;
  }
  const { lines, errors } = parseMailSet(text);
  const results = await evaluateMailSet(lines);
  if (json) {
    const out = { results: results.map((r) => ({ id: r.id, text: r.text, removed: r.removed.map((x) => ({ kind: x.kind, marker: x.marker })) })) };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    for (const e of errors) process.stderr.write(`unreadable line ${e.line}${e.id ? ` (${e.id})` : ""}: ${e.error}\n`);
  } else report(files[0]!, results, errors);
  return errors.length > 0 ? 2 : 0;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function report(file: string, results: EvalResult[], errors: EvalError[]): void {
  const w = (s: string) => process.stdout.write(`${s}\n`);
  w(`Mail-safety filter — ${file}`);
  w(`mails: ${results.length}${errors.length ? `   unreadable lines: ${errors.length}` : ""}`);
  const byKind = new Map<string, number>();
  for (const r of results) for (const x of r.removed) byKind.set(x.kind, (byKind.get(x.kind) ?? 0) + 1);
  w(`mails with something removed: ${results.filter((r) => r.removed.length > 0).length}`);
  w(`removed: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ") || "nothing"}`);
  const f = mailFigures(results);
  if (f.labelled > 0) {
    w(`\nlabelled: ${f.labelled} (${f.accessMails} access mails, ${f.harmlessMails} harmless)`);
    w(`secrets that passed: ${f.leaks} of ${f.secrets} (recall ${pct(f.secretRecall)}; aim: none passes)`);
    w(`harmless numbers and links removed: ${f.keepMissing} of ${f.keepItems} (${pct(f.harmlessRemovedRate)}; aim: ≤ 2 %)`);
    w(`harmless mails with anything removed: ${f.harmlessMailsWithRemovals} of ${f.harmlessMails}`);
    w(`access mails recognised: ${f.accessMailsDetected} of ${f.accessMails}`);
    const misses = results.filter((r) => r.leaked.length || r.missing.length);
    w(misses.length ? `misses (${misses.length}):` : "misses: none");
    for (const m of misses) {
      if (m.leaked.length) w(`  ${m.id}: PASSED ${m.leaked.map((s) => JSON.stringify(s)).join(", ")}`);
      if (m.missing.length) w(`  ${m.id}: removed harmless ${m.missing.map((s) => JSON.stringify(s)).join(", ")}`);
      w(`      “${m.text.replace(/\s+/g, " ").slice(0, 200)}”`);
    }
  } else {
    for (const r of results) w(`  ${r.id}: ${r.removed.length ? r.removed.map((x) => x.kind).join(", ") : "nothing removed"}`);
  }
  for (const e of errors) w(`  unreadable line ${e.line}${e.id ? ` (${e.id})` : ""}: ${e.error}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`eval:mail-filter failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
