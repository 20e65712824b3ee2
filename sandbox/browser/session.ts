/**
 * One person's browser session: a context of the shared browser with the person's saved storage
 * loaded, its own egress proxy and network guard, one page the tools drive (re-created after a
 * crash), refusals collected for the next tool result, and saving of cookies and storage.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import { NetworkGuard } from "./network.js";
import { readState, writeState } from "./profile-state.js";
import { EgressProxy, type DeniedRequest, type EgressCheck } from "./proxy.js";
import { RefMemory } from "./refs.js";

/** How long a tool waits for request judgments still in flight before reporting refusals, ms. */
export const REFUSALS_SETTLE_MS = 2_000;

/** One person's open browser: context, its one page, the network door and element memory. */
export interface PersonBrowser {
  personId: PersonId;
  context: BrowserContext;
  /** The page the tools drive (re-created if it crashes or is closed). */
  page(): Promise<Page>;
  network: NetworkGuard;
  refs: RefMemory;
  /**
   * Requests refused (by the proxy or the request interception) since the last call, oldest first.
   * Waits first for judgments still in flight (at most {@link REFUSALS_SETTLE_MS}), so a request the
   * page made before this call is in the answer once it has reached the interception; a refusal is
   * handed out exactly once — by this call or a later one, never dropped.
   */
  takeRefusals(): Promise<DeniedRequest[]>;
  /** Saves cookies and storage now. */
  save(): Promise<void>;
  /** The page URL when the context was last closed (shown after an idle close). */
  lastUrl: string | null;
  /** A download may start (browser_download runs); any other download is cancelled. */
  downloadArmed: boolean;
  /** The open page's URL, or null when no page is open. */
  currentUrl(): string | null;
}

/** What a session is opened with. */
export interface SessionOptions {
  personId: PersonId;
  /** Where the person's cookies and storage are saved (mode 0600, atomically). */
  stateFile: string;
  egress: EgressCheck;
  /** Time limit of one navigation or action, ms. */
  actionTimeoutMs: number;
  secretCheck?: (texts: readonly string[], origin: string) => string[];
  logger?: Logger;
}

/** Opens the person's context in `browser`; the caller closes `proxy` with the context. */
export async function openSession(browser: Browser, options: SessionOptions): Promise<{ session: PersonBrowser; proxy: EgressProxy }> {
  const { personId, stateFile } = options;
  const saved = await readState(stateFile);
  const denied: DeniedRequest[] = [];
  const proxy = await EgressProxy.start({
    egress: options.egress,
    onDenied: (d) => {
      if (denied.length < 50) denied.push(d);
    },
  });
  const context = await browser.newContext({
    ...(saved ? { storageState: saved.storage } : {}),
    proxy: { server: proxy.url, bypass: "<-loopback>" },
    serviceWorkers: "block",
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    locale: "en-US",
  });
  context.setDefaultTimeout(options.actionTimeoutMs);
  context.setDefaultNavigationTimeout(options.actionTimeoutMs);
  const network = new NetworkGuard({
    ...(options.secretCheck && { secretCheck: options.secretCheck }),
    onDenied: (d) => {
      if (denied.length < 50) denied.push(d);
    },
  });
  await network.install(context);
  let page: Page | null = null;
  const session: PersonBrowser = {
    personId,
    context,
    network,
    refs: new RefMemory(),
    lastUrl: saved?.lastUrl ?? null,
    downloadArmed: false,
    takeRefusals: async () => {
      await Promise.all([network.settled(REFUSALS_SETTLE_MS), proxy.settled(REFUSALS_SETTLE_MS)]);
      return denied.splice(0);
    },
    currentUrl: () => (page && !page.isClosed() ? page.url() : null),
    page: async () => {
      if (page === null || page.isClosed()) {
        page = await context.newPage();
        page.on("download", (download) => {
          if (!session.downloadArmed) void download.cancel().catch(() => undefined);
        });
        page.on("crash", () => {
          options.logger?.warn({ personId }, "browser page crashed; a new page opens on next use");
          page?.close().catch(() => undefined);
        });
        session.refs.clear();
      }
      return page;
    },
    save: async () => {
      const storage = await context.storageState({ indexedDB: true });
      const url = page && !page.isClosed() ? page.url() : session.lastUrl;
      session.lastUrl = url && url !== "about:blank" ? url : session.lastUrl;
      await writeState(stateFile, { storage, lastUrl: session.lastUrl });
    },
  };
  return { session, proxy };
}
