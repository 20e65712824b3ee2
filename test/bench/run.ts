/**
 * `npm run bench [-- <filter>…]`: runs the bench modules one after another and prints one JSON
 * object per line on stdout (every line has `bench`; figures carry their unit in the key: `_ms`,
 * `_us`, `_mb`, `_per_s`, `tokens`). With filters, only modules whose name contains one of them run
 * (`npm run bench -- store` runs `store` and `store-mongo`).
 *
 * A module that throws prints `{"bench": <module>, "error": …}` and the next one runs. The last
 * line is `{"bench":"done","total_ms":…,"modules_ms":{…},"loadavg_1m_start":…,"loadavg_1m_end":…}`. Exit code 0 unless the runner itself
 * breaks. Figures only, never pass/fail: they come from whatever machine runs this.
 *
 * Everything else that would print to stdout (console.log/info/debug of libraries) goes to stderr,
 * so stdout stays machine-readable.
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";

type Emit = (line: Record<string, unknown>) => void;

/** The bench modules, in the order they run. Each exports `bench(emit)`. */
const modules: { name: string; load: () => Promise<{ bench: (emit: Emit) => Promise<void> }> }[] = [
  { name: "store", load: () => import("./store.js") },
  { name: "store-mongo", load: () => import("./store-mongo.js") },
  { name: "scheduler", load: () => import("./scheduler.js") },
  { name: "turns", load: () => import("./turns.js") },
  { name: "telegram", load: () => import("./telegram.js") },
  { name: "store-calls", load: () => import("./store-calls.js") },
  { name: "runtime", load: () => import("./runtime.js") },
  { name: "browser", load: () => import("./browser.js") },
  { name: "render", load: () => import("./render.js") },
  { name: "sentinel", load: () => import("./sentinel.js") },
  { name: "exec", load: () => import("./exec.js") },
  { name: "calendar", load: () => import("./calendar.js") },
  { name: "mail-filter", load: () => import("./mail-filter.js") },
  { name: "email", load: () => import("./email.js") },
];

const stdoutWrite = process.stdout.write.bind(process.stdout);
const toStderr = (...args: unknown[]): void => void process.stderr.write(`${args.map(String).join(" ")}\n`);
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;

const emit: Emit = (line) => void stdoutWrite(`${JSON.stringify(line)}\n`);

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2).filter((a) => a !== "--");
  const selected = modules.filter((m) => filters.length === 0 || filters.some((f) => m.name.includes(f)));
  if (selected.length === 0) process.stderr.write(`no bench module matches ${filters.join(", ")}; modules: ${modules.map((m) => m.name).join(", ")}\n`);
  // A stray rejection inside a module (a timer firing after it finished) must not end the run.
  process.on("unhandledRejection", (err) => process.stderr.write(`bench: unhandled rejection: ${describe(err)}\n`));
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const modulesMs: Record<string, number> = {};
  for (const m of selected) {
    const t0 = performance.now();
    try {
      const { bench } = await m.load();
      await bench(emit);
    } catch (err) {
      emit({ bench: m.name, error: describe(err) });
      if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    }
    modulesMs[m.name] = Math.round(performance.now() - t0);
  }
  // The machine's 1-minute load average says how much else competed for the CPUs meanwhile.
  emit({ bench: "done", total_ms: Math.round(performance.now() - started), modules_ms: modulesMs, loadavg_1m_start: loadAtStart, loadavg_1m_end: loadavg()[0]! });
}

main().then(
  // Libraries may keep handles open (Agenda timers, workers): exit once the last line is written.
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench runner failed: ${describe(err)}\n`);
    process.exit(1);
  },
);
