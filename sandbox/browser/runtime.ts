/**
 * The browser runtime: one Chromium process shared by every person, one browser context per person.
 *
 * **Persistent per person.** Chromium ties a user-data directory to a whole process, so per-person
 * profiles in one shared process are contexts whose storage (cookies — session cookies included —,
 * localStorage and IndexedDB) is saved to `DATA_DIR/persons/<id>/browser/state.json` (mode 0600,
 * written atomically) after every action and when the context closes, and loaded when it opens.
 * Logins survive restarts of Familiar and crashes of the browser.
 *
 * **Bounded.** At most `maxContexts` contexts are open at once (the least recently used idle one is
 * closed to make room; callers wait when all are busy); a context unused for `idleMs` is saved and
 * closed; the browser process exits when no context has been open for `idleMs`. Renderer processes
 * are limited by `--renderer-process-limit`. One action at a time per person.
 *
 * **Recovered.** If the browser process dies, every open session is dropped (their last saved state
 * stays on disk) and the next use starts a new process.
 *
 * Network: the browser process's own traffic goes to a proxy that refuses everything; each context
 * has its own {@link EgressProxy} (address checks after resolution, pinned connections) and a
 * {@link NetworkGuard} (writes only when approved). Service workers are blocked.
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import type { PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import { EgressProxy, type EgressCheck } from "./proxy.js";
import { openSession, type PersonBrowser } from "./session.js";

export { REFUSALS_SETTLE_MS, type PersonBrowser } from "./session.js";

/** Chromium flags: headless, no GPU, no background traffic or phoning home, WebRTC only through the proxy. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-domain-reliability",
  "--disable-client-side-phishing-detection",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
  // Playwright's own list (which a second --disable-features would replace) plus autofill server queries.
  "--disable-features=AutofillServerCommunication,OptimizationHints,NetworkTimeServiceQuerying,AimEnabled,PreconnectToSearch,MediaRouter,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,PaintHolding,AvoidCorsURLLoaderRestartOnRedirect,DestroyProfileOnBrowserClose,ThirdPartyStoragePartitioning,LensOverlay,AvoidUnnecessaryBeforeUnloadCheckSync",
];

/** Settings of the {@link BrowserRuntime}. */
export interface BrowserRuntimeOptions {
  /** Chromium executable (CHROMIUM_PATH). */
  chromiumPath: string;
  /** DATA_DIR: profiles live under `persons/<id>/browser/`. */
  dataDir: string;
  /** The egress guard every request passes. */
  egress: EgressCheck;
  logger?: Logger;
  /** Contexts open at once (default 4). */
  maxContexts?: number;
  /** Idle time after which a context (and then the browser) closes, ms (default 5 min). */
  idleMs?: number;
  /** Renderer processes at most (default 4). */
  rendererLimit?: number;
  /** Time limit of one navigation or action, ms (default 20 000). */
  actionTimeoutMs?: number;
  /** The outbound secret check (the vault's `unboundIn`), applied to every request of every page. */
  secretCheck?: (texts: readonly string[], origin: string) => string[];
}

/** The browser process died or could not start. */
export class BrowserUnavailableError extends Error {
  readonly code = "browser_unavailable" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BrowserUnavailableError";
  }
}

interface Slot {
  session: PersonBrowser;
  proxy: EgressProxy;
  lastUsed: number;
  busy: number;
  queue: Promise<unknown>;
  timer: NodeJS.Timeout | null;
}

/** The shared browser and the per-person contexts. */
export class BrowserRuntime {
  private browser: Browser | null = null;
  private launching: Promise<Browser> | null = null;
  private denyProxy: EgressProxy | null = null;
  private readonly slots = new Map<PersonId, Slot>();
  private readonly opening = new Map<PersonId, Promise<Slot>>();
  private readonly waiters: (() => void)[] = [];
  private browserTimer: NodeJS.Timeout | null = null;
  /** Calls of `lend` in progress (the browser stays up while any runs). */
  private lent = 0;
  private closed = false;
  /** Counters for the bench and the health view. */
  readonly stats = { launches: 0, crashes: 0, contextsOpened: 0, contextsClosed: 0 };

