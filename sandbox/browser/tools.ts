/**
 * The browser tools the model calls. Every page it reads is untrusted content (the activation is
 * tainted). Every action is described to Sentinel first (`describe.ts`) and, when it runs, checked
 * again: the page must still describe the same action (same digest), and at the network layer only
 * the approved write may leave (`network.ts`).
 */
import { z } from "zod";
import {
  ActionUnavailableError,
  type ActionDescription,
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../../core/tools/index.js";
import type { PersonId } from "../../core/ids.js";
import type { ArtifactSink } from "../artifacts/index.js";
import { Workspace } from "../workspace/index.js";
import { captureTools } from "./capture.js";
import {
  describeClick,
  describeDownload,
  describeFill,
  describeOpen,
  describeUpload,
  pageLabel,
  type Scrub,
} from "./describe.js";
import { inPage } from "./in-page.js";
import { pairsOf, type ObservedWrite } from "./network.js";
import {
  CHECKOUT_FACTS,
  ELEMENT_FACTS,
  checkoutFactsSchema,
  elementFactsSchema,
  type ElementFacts,
} from "./page-scripts.js";
import { passwordValues, readPage } from "./read.js";
import type { DeniedRequest } from "./proxy.js";
import { BrowserUnavailableError, type BrowserRuntime, type PersonBrowser } from "./runtime.js";
import type { Page } from "playwright-core";
import { createHash } from "node:crypto";

/** Settings of the browser tools. */
export interface BrowserToolOptions {
  runtime: BrowserRuntime;
  /** Where screenshots and downloads are recorded. */
  artifacts: ArtifactSink;
  /** DATA_DIR (workspace files for uploads). */
  dataDir: string;
  /** Known vault values → references (the vault's `scrub`). */
  scrub?: Scrub;
  /** Characters one page readout may hold (sized from the context budget). */
  maxReadChars?: number;
  /** Largest download, bytes (default 50 MiB). */
  maxDownloadBytes?: number;
}

const ref = z.string().regex(/^[a-z0-9]{1,16}$/i).describe("e.g. e12");
const untrusted = (url: string) => ({ source: `browser page ${url}` });

/** The browser tools: open, read, click, type, select, screenshot, PDF, download, upload. */
export function browserTools(options: BrowserToolOptions): ToolDefinition[] {
  const { runtime } = options;
  const scrub: Scrub = options.scrub ?? ((s) => s);
  const maxChars = options.maxReadChars ?? 12_000;
  // The page tools are offered while the person's browser is open (after browser_open); browser_open always.
  const inUse = (personId: PersonId) => runtime.inUse(personId);

  /**
   * Runs `fn` on the person's page; browser failures become structured tool errors. Every refusal
   * not reported by `fn` itself — made since the previous tool result, or during `fn` — is added to
   * the result, so each refusal reaches the model with the next tool result.
   */
  const withPage = async (personId: PersonId, fn: (session: PersonBrowser, page: Page) => Promise<ToolResult>): Promise<ToolResult> => {
    const refused: DeniedRequest[] = [];
    let result: ToolResult;
    try {
      result = await runtime.use(personId, async (session) => {
        refused.push(...(await session.takeRefusals()));
        try {
          return await fn(session, await session.page());
        } finally {
          refused.push(...(await session.takeRefusals()));
        }
      });
    } catch (error) {
      if (error instanceof BrowserUnavailableError) result = { ok: false, code: error.code, error: error.message };
      else result = { ok: false, code: "browser_error", error: scrub(`the browser action failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`) };
    }
    return withRefusals(result, refused);
  };

  /** For describe(): the page and element, or a clear reason there are none. */
  const describeWith = async (personId: PersonId, fn: (session: PersonBrowser, page: Page) => Promise<ActionDescription>): Promise<ActionDescription> => {
    try {
      return await runtime.use(personId, async (session) => fn(session, await session.page()));
    } catch (error) {
      if (error instanceof ActionUnavailableError) throw error;
      throw new ActionUnavailableError("browser_error", scrub(`the browser could not look at the page: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`));
    }
  };

  const requirePage = (page: Page, session: PersonBrowser): string => {
    const url = page.url();
    if (url === "about:blank" || url === "") {
      const last = session.lastUrl ? ` (it was on ${session.lastUrl} before it closed; browser_open it again)` : "";
      throw new ActionUnavailableError("no_page", `No page is open in the browser${last}. Use browser_open first.`);
    }
    session.refs.onPage(url);
    return url;
  };

  const factsOf = async (page: Page, r: string): Promise<ElementFacts> => {
    const locator = page.getByRef(r);
    if ((await locator.count().catch(() => 0)) === 0) throw new ActionUnavailableError("unknown_ref", `There is no element ${r} on the page now. Call browser_read for fresh references.`);
    return elementFactsSchema.parse(await locator.evaluate(inPage<unknown, unknown>(ELEMENT_FACTS)));
  };

  const checkoutOf = async (page: Page) => checkoutFactsSchema.parse(await page.evaluate(inPage<void, unknown>(CHECKOUT_FACTS)));

  /** Refuses when the page no longer describes the action Sentinel judged (and the person approved). */
  const stillSame = (context: ToolContext, now: ActionDescription): ToolResult | null => {
    if (context.action === undefined || context.action.digest === now.digest) return null;
    return { ok: false, code: "page_changed", error: `The page changed since this action was checked (now: ${now.summary}). Nothing was done. Read the page again and decide anew.` };
  };

  /** After an action: what the page looks like now, plus what Sentinel stopped. */
  const afterAction = async (session: PersonBrowser, page: Page, done: string, stopped: ObservedWrite[] = [], clickedRef?: string, earlier: DeniedRequest[] = []): Promise<ToolResult> => {
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
    const read = await readPage(page, { maxChars, scrub });
    return { ok: true, content: `${notes.join("\n")}\n\n${read.content}`, data: { url: read.url, title: read.title }, untrusted: untrusted(read.url) };
  };

  const open = defineTool({
    name: "browser_open",
    description: "Open a web page in the person's own browser (logins persist). Returns its text and element refs.",
    parameters: z.object({ url: z.string().min(1).max(4096).describe("Absolute http(s) URL") }),
    sideEffect: false,
    capability: "browser.browse",
    policy: {
      capability: "browser.browse",
      access: "read",
      destinationArgs: ["url"],
      exfiltrationArgs: [],
      describe: async (args, context) => {
        const { url } = z.object({ url: z.string() }).parse(args);
        // No browser is started just to judge: the current page (if any) only labels the card.
        return describeOpen({ tool: "browser_open", pageUrl: runtime.peekUrl(context.personId) ?? "", scrub }, url);
      },
    },
    async execute(args, context) {
      if (!/^https?:\/\//i.test(args.url.trim())) {
        return { ok: false, code: "egress_denied", error: `Only http and https pages can be opened, not ${JSON.stringify(args.url.slice(0, 100))}. Nothing was opened.`, data: { reason: "scheme_not_allowed" } };
      }
      return withPage(context.personId, async (session, page) => {
        // Refusals from before this call are reported by withPage; these are the navigation's own.
        let status: number | null = null;
        try {
          // Wait for the response to commit, then (briefly) for the document: a page that starts a
          // download or navigates again while loading must not hang the tool.
          status = (await page.goto(args.url, { waitUntil: "commit" }))?.status() ?? null;
          await Promise.race([page.waitForLoadState("domcontentloaded", { timeout: 8_000 }), page.waitForEvent("download", { timeout: 8_000 })]).catch(() => undefined);
        } catch (error) {
          const denied = await session.takeRefusals();
          if (denied.length > 0) return egressDenied(denied);
          return { ok: false, code: "navigation_failed", error: scrub(`${args.url} did not load: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`) };
        }
        const denied = await session.takeRefusals();
        if (denied.some((d) => sameTarget(d.url, page.url()) || sameTarget(d.url, args.url))) return egressDenied(denied);
        session.refs.onPage(page.url());
        return afterAction(session, page, `Opened ${page.url()}${status !== null ? ` (HTTP ${status})` : ""}.`, [], undefined, denied);
      });
    },
  });

  const read = defineTool({
    name: "browser_read",
    offered: inUse,
    description: "Read the open page: text and elements with [ref=…] ids.",
    parameters: z.object({ part: z.number().int().min(1).max(100).optional() }),
    sideEffect: false,
    capability: "browser.read",
    async execute(args, context) {
      return withPage(context.personId, async (session, page) => {
        try {
          requirePage(page, session);
        } catch (error) {
          if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: error.message };
          throw error;
        }
        const result = await readPage(page, { maxChars, scrub, ...(args.part !== undefined && { part: args.part }) });
        return { ok: true, content: result.content, data: { url: result.url, parts: result.parts }, untrusted: untrusted(result.url) };
      });
    },
  });

  const click = defineTool({
    name: "browser_click",
    offered: inUse,
    description: "Click an element by ref. Submitting or sending data asks the person first.",
    parameters: z.object({ ref }),
    sideEffect: true,
    capability: "browser.browse",
    policy: {
      capability: "browser.browse",
      access: "read",
      destinationArgs: [],
      exfiltrationArgs: [],
      describe: async (args, context) => {
        const { ref: r } = z.object({ ref: z.string() }).parse(args);
        return describeWith(context.personId, async (session, page) => {
          const pageUrl = requirePage(page, session);
          return describeClick({ tool: "browser_click", pageUrl, scrub, ref: r }, await factsOf(page, r), await checkoutOf(page), session.refs.writeOf(r), await passwordValues(page));
        });
      },
    },
    async execute(args, context) {
      return withPage(context.personId, async (session, page) => {
        const pageUrl = requirePage(page, session);
        const facts = await factsOf(page, args.ref);
        const observed = session.refs.writeOf(args.ref);
        const now = describeClick({ tool: "browser_click", pageUrl, scrub, ref: args.ref }, facts, await checkoutOf(page), observed, await passwordValues(page));
        const changed = stillSame(context, now);
        if (changed) return changed;
        if (now.access === "write") {
          if (observed) session.network.arm({ method: observed.method, url: observed.url, fields: observed.fields, bodyDigest: observed.bodyDigest });
          else if (facts.form) session.network.arm({ method: facts.form.method, url: facts.form.action, fields: pairsOf(facts.form.fields) });
        } else session.network.arm({ method: "NONE", url: "", fields: [] });
        let outcome: ReturnType<typeof session.network.disarm>;
        try {
          await page.getByRef(args.ref).click({ timeout: 10_000 });
          await page.waitForLoadState("load", { timeout: 5_000 }).catch(() => undefined);
        } finally {
          outcome = session.network.disarm();
        }
        if (observed && outcome.sent.length > 0) session.refs.forgetWrite(args.ref);
        const sent = outcome.sent.length > 0 ? ` Sent: ${outcome.sent.map((w) => `${w.method} ${pageLabel(w.url)}`).join(", ")}.` : "";
        return afterAction(session, page, `${now.summary}: done.${sent}`, outcome.stopped, args.ref);
      });
    },
  });

  const fill = (name: "browser_type" | "browser_select") =>
    defineTool({
      name,
      offered: inUse,
      description:
        name === "browser_type"
          ? "Type into a field by ref (replaces it). For a password use {{secret:NAME}}."
          : "Choose options (labels or values) in a select by ref.",
      parameters: name === "browser_type" ? z.object({ ref, text: z.string().max(10_000) }) : z.object({ ref, values: z.array(z.string().max(500)).min(1).max(50) }),
      sideEffect: false,
      capability: "browser.browse",
      policy: {
        capability: "browser.browse",
        access: "read",
        destinationArgs: [],
        exfiltrationArgs: [],
        describe: async (args, context) => {
          const parsed = z.object({ ref: z.string(), text: z.string().optional(), values: z.array(z.string()).optional() }).parse(args);
          return describeWith(context.personId, async (session, page) => {
            const pageUrl = requirePage(page, session);
            const value = parsed.text ?? (parsed.values ?? []).join(", ");
            return describeFill({ tool: name, pageUrl, scrub, ref: parsed.ref }, await factsOf(page, parsed.ref), name === "browser_type" ? "TYPE" : "SELECT", value);
          });
        },
      },
      async execute(rawArgs, context) {
        const args = z.object({ ref: z.string(), text: z.string().optional(), values: z.array(z.string()).optional() }).parse(rawArgs);
        return withPage(context.personId, async (session, page) => {
          const pageUrl = requirePage(page, session);
          const facts = await factsOf(page, args.ref);
          const value = args.text ?? (args.values ?? []).join(", ");
          // Compare with what was judged using the references as they were (Sentinel put secret values in the arguments).
          const now = describeFill({ tool: name, pageUrl, scrub, ref: args.ref }, facts, name === "browser_type" ? "TYPE" : "SELECT", value);
          const changed = stillSame(context, now);
          if (changed) return changed;
          session.network.arm({ method: "NONE", url: "", fields: [] });
          let outcome: ReturnType<typeof session.network.disarm>;
          try {
            if (args.text !== undefined) await page.getByRef(args.ref).fill(args.text);
            else await page.getByRef(args.ref).selectOption(args.values ?? []);
          } finally {
            outcome = session.network.disarm();
          }
          if (args.text !== undefined && scrub(args.text) !== args.text) session.refs.markSecret(args.ref);
          return afterAction(session, page, `${now.summary}: done.`, outcome.stopped);
        });
      },
    });

  const [screenshot, pdf] = captureTools({ artifacts: options.artifacts, scrub, inUse, withPage, requirePage });

  const download = defineTool({
    name: "browser_download",
    offered: inUse,
    description: "Download a file (link ref or URL) into the workspace's downloads/. Asks first.",
    parameters: z.object({ ref: ref.optional(), url: z.string().min(1).max(4096).optional() }).refine((a) => (a.ref === undefined) !== (a.url === undefined), "give either ref or url"),
    sideEffect: true,
    capability: "browser.download",
    policy: {
      capability: "browser.download",
      access: "write",
      destinationArgs: ["url"],
      exfiltrationArgs: [],
      describe: async (args, context) => {
        const parsed = z.object({ ref: z.string().optional(), url: z.string().optional() }).parse(args);
        return describeWith(context.personId, async (session, page) => {
          if (parsed.ref !== undefined) {
            const pageUrl = requirePage(page, session);
            const facts = await factsOf(page, parsed.ref);
            return describeDownload({ tool: "browser_download", pageUrl, scrub, ref: parsed.ref }, facts.href, facts.label);
          }
          return describeDownload({ tool: "browser_download", pageUrl: page.url(), scrub, ref: null }, parsed.url ?? null, "");
        });
      },
    },
    async execute(args, context) {
      return withPage(context.personId, async (session, page) => {
        const facts = args.ref !== undefined ? await factsOf(page, args.ref) : null;
        const now = describeDownload({ tool: "browser_download", pageUrl: page.url(), scrub, ref: args.ref ?? null }, facts ? facts.href : (args.url ?? null), facts?.label ?? "");
        const changed = stillSame(context, now);
        if (changed) return changed;
        const limit = options.maxDownloadBytes ?? 50 * 1024 * 1024;
        const waiting = page.waitForEvent("download", { timeout: 20_000 });
        session.downloadArmed = true;
        if (args.ref !== undefined) await page.getByRef(args.ref).click();
        else await page.evaluate(inPage<string, void>("(u) => { const a = document.createElement('a'); a.href = u; a.download = ''; document.body.appendChild(a); a.click(); a.remove(); }"), args.url!);
        let file;
        try {
          file = await waiting;
        } catch {
          session.downloadArmed = false;
          const denied = await session.takeRefusals();
          if (denied.length > 0) return egressDenied(denied);
          return { ok: false, code: "no_download", error: "No download started within 20 s; nothing was saved." };
        }
        session.downloadArmed = false;
        const bytes = await readStream(await file.createReadStream(), limit);
        if (bytes === null) {
          await file.cancel().catch(() => undefined);
          return { ok: false, code: "too_large", error: `The download is larger than ${limit} bytes; nothing was saved.` };
        }
        const saved = await options.artifacts.save({
          personId: context.personId,
          name: safeName(file.suggestedFilename()) || "download",
          mimeType: mimeOf(file.suggestedFilename()),
          bytes,
          source: `download from ${scrub(file.url())}`,
          folder: "downloads",
          title: safeName(file.suggestedFilename()) || "download",
          taskId: context.taskId,
          // A download is content from outside.
          taint: { source: scrub(file.url()) },
        });
        await file.delete().catch(() => undefined);
        return { ok: true, content: `Downloaded ${saved.name} (${saved.size} bytes) to ${saved.path}; artifact ${saved.id}.`, data: { artifactId: saved.id, path: saved.path } };
      });
    },
  });

  const upload = defineTool({
    name: "browser_upload",
    offered: inUse,
    description: "Attach a workspace file to a file field by ref. Asks first.",
    parameters: z.object({ ref, path: z.string().min(1).max(500) }),
    sideEffect: true,
    capability: "browser.upload",
    policy: {
      capability: "browser.upload",
      access: "write",
      destinationArgs: [],
      exfiltrationArgs: ["path"],
      describe: async (args, context) => {
        const parsed = z.object({ ref: z.string(), path: z.string() }).parse(args);
        const bytes = await readWorkspace(options.dataDir, context.personId, parsed.path);
        return describeWith(context.personId, async (session, page) => {
          const pageUrl = requirePage(page, session);
          return describeUpload({ tool: "browser_upload", pageUrl, scrub, ref: parsed.ref }, await factsOf(page, parsed.ref), parsed.path, bytes.length, sha(bytes));
        });
      },
    },
    async execute(args, context) {
      const bytes = await readWorkspace(options.dataDir, context.personId, args.path);
      return withPage(context.personId, async (session, page) => {
        const pageUrl = requirePage(page, session);
        const now = describeUpload({ tool: "browser_upload", pageUrl, scrub, ref: args.ref }, await factsOf(page, args.ref), args.path, bytes.length, sha(bytes));
        const changed = stillSame(context, now);
        if (changed) return changed;
        session.network.arm({ method: "NONE", url: "", fields: [] });
        let outcome: ReturnType<typeof session.network.disarm>;
        try {
          await page.getByRef(args.ref).setInputFiles({ name: args.path.split("/").pop() ?? "file", mimeType: mimeOf(args.path), buffer: bytes });
        } finally {
          outcome = session.network.disarm();
        }
        return afterAction(session, page, `${now.summary}: done. It is sent when the form is submitted.`, outcome.stopped);
      });
    },
  });

  return [open, read, click, fill("browser_type"), fill("browser_select"), screenshot, pdf, download, upload];
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

function egressDenied(denied: { url: string; code: string; reason: string }[]): ToolResult {
  const first = denied[0]!;
  return {
    ok: false,
    code: "egress_denied",
    error: `Sentinel refused ${first.url}: ${first.reason} (${first.code}). Nothing was sent there.`,
    data: { denied: denied.slice(0, 10).map((d) => ({ url: d.url, code: d.code })) },
  };
}

function sameTarget(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.host === y.host;
  } catch {
    return false;
  }
}

async function readWorkspace(dataDir: string, personId: PersonId, path: string): Promise<Buffer> {
  try {
    return await Workspace.of(dataDir, personId).readBytes(path, 50 * 1024 * 1024);
  } catch (error) {
    throw new ActionUnavailableError("file_error", error instanceof Error ? error.message : String(error));
  }
}

async function readStream(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += buffer.length;
    if (size > limit) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A file name safe for the workspace: no separators or control characters, at most 120 characters. */
export function safeName(name: string): string {
  return name.replace(/[\\/\0-\x1f\x7f]+/g, "_").replace(/^\.+/, "").slice(0, 120);
}

const MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  htm: "text/html",
  csv: "text/csv",
  json: "application/json",
  ics: "text/calendar",
  zip: "application/zip",
};

/** MIME type by file extension (application/octet-stream when unknown). */
export function mimeOf(name: string): string {
  return MIME[name.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}
