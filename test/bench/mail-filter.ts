/**
 * Mail-safety filter throughput: the labelled corpus (157 mails, 7 languages; parsed once with
 * mailparser) run through `filterMail` over and over, in messages per second and MB per second of
 * mail source; the same with parsing (`filterMailSource`); and the time of one ~5 MB adversarial
 * body of each shape (test/helpers/mail-adversarial.ts). Called by test/bench/run.ts
 * (`npm run bench -- mail-filter`); the e-mail bench can call `measureFilterThroughput` itself.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { filterMail, filterMailSource, parseMailSource, type MailContent } from "../../connectors/email/safety.js";
import { adversarialBodies } from "../helpers/mail-adversarial.js";
import { root, round } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

/** Figures of one throughput run. */
export interface FilterThroughput {
  messages: number;
  filter_messages_per_s: number;
  filter_mb_per_s: number;
  /** Messages per second of this process's CPU time (less disturbed by a loaded machine than wall time). */
  filter_messages_per_cpu_s: number;
  parse_and_filter_messages_per_s: number;
  mean_source_kb: number;
}

function corpusSources(): string[] {
  const text = readFileSync(join(root, "test/eval/mail/corpus.jsonl"), "utf8");
  return text.split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { eml: string }).eml);
}

/**
 * Filters the corpus for at least `minMs` (default 3 s) after a warm-up; returns messages/second
 * for the filter alone and with mailparser parsing. Reads the clock (a benchmark, not a rule).
 */
export async function measureFilterThroughput(minMs = 3000): Promise<FilterThroughput> {
  const sources = corpusSources();
  const contents: MailContent[] = [];
  for (const s of sources) contents.push((await parseMailSource(s)).content);
  const bytes = sources.reduce((n, s) => n + Buffer.byteLength(s), 0);
  for (const c of contents) filterMail(c);
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    for (const c of contents) {
      filterMail(c);
      n++;
    }
  }
  const filterMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  let m = 0;
  const t1 = performance.now();
  while (performance.now() - t1 < minMs) {
    for (const s of sources) {
      await filterMailSource(s);
      m++;
    }
  }
  const parseMs = performance.now() - t1;
  return {
    messages: sources.length,
    filter_messages_per_s: Math.round((n / filterMs) * 1000),
    filter_mb_per_s: round(((n / sources.length) * bytes) / 1048576 / (filterMs / 1000)),
    filter_messages_per_cpu_s: Math.round((n / cpuMs) * 1000),
    parse_and_filter_messages_per_s: Math.round((m / parseMs) * 1000),
    mean_source_kb: round(bytes / sources.length / 1024),
  };
}

export async function bench(emit: Emit): Promise<void> {
  emit({ bench: "mail-filter.throughput", ...(await measureFilterThroughput()) });
  const worst: Record<string, number> = {};
  for (const body of adversarialBodies()) {
    const t0 = performance.now();
    filterMail({ subject: "Adversarial", text: body.text ?? null, html: body.html ?? null });
    worst[`${body.name}_ms`] = Math.round(performance.now() - t0);
  }
  emit({ bench: "mail-filter.adversarial_5mb", ...worst });
}
