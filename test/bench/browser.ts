/**
 * Browser figures in real Chromium against a loopback page: cold start of the shared browser
 * (median of 3), memory of the browser's process tree with 0 and with N person contexts open (each
 * on a page) — the per-person context cost — and the bound: with `maxContexts` = 4, opening 8
 * persons one after another keeps at most 4 contexts and the tree's RSS near the 4-context figure;
 * and the latency of a page read (`browser_read`: text + accessibility snapshot) on a ~40 KB page.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { systemClock } from "../../core/clock.js";
import type { PersonId } from "../../core/ids.js";
import { EgressGuard } from "../../core/egress/guard.js";
import { openSqliteStore } from "../../core/storage/sqlite/index.js";
import type { ToolContext } from "../../core/tools/tool.js";
import { ArtifactShelf } from "../../sandbox/artifacts/index.js";
import { BrowserRuntime } from "../../sandbox/browser/runtime.js";
import { browserTools } from "../../sandbox/browser/tools.js";
import { round, sleep, spread } from "./measure.js";

type Emit = (line: Record<string, unknown>) => void;

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** A product-like page: header, nav, 60 product cards, a form, a footer (~40 KB of HTML). */
function page(): string {
  const cards = Array.from({ length: 60 }, (_, i) => `<article class="card"><h3>Kids hoodie model ${i}</h3><p>Soft cotton, sizes 104–164. Colour ${["blue", "red", "green"][i % 3]}.</p><p class="price">€${(19 + i).toFixed(2)}</p><button>Add to cart</button> <a href="/p/${i}">Details</a></article>`).join("");
  return `<!doctype html><html><head><title>Shop</title></head><body><header><nav><a href="/">Home</a> <a href="/kids">Kids</a> <a href="/cart">Cart</a></nav></header><main><h1>Kids hoodies</h1>${cards}<form><label>Search <input name="q"></label><button>Search</button></form></main><footer>© Shop</footer></body></html>`;
}

/**
 * Memory (MiB) of every process descended from this one (Chromium and its renderers), as PSS
 * (`/proc/<pid>/smaps_rollup`): shared pages are split among the processes that map them, so the
 * sum is what the tree really costs (summed RSS would count Chromium's shared libraries per process).
 */
function treeRssMb(): number {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      const kb = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, "utf8"))?.[1];
      rss.set(Number(entry), Number(kb ?? 0));
    } catch {
      // ended meanwhile
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parents.get(pid), hops = 0; p !== undefined && hops < 64; p = parents.get(p), hops++) if (p === process.pid) return true;
    return false;
  };
  let kb = 0;
  for (const [pid, value] of rss) if (descends(pid)) kb += value;
  return round(kb / 1024);
}

export async function bench(emit: Emit): Promise<void> {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const hostPort = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `http://${hostPort}/kids`;
  const dataDir = mkdtempSync(join(tmpdir(), "familiar-bench-browser-"));
  const store = openSqliteStore({ path: join(dataDir, "familiar.db") });
  const egress = new EgressGuard({ privateHostsAllowed: [hostPort] });
  try {
    // Cold start of the shared browser, 3 times.
    const starts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const runtime = new BrowserRuntime({ chromiumPath: CHROMIUM, dataDir, egress });
      starts.push(await runtime.start());
      await runtime.close();
    }
    emit({ bench: "browser", what: "start", ...spread(starts, "_ms") });

    const persons: PersonId[] = [];
    for (let i = 0; i < 8; i++) persons.push((await store.persons.createPerson({ displayName: `P${i}` })).id);
    const runtime = new BrowserRuntime({ chromiumPath: CHROMIUM, dataDir, egress, maxContexts: 4, idleMs: 600_000 });
    const artifacts = new ArtifactShelf({ dataDir, repository: store.artifacts, clock: systemClock });
    const tools = new Map(browserTools({ runtime, artifacts, dataDir }).map((t) => [t.name, t]));
    const ctx = (personId: PersonId, n: number): ToolContext => ({ personId, taskId: null, originMessageId: null, idempotencyKey: `bench:${n}:0`, now: new Date(), signal: new AbortController().signal });
    const run = async (name: string, args: unknown, personId: PersonId, n: number) => {
      const tool = tools.get(name)!;
      const result = await tool.execute(tool.parameters.parse(args), ctx(personId, n));
      if (!result.ok) throw new Error(`${name} failed: ${result.error}`);
      return result;
    };

    await runtime.start();
    await sleep(1000);
    const idle = treeRssMb();
    // Four persons, each with a page open.
    for (let i = 0; i < 4; i++) await run("browser_open", { url }, persons[i]!, i);
    await sleep(1000);
    const four = treeRssMb();
    emit({ bench: "browser", what: "memory", browser_only_pss_mb: idle, with_4_contexts_pss_mb: four, per_context_pss_mb: round((four - idle) / 4) });

    // Page read latency (text + snapshot) on the open page.
    const reads: number[] = [];
    let chars = 0;
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const result = await run("browser_read", {}, persons[0]!, 100 + i);
      reads.push(performance.now() - t0);
      chars = result.ok ? result.content.length : 0;
    }
    emit({ bench: "browser", what: "page_read", page_html_kb: round(page().length / 1024), readout_chars: chars, ...spread(reads, "_ms") });

    // The bound: four more persons; the least recently used contexts close to make room.
    let peak = four;
    for (let i = 4; i < 8; i++) {
      await run("browser_open", { url }, persons[i]!, 200 + i);
      peak = Math.max(peak, treeRssMb());
    }
    emit({ bench: "browser", what: "bounded", persons: 8, max_contexts: 4, open_contexts: runtime.openContexts, peak_pss_mb: peak, end_pss_mb: treeRssMb() });
    await runtime.close();
  } finally {
    await store.close();
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
