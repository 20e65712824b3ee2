import { Worker } from "node:worker_threads";

/**
 * Counts tokens with `gpt-tokenizer` (the `o200k_base` encoding of OpenAI's current models).
 *
 * Why a worker thread: the encoding's rank table costs about 70 MB of memory once loaded, more
 * than Familiar's whole idle budget. It is loaded in a worker that starts on the first count and
 * is terminated after `idleMs` without use, so an idle process holds none of it. Counts of
 * immutable texts (stored messages) are cached by key in the main thread, so a turn only counts
 * what is new.
 *
 * While the table loads (about 2 s on a small machine), counts are estimated — one token per 3 bytes
 * of UTF-8, which is above the real count for English and close to it for CJK scripts — so the first
 * answer after a start (or after an idle period) is not slower than the tenth. Estimates are never
 * cached; the context is assembled within the budget either way.
 */
export interface TokenCounter {
  /** Token counts of `texts`, in order. */
  count(texts: readonly string[]): Promise<number[]>;
  /** Like `count` for one text, cached under `key` (use only for immutable texts, e.g. a message id). */
  countCached(key: string, text: string): Promise<number>;
  close(): Promise<void>;
}

/** Estimated tokens of `text` while the tokenizer loads: one per 3 bytes of UTF-8 (at least 1 for non-empty text). */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(Buffer.byteLength(text, "utf8") / 3));
}

const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const ready = import(workerData.encodingUrl);
ready.then(() => parentPort.postMessage({ ready: true }), () => undefined);
parentPort.on("message", async ({ id, texts }) => {
  try {
    const enc = await ready;
    parentPort.postMessage({ id, counts: texts.map((t) => enc.countTokens(t)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

/** Creates the worker-backed counter. `idleMs` (default 2 min) bounds how long the table stays loaded. */
export function createTokenCounter(options: { idleMs?: number; cacheSize?: number } = {}): TokenCounter {
  const idleMs = options.idleMs ?? 120_000;
  const cacheSize = options.cacheSize ?? 20_000;
  const encodingUrl = import.meta.resolve("gpt-tokenizer/encoding/o200k_base");
  const cache = new Map<string, number>();
  let worker: Worker | null = null;
  let loaded = false;
  let idleTimer: NodeJS.Timeout | null = null;
  let nextId = 0;
  const pending = new Map<number, { resolve: (c: number[]) => void; reject: (e: Error) => void }>();

  const getWorker = (): Worker => {
    if (worker) return worker;
    const w = new Worker(workerSource, { eval: true, workerData: { encodingUrl } });
    w.unref();
    w.on("message", (msg: { id: number; counts?: number[]; error?: string; ready?: boolean }) => {
      if (msg.ready) {
        if (worker === w) loaded = true;
        return;
      }
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.counts) p.resolve(msg.counts);
      else p.reject(new Error(`token counting failed: ${msg.error}`));
    });
    const fail = (err: Error) => {
      if (worker === w) {
        worker = null;
        loaded = false;
      }
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(err);
      }
    };
    w.on("error", fail);
    w.on("exit", () => fail(new Error("tokenizer worker exited")));
    worker = w;
    return w;
  };

  const touch = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (pending.size === 0 && worker) {
        const w = worker;
        worker = null;
        loaded = false;
        w.terminate().catch(() => undefined);
      }
    }, idleMs);
    idleTimer.unref();
  };

  /** Exact counts once the table is loaded; estimates (flagged) while it loads. */
  const measure = async (texts: readonly string[]): Promise<{ counts: number[]; exact: boolean }> => {
    if (texts.length === 0) return { counts: [], exact: true };
    const w = getWorker();
    touch();
    if (!loaded) return { counts: texts.map(estimateTokens), exact: false };
    const id = nextId++;
    const result = new Promise<number[]>((resolve, reject) => pending.set(id, { resolve, reject }));
    w.postMessage({ id, texts });
    return { counts: await result, exact: true };
  };

  return {
    count: async (texts) => (await measure(texts)).counts,
    async countCached(key, text) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const { counts, exact } = await measure([text]);
      const n = counts[0]!;
      if (!exact) return n;
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value as string);
      cache.set(key, n);
      return n;
    },
    async close() {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      const w = worker;
      worker = null;
      loaded = false;
      if (w) await w.terminate();
    },
  };
}