  constructor(private readonly options: BrowserRuntimeOptions) {}

  get maxContexts(): number {
    return this.options.maxContexts ?? 4;
  }

  get idleMs(): number {
    return this.options.idleMs ?? 5 * 60_000;
  }

  get actionTimeoutMs(): number {
    return this.options.actionTimeoutMs ?? 20_000;
  }

  /** The URL of the person's open page, without starting anything (null when the browser is not open for them). */
  peekUrl(personId: PersonId): string | null {
    return this.slots.get(personId)?.session.currentUrl() ?? null;
  }

  /** True while the person's browser context is open (or opening): the page tools are offered then. */
  inUse(personId: PersonId): boolean {
    return this.slots.has(personId) || this.opening.has(personId);
  }

  /** Open contexts right now. */
  get openContexts(): number {
    return this.slots.size;
  }

  /** True while the browser process runs. */
  get running(): boolean {
    return this.browser !== null;
  }

  /** Where a person's profile is saved. */
  profileDir(personId: PersonId): string {
    return join(resolve(this.options.dataDir), "persons", personId, "browser");
  }

  /**
   * Runs `fn` with the person's browser: opens the context if needed (waiting for a free slot),
   * one call at a time per person, saves the profile afterwards.
   * @throws BrowserUnavailableError when Chromium cannot start or dies during `fn`
   */
  async use<T>(personId: PersonId, fn: (session: PersonBrowser) => Promise<T>): Promise<T> {
    if (this.closed) throw new BrowserUnavailableError("the browser is shut down");
    const slot = await this.slotFor(personId);
    slot.busy++;
    const run = slot.queue.then(async () => {
      slot.lastUsed = Date.now();
      try {
        return await fn(slot.session);
      } finally {
        if (this.slots.get(personId) === slot) await slot.session.save().catch((err: unknown) => this.options.logger?.warn({ err, personId }, "browser profile not saved"));
      }
    });
    slot.queue = run.catch(() => undefined);
    try {
      return await run;
    } catch (error) {
      if (this.browser === null || !slot.session.context.browser()?.isConnected()) {
        throw new BrowserUnavailableError("the browser stopped while working; the profile is kept — try again", { cause: error });
      }
      throw error;
    } finally {
      slot.busy--;
      slot.lastUsed = Date.now();
      this.scheduleIdle(personId, slot);
      this.wakeWaiter();
    }
  }

  /** Saves and closes one person's context (e.g. idle). */
  async closePerson(personId: PersonId): Promise<void> {
    const slot = this.slots.get(personId);
    if (!slot) return;
    this.slots.delete(personId);
    if (slot.timer) clearTimeout(slot.timer);
    await slot.queue;
    await slot.session.save().catch(() => undefined);
    await slot.session.context.close().catch(() => undefined);
    await slot.proxy.close();
    this.stats.contextsClosed++;
    this.wakeWaiter();
    this.scheduleBrowserIdle();
  }

