/**
 * `npm run eval:notify -- FILE.jsonl [--json]`: evaluates the notification filter on a labelled set
 * (format in notify-eval.ts) through the real Notifier, rules only and — when OPENAI_API_KEY or
 * OPENAI_BASE_URL is set — again with the model judge (OPENAI_MODEL, default gpt-4o-mini).
 * Prints accuracy, the confusion matrix, precision of send and must-send recall, and every miss with
 * the rule that decided it; `--json` prints one JSON object instead. Exit code 2 when a line could
 * not be read (each is reported with its line number, id and error), 1 on a usage error.
 */
import { readFileSync } from "node:fs";
import { OpenAIModelClient } from "../../core/model/openai.js";
import type { ModelClient } from "../../core/model/port.js";
import { evaluateSet, figures, parseEvalSet, type EvalError, type EvalFigures, type EvalResult } from "./notify-eval.js";

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const files = argv.filter((a) => !a.startsWith("--"));
  if (files.length !== 1) {
    process.stderr.write("usage: npm run eval:notify -- FILE.jsonl [--json]\n");
    return 1;
  }
  let text: string;
  try {
    text = readFileSync(files[0]!, "utf8");
  } catch (err) {
    process.stderr.write(`cannot read ${files[0]}: ${(err as Error).message}\n`);
    return 1;
  }
  const { lines, errors } = parseEvalSet(text);
  const model = judgeModel();
  const rulesOnly = await evaluateSet(lines, null);
  const judged = model ? await evaluateSet(lines, model) : null;

  if (json) {
    const pack = (results: EvalResult[]) => ({ ...figures(results), results: results.map((r) => ({ id: r.id, expected: r.expected, got: r.got, rule: r.rule })) });
    const out = { file: files[0], ...pack(rulesOnly), errors, withJudge: judged ? { model: model!.model, ...pack(judged) } : null };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    report(`Rules only — ${files[0]}`, rulesOnly, errors);
    if (judged) report(`With the model judge (${model!.model})`, judged, []);
    else process.stdout.write("\n(no model configured: set OPENAI_API_KEY or OPENAI_BASE_URL to evaluate with the judge too)\n");
  }
  return errors.length > 0 ? 2 : 0;
}

function judgeModel(): ModelClient | null {
  const apiKey = process.env.OPENAI_API_KEY?.trim();
  const baseURL = process.env.OPENAI_BASE_URL?.trim();
  if (!apiKey && !baseURL) return null;
  return new OpenAIModelClient({ model: process.env.OPENAI_MODEL?.trim() || "gpt-4o-mini", ...(apiKey && { apiKey }), ...(baseURL && { baseURL }), timeout: 60_000 });
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function report(title: string, results: EvalResult[], errors: EvalError[]): void {
  const f: EvalFigures = figures(results);
  const w = (s: string) => process.stdout.write(`${s}\n`);
  w(`\n${title}`);
  w(`lines: ${f.lines}${errors.length ? `   unreadable: ${errors.length}` : ""}`);
  w(`accuracy: ${pct(f.accuracy)}`);
  w(`precision of send: ${pct(f.precisionSend)} (${f.sent} sent)`);
  w(`must-send recall: ${pct(f.mustSendRecall)} (${f.mustSend} must-send)`);
  w("confusion (rows expected, columns got):");
  w(`  ${"".padEnd(8)}${["send", "hold", "drop"].map((d) => d.padStart(6)).join("")}`);
  for (const e of ["send", "hold", "drop"] as const) w(`  ${e.padEnd(8)}${(["send", "hold", "drop"] as const).map((g) => String(f.confusion[e][g]).padStart(6)).join("")}`);
  const misses = results.filter((r) => r.got !== r.expected);
  w(misses.length ? `misses (${misses.length}):` : "misses: none");
  for (const m of misses) w(`  ${m.id}: expected ${m.expected}, got ${m.got} by rule ${m.rule}${m.mustSend ? " [must-send]" : ""} — ${m.reasons.join("; ")}\n      “${m.text.replace(/\s+/g, " ").slice(0, 140)}”`);
  for (const e of errors) w(`  unreadable line ${e.line}${e.id ? ` (${e.id})` : ""}: ${e.error}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`eval:notify failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
