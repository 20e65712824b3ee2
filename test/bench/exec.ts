/**
 * The computer's figures (`npm run bench -- exec`), in real bubblewrap:
 * - start to first instruction, per language (p50/p99 of 30 runs): from the call to the runner
 *   until the program's first statement reads the clock (CLOCK_MONOTONIC in Python and Node, the
 *   realtime clock in the shell — both are shared with the host, there is no time namespace);
 * - the overhead of a 1-second Python job (`time.sleep(1)`): the whole run minus 1000 ms (p50/p99
 *   of 10), which includes walking the workspace before and after;
 * - memory of a sandbox: resident memory of bubblewrap, the sandbox's init and an idle
 *   interpreter, as the supervisor measures it (the peak of its samples);
 * - PDF rendering of a 5-page markdown document (with an SVG chart) by the shared Chromium:
 *   markdown → page → self-contained → printed, p50/p99 of 8 after one warm-up (the browser
 *   already running, as it is after its first use; its cold start is `browser.start`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { EgressGuard } from "../../core/egress/index.js";
import { bundleHtml, markdownDocument, renderPdf } from "../../sandbox/artifacts/index.js";
import { BrowserRuntime } from "../../sandbox/browser/index.js";
import { detectSandbox, type Language, type SandboxRunner } from "../../sandbox/exec/index.js";
import { round, spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

/** First statement of each language: print the clock, in nanoseconds. */
const CLOCK: Record<Language, { code: string; clock: "monotonic" | "realtime" }> = {
  python: { code: "import time; print(time.monotonic_ns())", clock: "monotonic" },
  javascript: { code: "console.log(String(process.hrtime.bigint()))", clock: "monotonic" },
  shell: { code: "date +%s%N", clock: "realtime" },
};

function hostNs(clock: "monotonic" | "realtime"): bigint {
  return clock === "monotonic" ? process.hrtime.bigint() : BigInt(Date.now()) * 1_000_000n;
}

async function startLatency(runner: SandboxRunner, workspaceRoot: string, language: Language, runs: number): Promise<number[]> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { code, clock } = CLOCK[language];
    const t0 = hostNs(clock);
    const result = await runner.run({ workspaceRoot, quotaBytes: 1 << 30, program: { kind: "code", language, code } });
    const inside = BigInt(result.stdout.text.trim());
    values.push(Number(inside - t0) / 1e6);
  }
  return values;
}

/** A markdown report of five A4 pages with a chart. */
function fivePages(): string {
  const paragraph = (i: number) => `Paragraph ${i}: the week's spending by category, compared with the month before, and what changed most — groceries up, transport down, a birthday.`;
  const sections = Array.from({ length: 5 }, (_, s) => `## Part ${s + 1}\n\n${Array.from({ length: 13 }, (_, i) => paragraph(s * 13 + i)).join("\n\n")}`);
  return `# Expenses report\n\n![chart](chart.svg)\n\n${sections.join("\n\n")}`;
}

async function pdfFigures(emit: Emit): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-bench-pdf-"));
  const runtime = new BrowserRuntime({ chromiumPath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", dataDir, egress: new EgressGuard({ privateHostsAllowed: [] }) });
  const chart = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200">${[60, 140, 90, 30].map((h, i) => `<rect x="${20 + i * 90}" y="${190 - h}" width="60" height="${h}" fill="#123456"/>`).join("")}</svg>`);
  try {
    const make = async () => {
      const t0 = performance.now();
      const { html } = await bundleHtml(markdownDocument(fivePages(), "Expenses report"), "", async (path) => (path === "chart.svg" ? chart : null));
      const pdf = await runtime.lend((browser) => renderPdf(browser, html));
      return { ms: performance.now() - t0, pages: pdf.pages, bytes: pdf.bytes.length };
    };
    const first = await make();
    const runs = [];
    for (let i = 0; i < 8; i++) runs.push(await make());
    emit({ bench: "exec.pdf_5_pages", pages: first.pages, pdf_kb: round(first.bytes / 1024), first_ms: round(first.ms), runs: runs.length, ...spread(runs.map((r) => r.ms), "_ms") });
  } finally {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs the sandbox figures. */
export async function bench(emit: Emit): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-bench-exec-"));
  try {
    const status = await detectSandbox({ dataDir });
    if (!status.available) {
      emit({ bench: "exec", error: `sandbox unavailable: ${status.reason}` });
      return;
    }
    const { runner } = status;
    const workspaceRoot = join(dataDir, "persons", "per_bench", "workspace");
    for (const language of runner.languages) {
      await startLatency(runner, workspaceRoot, language, 3); // warm the page cache
      emit({ bench: "exec.start_to_first_instruction", language, runs: 30, ...spread(await startLatency(runner, workspaceRoot, language, 30), "_ms") });
    }
    const overheads: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await runner.run({ workspaceRoot, quotaBytes: 1 << 30, program: { kind: "code", language: "python", code: "import time\ntime.sleep(1)" } });
      overheads.push(performance.now() - t0 - 1000);
    }
    emit({ bench: "exec.python_1s_job_overhead", runs: 10, ...spread(overheads, "_ms") });
    for (const [language, code] of [["python", "import time\ntime.sleep(1.5)"], ["javascript", "setTimeout(() => {}, 1500)"], ["shell", "sleep 1.5"]] as const) {
      const result = await runner.run({ workspaceRoot, quotaBytes: 1 << 30, program: { kind: "code", language, code } });
      emit({ bench: "exec.sandbox_memory", language, rss_mb: round(result.peakMemoryBytes / (1024 * 1024)), tasks: result.peakTasks });
    }
    await pdfFigures(emit);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
