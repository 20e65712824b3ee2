/**
 * What every browser tool shares: the person's page run with browser failures as tool errors and
 * Sentinel's refusals reported with the next result, the checks that the page is open, that an
 * element exists and that the page still describes the action Sentinel judged, and the readout
 * after an action.
 */
import { z } from "zod";
import type { Page } from "playwright-core";
import type { PersonId } from "../../core/ids.js";
import { ActionUnavailableError, type ActionDescription, type ToolContext, type ToolResult } from "../../core/tools/index.js";
import { pageLabel, type Scrub } from "./describe.js";
import { inPage } from "./in-page.js";
import type { ObservedWrite } from "./network.js";
import { CHECKOUT_FACTS, ELEMENT_FACTS, checkoutFactsSchema, elementFactsSchema, type ElementFacts } from "./page-scripts.js";
import type { DeniedRequest } from "./proxy.js";
import { readPage } from "./read.js";
import { BrowserUnavailableError, type BrowserRuntime, type PersonBrowser } from "./runtime.js";

/** An element reference as the page readout names it. */
export const ref = z.string().regex(/^[a-z0-9]{1,16}$/i).describe("e.g. e12");
/** Every page is untrusted content. */
export const untrusted = (url: string) => ({ source: `browser page ${url}` });

/** The helpers the browser tools share, bound to one runtime. */
export class PageKit {
  readonly scrub: Scrub;
  /** Characters one page readout may hold. */
  readonly maxChars: number;

  constructor(
    readonly runtime: BrowserRuntime,
    options: { scrub?: Scrub; maxReadChars?: number },
  ) {
    this.scrub = options.scrub ?? ((s) => s);
    this.maxChars = options.maxReadChars ?? 12_000;
  }

  /** The page tools are offered while the person's browser is open (after browser_open); browser_open always. */
  readonly inUse = (personId: PersonId) => this.runtime.inUse(personId);

  /**
   * Runs `fn` on the person's page; browser failures become structured tool errors. Every refusal
   * not reported by `fn` itself — made since the previous tool result, or during `fn` — is added to
   * the result, so each refusal reaches the model with the next tool result.
   */
  readonly withPage = async (personId: PersonId, fn: (session: PersonBrowser, page: Page) => Promise<ToolResult>): Promise<ToolResult> => {
    const refused: DeniedRequest[] = [];
    let result: ToolResult;
    try {
      result = await this.runtime.use(personId, async (session) => {
        refused.push(...(await session.takeRefusals()));
        try {
          return await fn(session, await session.page());
        } finally {
          refused.push(...(await session.takeRefusals()));
        }
      });
    } catch (error) {
      if (error instanceof BrowserUnavailableError) result = { ok: false, code: error.code, error: error.message };
      else result = { ok: false, code: "browser_error", error: this.scrub(`the browser action failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`) };
    }
    return withRefusals(result, refused);
  };

  /** For describe(): the page and element, or a clear reason there are none. */
  readonly describeWith = async (personId: PersonId, fn: (session: PersonBrowser, page: Page) => Promise<ActionDescription>): Promise<ActionDescription> => {
    try {
      return await this.runtime.use(personId, async (session) => fn(session, await session.page()));
    } catch (error) {
      if (error instanceof ActionUnavailableError) throw error;
      throw new ActionUnavailableError("browser_error", this.scrub(`the browser could not look at the page: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`));
    }
  };

  readonly requirePage = (page: Page, session: PersonBrowser): string => {
    const url = page.url();
    if (url === "about:blank" || url === "") {
      const last = session.lastUrl ? ` (it was on ${session.lastUrl} before it closed; browser_open it again)` : "";
      throw new ActionUnavailableError("no_page", `No page is open in the browser${last}. Use browser_open first.`);
    }
    session.refs.onPage(url);
    return url;
  };

  readonly factsOf = async (page: Page, r: string): Promise<ElementFacts> => {
    const locator = page.getByRef(r);
    if ((await locator.count().catch(() => 0)) === 0) throw new ActionUnavailableError("unknown_ref", `There is no element ${r} on the page now. Call browser_read for fresh references.`);
    return elementFactsSchema.parse(await locator.evaluate(inPage<unknown, unknown>(ELEMENT_FACTS)));
  };

  readonly checkoutOf = async (page: Page) => checkoutFactsSchema.parse(await page.evaluate(inPage<void, unknown>(CHECKOUT_FACTS)));

  /** Refuses when the page no longer describes the action Sentinel judged (and the person approved). */
  readonly stillSame = (context: ToolContext, now: ActionDescription): ToolResult | null => {
    if (context.action === undefined || context.action.digest === now.digest) return null;
    return { ok: false, code: "page_changed", error: `The page changed since this action was checked (now: ${now.summary}). Nothing was done. Read the page again and decide anew.` };
  };

  /** After an action: what the page looks like now, plus what Sentinel stopped. */
  readonly afterAction = async (session: PersonBrowser, page: Page, done: string, stopped: ObservedWrite[] = [], clickedRef?: string, earlier: DeniedRequest[] = []): Promise<ToolResult> => {
    await page.waitForLoadState("domcontentloaded", { timeout: 3_000 }).catch(() => undefined);
    const denied = [...earlier, ...(await session.takeRefusals())];
    const notes: string[] = [done];
    if (stopped.length > 0) {
      const first = stopped[0]!;
      if (clickedRef) session.refs.rememberWrite(clickedRef, first);
      notes.push(
        `The page tried to send data (${first.method} to ${pageLabel(first.url)}${first.fields ? `: ${first.fields.map((f) => f.name).join(", ")}` : ""}) and Sentinel stopped it: nothing was sent.` +
          (clickedRef ? ` To ask the person to send it, call browser_click on ${clickedRef} again.` : ""),
      );
    }
    if (denied.length > 0) notes.push(refusalNote(denied));
    const read = await readPage(page, { maxChars: this.maxChars, scrub: this.scrub });
    return { ok: true, content: `${notes.join("\n")}\n\n${read.content}`, data: { url: read.url, title: read.title }, untrusted: untrusted(read.url) };
  };
}

/** One line naming refused requests (origin or URL as the refusal reported it, and its code). */
function refusalNote(denied: readonly DeniedRequest[]): string {
  return `Sentinel refused ${denied.length} request(s) of the page: ${denied.slice(0, 5).map((d) => `${d.url} (${d.code})`).join("; ")}.`;
}

/** A tool result with the refusals it did not report itself (on success in its content, on failure in its error). */
function withRefusals(result: ToolResult, refused: readonly DeniedRequest[]): ToolResult {
  if (refused.length === 0) return result;
  const note = refusalNote(refused);
  return result.ok ? { ...result, content: `${note}\n\n${result.content}` } : { ...result, error: `${result.error}\n${note}` };
}

export function egressDenied(denied: { url: string; code: string; reason: string }[]): ToolResult {
  const first = denied[0]!;
  return {
    ok: false,
    code: "egress_denied",
    error: `Sentinel refused ${first.url}: ${first.reason} (${first.code}). Nothing was sent there.`,
    data: { denied: denied.slice(0, 10).map((d) => ({ url: d.url, code: d.code })) },
  };
}

export function sameTarget(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.host === y.host;
  } catch {
    return false;
  }
}

