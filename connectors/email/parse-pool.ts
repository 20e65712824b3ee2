/**
 * Parsing mail off the event loop: a small pool of worker threads runs mailparser (see
 * mail-worker.ts), so a pathological message never blocks Familiar and never takes it down.
 *
 * Caps (each failure is "could not read this message: …", and nothing else is lost):
 * - a message larger than {@link DEFAULT_LIMITS.maxMessageBytes} (25 MB) is not parsed;
 * - at most 1,000 MIME parts (a 10,000-part message is refused by mailparser's `maxChildNodes`);
 * - a part's header block at most 1 MB;
 * - HTML longer than 2,000,000 characters is not turned into text; text is cut at 200,000 and
 *   HTML at 1,000,000 characters (marked as cut);
 * - 10 s per message: a parse that takes longer ends its worker (a new one starts for the next);
 * - each worker may use at most 512 MB of heap: past that it dies alone, not the process.
 * Unknown charsets and broken MIME are mailparser's to tolerate (it decodes what it can).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { ParseLimits } from "./parse-limits.js";
import type { ParseOutcome } from "./message.js";
import type { WorkerAnswer } from "./mail-worker.js";

export interface PoolLimits extends ParseLimits {
  /** Largest raw message parsed, bytes. */
  maxMessageBytes: number;
  /** Longest one parse may take, ms. */
  timeoutMs: number;
  /** Heap per worker, MB. */
  workerHeapMb: number;
}

export const DEFAULT_LIMITS: PoolLimits = {
  maxMessageBytes: 25 * 1024 * 1024,
  maxParts: 1000,
  maxHeaderBytes: 1024 * 1024,
  maxHtmlToText: 2_000_000,
  maxTextChars: 200_000,
  maxHtmlChars: 1_000_000,
  maxAttachments: 100,
  timeoutMs: 10_000,
  workerHeapMb: 512,
};

/** Parses messages in worker threads. */
export interface MailParsePool {
  /** Parses a whole message, or only its header section with `headersOnly`. Never throws. */
  parse(raw: Uint8Array, options?: { headersOnly?: boolean }): Promise<ParseOutcome>;
  /** Ends the workers; pending parses resolve as unreadable. */
  close(): Promise<void>;
}

interface Job {
  id: number;
  raw: Uint8Array;
  headersOnly: boolean;
  resolve: (outcome: ParseOutcome) => void;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

/** Allowance for a worker to load mailparser before its job's time limit starts, ms. */
const WORKER_START_MS = 20_000;

/**
 * Starts a mail worker: the bundle's own entry `connectors/email/mail-worker.js` (webui/build.mjs)
 * when built; from the sources, mail-worker.ts through tsx (a development dependency).
 */
export function startMailWorker(options: { workerData: unknown; resourceLimits: { maxOldGenerationSizeMb: number } }): Worker {
  const here = new URL(import.meta.url);
  if (here.pathname.endsWith(".ts")) {
    const entry = new URL("./mail-worker.ts", here).href;
    const boot = `const { workerData } = require("node:worker_threads"); import("tsx/esm/api").then((api) => api.tsImport(workerData.entry, workerData.entry));`;
    return new Worker(boot, { ...options, eval: true, workerData: { ...(options.workerData as object), entry } });
  }
  for (const candidate of ["./connectors/email/mail-worker.js", "../connectors/email/mail-worker.js", "./mail-worker.js"]) {
    const url = new URL(candidate, here);
    if (existsSync(fileURLToPath(url))) return new Worker(url, options);
  }
  throw new Error("the mail worker (connectors/email/mail-worker.js) is missing from the build: run npm run build");
}

const unreadable = (why: string): ParseOutcome => ({ ok: false, reason: `could not read this message: ${why}` });

/** Creates the pool: `workers` threads at most (default 1), each ended after `idleMs` unused (default 60 s). */
export function createParsePool(options: { workers?: number; idleMs?: number; limits?: Partial<PoolLimits> } = {}): MailParsePool {
  const limits: PoolLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const idleMs = options.idleMs ?? 60_000;
  const slots: Slot[] = Array.from({ length: Math.max(1, options.workers ?? 1) }, () => ({ worker: null, job: null, timer: null }));
  const queue: Job[] = [];
  let nextId = 0;
  let idleTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const finish = (slot: Slot, outcome: ParseOutcome) => {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    job?.resolve(outcome);
    pump();
  };

  const retire = (slot: Slot) => {
    const w = slot.worker;
    slot.worker = null;
    if (w) void w.terminate().catch(() => undefined);
  };

  const spawn = (slot: Slot): Worker => {
    const w = startMailWorker({ workerData: { limits }, resourceLimits: { maxOldGenerationSizeMb: limits.workerHeapMb } });
    w.unref();
    w.on("message", (msg: WorkerAnswer) => {
      if (slot.worker !== w || !slot.job || slot.job.id !== msg.id) return;
      if ("started" in msg) return startClock(slot);
      finish(slot, "result" in msg ? { ok: true, message: msg.result } : unreadable(msg.error));
    });
    const died = (why: string) => {
      if (slot.worker !== w) return;
      slot.worker = null;
      if (slot.job) finish(slot, unreadable(why));
    };
    w.on("error", (err) => died(/memory/i.test(String(err)) ? "it needs more memory than a message may use" : "the parser failed on it"));
    w.on("exit", () => died("the parser stopped"));
    slot.worker = w;
    return w;
  };

  /** Starts the job's time limit; `extraMs` covers a new worker loading its libraries. */
  const startClock = (slot: Slot, extraMs = 0) => {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      retire(slot);
      finish(slot, unreadable(`reading it took longer than ${Math.round(limits.timeoutMs / 1000)} s`));
    }, limits.timeoutMs + extraMs);
  };

  const pump = () => {
    if (closed) return;
    for (const slot of slots) {
      if (slot.job || queue.length === 0) continue;
      const job = queue.shift()!;
      slot.job = job;
      const w = slot.worker ?? spawn(slot);
      startClock(slot, WORKER_START_MS);
      const copy = new Uint8Array(job.raw);
      w.postMessage({ id: job.id, raw: copy, headersOnly: job.headersOnly }, [copy.buffer]);
    }
    const busy = slots.some((s) => s.job) || queue.length > 0;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = busy ? null : setTimeout(() => slots.forEach(retire), idleMs);
    idleTimer?.unref();
  };

  return {
    parse(raw, parseOptions = {}) {
      if (closed) return Promise.resolve(unreadable("the parser is shut down"));
      if (raw.byteLength > limits.maxMessageBytes)
        return Promise.resolve(unreadable(`it is ${(raw.byteLength / 1048576).toFixed(1)} MB, more than the ${Math.round(limits.maxMessageBytes / 1048576)} MB Familiar reads`));
      return new Promise<ParseOutcome>((resolve) => {
        queue.push({ id: ++nextId, raw, headersOnly: parseOptions.headersOnly ?? false, resolve });
        pump();
      });
    },
    async close() {
      closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      for (const job of queue.splice(0)) job.resolve(unreadable("the parser is shut down"));
      for (const slot of slots) {
        if (slot.job) finish(slot, unreadable("the parser is shut down"));
        retire(slot);
      }
    },
  };
}