  /** Saves every profile and stops the browser. */
  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.slots.keys()]) await this.closePerson(id);
    if (this.browserTimer) clearTimeout(this.browserTimer);
    const browser = this.browser;
    this.browser = null;
    await browser?.close().catch(() => undefined);
    await this.denyProxy?.close();
    this.denyProxy = null;
  }

  /**
   * Lends the shared browser process to `fn` (printing artifacts to PDF in a context of its own;
   * `fn` must close what it opens). The browser starts if needed and does not idle out meanwhile.
   * @throws BrowserUnavailableError when Chromium cannot start
   */
  async lend<T>(fn: (browser: Browser) => Promise<T>): Promise<T> {
    if (this.closed) throw new BrowserUnavailableError("the browser is shut down");
    this.lent++;
    try {
      return await fn(await this.launch());
    } finally {
      this.lent--;
      this.scheduleBrowserIdle();
    }
  }

  /** Starts the browser now (otherwise it starts on first use); returns the time it took, ms. */
  async start(): Promise<number> {
    const t0 = performance.now();
    await this.launch();
    return performance.now() - t0;
  }

  private async slotFor(personId: PersonId): Promise<Slot> {
    const open = this.slots.get(personId);
    if (open) return open;
    const pending = this.opening.get(personId);
    if (pending) return pending;
    const opening = (async () => {
      // Let `opening` register this person first, so the count below includes it.
      await Promise.resolve();
      while (this.slots.size + this.opening.size > this.maxContexts) {
        const evicted = await this.evictIdle();
        if (!evicted) await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
      return this.openSlot(personId);
    })().finally(() => this.opening.delete(personId));
    this.opening.set(personId, opening);
    return opening;
  }

  private async evictIdle(): Promise<boolean> {
    const idle = [...this.slots.entries()].filter(([, s]) => s.busy === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
    if (!idle) return false;
    await this.closePerson(idle[0]);
    return true;
  }

  private wakeWaiter(): void {
    this.waiters.shift()?.();
  }

  private async openSlot(personId: PersonId): Promise<Slot> {
    const browser = await this.launch();
    const dir = this.profileDir(personId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const { session, proxy } = await openSession(browser, {
      personId,
      stateFile: join(dir, "state.json"),
      egress: this.options.egress,
      actionTimeoutMs: this.actionTimeoutMs,
      ...(this.options.secretCheck && { secretCheck: this.options.secretCheck }),
      ...(this.options.logger && { logger: this.options.logger }),
    });
    const slot: Slot = { session, proxy, lastUsed: Date.now(), busy: 0, queue: Promise.resolve(), timer: null };
    this.slots.set(personId, slot);
    this.stats.contextsOpened++;
    if (this.browserTimer) clearTimeout(this.browserTimer);
    return slot;
  }

  private scheduleIdle(personId: PersonId, slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      if (this.slots.get(personId) === slot && slot.busy === 0) void this.closePerson(personId).catch(() => undefined);
    }, this.idleMs);
    slot.timer.unref();
  }

  private scheduleBrowserIdle(): void {
    if (this.slots.size > 0 || this.lent > 0 || this.browser === null) return;
    if (this.browserTimer) clearTimeout(this.browserTimer);
    this.browserTimer = setTimeout(() => {
      if (this.slots.size > 0 || this.opening.size > 0 || this.lent > 0) return;
      const browser = this.browser;
      this.browser = null;
      browser?.close().catch(() => undefined);
    }, this.idleMs);
    this.browserTimer.unref();
  }

  private async launch(): Promise<Browser> {
    if (this.browser?.isConnected()) return this.browser;
    if (this.launching) return this.launching;
    this.launching = (async () => {
      // Loaded on first use: Familiar without browsing never loads Playwright.
      const { chromium } = await import("playwright-core");
      this.denyProxy ??= await EgressProxy.start({ egress: null });
      let browser: Browser;
      try {
        browser = await chromium.launch({
          executablePath: this.options.chromiumPath,
          headless: true,
          args: [...CHROMIUM_ARGS, `--renderer-process-limit=${this.options.rendererLimit ?? 4}`],
          proxy: { server: this.denyProxy.url, bypass: "<-loopback>" },
          timeout: 60_000,
        });
      } catch (error) {
        throw new BrowserUnavailableError(`Chromium could not start from ${this.options.chromiumPath} (set CHROMIUM_PATH; on Debian: apt-get install chromium): ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, { cause: error });
      }
      this.stats.launches++;
      browser.on("disconnected", () => this.onDisconnected(browser));
      this.browser = browser;
      return browser;
    })().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  private onDisconnected(browser: Browser): void {
    if (this.browser !== browser) return;
    this.browser = null;
    if (this.closed) return;
    this.stats.crashes++;
    this.options.logger?.error({ contexts: this.slots.size }, "the browser process stopped; profiles are kept and it restarts on next use");
    for (const [id, slot] of this.slots) {
      if (slot.timer) clearTimeout(slot.timer);
      slot.proxy.close().catch(() => undefined);
      this.slots.delete(id);
    }
    this.wakeWaiter();
  }
}
