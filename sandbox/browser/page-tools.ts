/** The page tools: open a page, read it, click an element, type into or choose in a field. */
import { z } from "zod";
import { ActionUnavailableError, defineTool, type ToolDefinition } from "../../core/tools/index.js";
import { describeClick, describeFill, describeOpen, pageLabel } from "./describe.js";
import { egressDenied, ref, sameTarget, untrusted, type PageKit } from "./kit.js";
import { pairsOf } from "./network.js";
import { passwordValues, readPage } from "./read.js";

/** `browser_open`: a page in the person's own browser; it returns the page's text and element refs. */
export function openTool(kit: PageKit): ToolDefinition {
  return defineTool({
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
        return describeOpen({ tool: "browser_open", pageUrl: kit.runtime.peekUrl(context.personId) ?? "", scrub: kit.scrub }, url);
      },
    },
    async execute(args, context) {
      if (!/^https?:\/\//i.test(args.url.trim())) {
        return { ok: false, code: "egress_denied", error: `Only http and https pages can be opened, not ${JSON.stringify(args.url.slice(0, 100))}. Nothing was opened.`, data: { reason: "scheme_not_allowed" } };
      }
      return kit.withPage(context.personId, async (session, page) => {
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
          return { ok: false, code: "navigation_failed", error: kit.scrub(`${args.url} did not load: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`) };
        }
        const denied = await session.takeRefusals();
        if (denied.some((d) => sameTarget(d.url, page.url()) || sameTarget(d.url, args.url))) return egressDenied(denied);
        session.refs.onPage(page.url());
        return kit.afterAction(session, page, `Opened ${page.url()}${status !== null ? ` (HTTP ${status})` : ""}.`, [], undefined, denied);
      });
    },
  });
}

/** `browser_read`: the open page's text and elements, in parts. */
export function readTool(kit: PageKit): ToolDefinition {
  return defineTool({
    name: "browser_read",
    offered: kit.inUse,
    description: "Read the open page: text and elements with [ref=…] ids.",
    parameters: z.object({ part: z.number().int().min(1).max(100).optional() }),
    sideEffect: false,
    capability: "browser.read",
    async execute(args, context) {
      return kit.withPage(context.personId, async (session, page) => {
        try {
          kit.requirePage(page, session);
        } catch (error) {
          if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: error.message };
          throw error;
        }
        const result = await readPage(page, { maxChars: kit.maxChars, scrub: kit.scrub, ...(args.part !== undefined && { part: args.part }) });
        return { ok: true, content: result.content, data: { url: result.url, parts: result.parts }, untrusted: untrusted(result.url) };
      });
    },
  });
}

/** `browser_click`: a click by ref; one that submits or sends data asks first, and only the approved write may leave. */
export function clickTool(kit: PageKit): ToolDefinition {
  return defineTool({
    name: "browser_click",
    offered: kit.inUse,
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
        return kit.describeWith(context.personId, async (session, page) => {
          const pageUrl = kit.requirePage(page, session);
          return describeClick({ tool: "browser_click", pageUrl, scrub: kit.scrub, ref: r }, await kit.factsOf(page, r), await kit.checkoutOf(page), session.refs.writeOf(r), await passwordValues(page));
        });
      },
    },
    async execute(args, context) {
      return kit.withPage(context.personId, async (session, page) => {
        const pageUrl = kit.requirePage(page, session);
        const facts = await kit.factsOf(page, args.ref);
        const observed = session.refs.writeOf(args.ref);
        const now = describeClick({ tool: "browser_click", pageUrl, scrub: kit.scrub, ref: args.ref }, facts, await kit.checkoutOf(page), observed, await passwordValues(page));
        const changed = kit.stillSame(context, now);
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
        return kit.afterAction(session, page, `${now.summary}: done.${sent}`, outcome.stopped, args.ref);
      });
    },
  });
}

/** `browser_type` and `browser_select`: fill a field by ref (a password as `{{secret:NAME}}`). */
export function fillTool(kit: PageKit, name: "browser_type" | "browser_select"): ToolDefinition {
  return defineTool({
    name,
    offered: kit.inUse,
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
        return kit.describeWith(context.personId, async (session, page) => {
          const pageUrl = kit.requirePage(page, session);
          const value = parsed.text ?? (parsed.values ?? []).join(", ");
          return describeFill({ tool: name, pageUrl, scrub: kit.scrub, ref: parsed.ref }, await kit.factsOf(page, parsed.ref), name === "browser_type" ? "TYPE" : "SELECT", value);
        });
      },
    },
    async execute(rawArgs, context) {
      const args = z.object({ ref: z.string(), text: z.string().optional(), values: z.array(z.string()).optional() }).parse(rawArgs);
      return kit.withPage(context.personId, async (session, page) => {
        const pageUrl = kit.requirePage(page, session);
        const facts = await kit.factsOf(page, args.ref);
        const value = args.text ?? (args.values ?? []).join(", ");
        // Compare with what was judged using the references as they were (Sentinel put secret values in the arguments).
        const now = describeFill({ tool: name, pageUrl, scrub: kit.scrub, ref: args.ref }, facts, name === "browser_type" ? "TYPE" : "SELECT", value);
        const changed = kit.stillSame(context, now);
        if (changed) return changed;
        session.network.arm({ method: "NONE", url: "", fields: [] });
        let outcome: ReturnType<typeof session.network.disarm>;
        try {
          if (args.text !== undefined) await page.getByRef(args.ref).fill(args.text);
          else await page.getByRef(args.ref).selectOption(args.values ?? []);
        } finally {
          outcome = session.network.disarm();
        }
        if (args.text !== undefined && kit.scrub(args.text) !== args.text) session.refs.markSecret(args.ref);
        return kit.afterAction(session, page, `${now.summary}: done.`, outcome.stopped);
      });
    },
  });
}
