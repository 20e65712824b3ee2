/**
 * What the browser keeps of a page as an artifact: `browser_screenshot` (PNG; password fields and
 * typed secrets masked) and `browser_pdf` (the page printed to PDF as the person's browser shows
 * it; password fields and typed secrets blanked while it prints). Both are content from outside:
 * the artifact carries the page's URL as its taint.
 */
import { z } from "zod";
import type { Locator, Page } from "playwright-core";
import type { PersonId } from "../../core/ids.js";
import { ActionUnavailableError, defineTool, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import type { ArtifactSink } from "../artifacts/index.js";
import { pageLabel, type Scrub } from "./describe.js";
import { mask } from "./read.js";
import type { PersonBrowser } from "./runtime.js";

/** What the capture tools borrow from the browser tools. */
export interface CaptureHelpers {
  artifacts: ArtifactSink;
  scrub: Scrub;
  inUse: (personId: PersonId) => boolean;
  withPage: (personId: PersonId, fn: (session: PersonBrowser, page: Page) => Promise<ToolResult>) => Promise<ToolResult>;
  requirePage: (page: Page, session: PersonBrowser) => string;
}

const fileSafe = (name: string) => name.replace(/[^\p{L}\p{N}._-]+/gu, "-").replace(/^[-.]+/, "").slice(0, 80) || "page";

/** Blanks the page's secret fields for a print (their values held in the element), or puts them back. */
async function blankFields(fields: Locator[], on: boolean): Promise<void> {
  for (const field of fields) {
    await field
      .evaluateAll((els, hide) => {
        // The browser's elements (no DOM types on the server): inputs have value and dataset.
        for (const el of els as unknown as Array<{ value: string; dataset: Record<string, string | undefined> }>) {
          if (hide) {
            el.dataset.familiarHeld = el.value;
            el.value = "";
          } else if (el.dataset.familiarHeld !== undefined) {
            el.value = el.dataset.familiarHeld;
            delete el.dataset.familiarHeld;
          }
        }
      }, on)
      .catch(() => undefined);
  }
}

/** `browser_screenshot` and `browser_pdf`. */
export function captureTools(h: CaptureHelpers): [ToolDefinition, ToolDefinition] {
  const onPage = (personId: PersonId, fn: (session: PersonBrowser, page: Page, url: string) => Promise<ToolResult>) =>
    h.withPage(personId, async (session, page) => {
      let url: string;
      try {
        url = h.requirePage(page, session);
      } catch (error) {
        if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: error.message };
        throw error;
      }
      return fn(session, page, url);
    });
  const secretFields = (session: PersonBrowser, page: Page) => [page.locator("input[type=password]"), ...session.refs.secretRefs().map((r) => page.getByRef(r))];

  const screenshot = defineTool({
    name: "browser_screenshot",
    offered: h.inUse,
    description: "Screenshot the page (passwords masked); kept as an image artifact.",
    parameters: z.object({ full_page: z.boolean().optional() }),
    sideEffect: false,
    capability: "browser.read",
    execute: (args, context) =>
      onPage(context.personId, async (session, page, url) => {
        const png = await page.screenshot({ type: "png", fullPage: args.full_page === true, mask: secretFields(session, page), maskColor: "#333333", animations: "disabled" });
        const title = mask((await page.title().catch(() => "")) || pageLabel(url), [], h.scrub);
        const saved = await h.artifacts.save({
          personId: context.personId,
          name: `screenshot-${fileSafe(pageLabel(url))}.png`,
          mimeType: "image/png",
          bytes: png,
          source: `screenshot of ${h.scrub(url)}`,
          folder: "artifacts",
          kind: "image",
          title: `Screenshot of ${title}`,
          taskId: context.taskId,
          taint: { source: h.scrub(url) },
        });
        return { ok: true, content: `Screenshot of “${title}” kept as artifact ${saved.seriesId} (${saved.path}, ${saved.size} bytes). Send it with artifact_send.`, data: { artifactId: saved.id, path: saved.path } };
      }),
  });

  const pdf = defineTool({
    name: "browser_pdf",
    offered: h.inUse,
    description: "Print the page the browser has open to PDF (as it shows now, passwords blanked); kept as a pdf artifact.",
    parameters: z.object({ title: z.string().trim().min(1).max(120).optional() }),
    sideEffect: false,
    capability: "browser.read",
    execute: (args, context) =>
      onPage(context.personId, async (session, page, url) => {
        const fields = secretFields(session, page);
        let bytes: Buffer;
        await blankFields(fields, true);
        try {
          bytes = await page.pdf({ format: "A4", printBackground: true });
        } finally {
          await blankFields(fields, false);
        }
        const pageTitle = mask((await page.title().catch(() => "")) || pageLabel(url), [], h.scrub);
        const saved = await h.artifacts.save({
          personId: context.personId,
          name: `${fileSafe(args.title ?? pageLabel(url))}.pdf`,
          mimeType: "application/pdf",
          bytes,
          source: `PDF of ${h.scrub(url)}`,
          folder: "artifacts",
          kind: "pdf",
          title: args.title ?? pageTitle,
          taskId: context.taskId,
          taint: { source: h.scrub(url) },
        });
        return { ok: true, content: `“${saved.title}” printed to PDF and kept as artifact ${saved.seriesId} (${saved.size} bytes). Send it with artifact_send.`, data: { artifactId: saved.id, path: saved.path } };
      }),
  });
  return [screenshot, pdf];
}
