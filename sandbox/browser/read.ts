/**
 * The page as the model reads it: title and URL, the readable text, and the accessibility snapshot
 * whose `[ref=eN]` marks are the element references the other tools take. Sized for the model's
 * budget (characters; about 4 per token): the snapshot gets most of it, the text the rest, and a cut
 * says how much is left and how to read on (`part`). Filled password fields are masked: every value a
 * password input holds is replaced wherever it appears; vault values become references.
 */
import type { Page } from "playwright-core";
import { z } from "zod";
import { READABLE_TEXT } from "./page-scripts.js";
import { inPage } from "./in-page.js";
import type { Scrub } from "./describe.js";

const readableSchema = z.object({ title: z.string(), url: z.string(), text: z.string() });

/** Values of the page's password inputs (to mask them), in every frame Playwright can reach. */
export async function passwordValues(page: Page): Promise<string[]> {
  const values: string[] = [];
  for (const frame of page.frames()) {
    try {
      const found = z.array(z.string()).parse(await frame.locator("input[type=password]").evaluateAll(inPage<unknown[], string[]>("(els) => els.map((e) => String(e.value || ''))")));
      values.push(...found.filter((v) => v.length > 0));
    } catch {
      // A detached or cross-process frame: its fields are masked in the snapshot by Chromium's own rules.
    }
  }
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

/** Replaces every password value and vault value in `text`. */
export function mask(text: string, passwords: readonly string[], scrub: Scrub): string {
  let out = scrub(text);
  for (const p of passwords) if (p.length > 0) out = out.split(p).join(`•••• (${p.length} characters)`);
  return out;
}

/** One readout of the page, cut to `maxChars` (part 1, 2, … continue where the last one stopped). */
export async function readPage(page: Page, options: { maxChars: number; part?: number; scrub: Scrub }): Promise<{ content: string; url: string; title: string; parts: number }> {
  const readable = readableSchema.parse(await page.evaluate(inPage<void, unknown>(READABLE_TEXT)));
  const snapshot = await page.ariaSnapshot({ mode: "ai", timeout: 10_000 }).catch(() => "(no accessibility snapshot: the page is still loading)");
  const passwords = await passwordValues(page);
  const text = mask(readable.text, passwords, options.scrub);
  const tree = mask(snapshot, passwords, options.scrub);
  const whole = `## Elements (use the ref values with browser_click, browser_type, browser_select)\n${tree}\n\n## Text\n${text}`;
  const size = Math.max(1_000, options.maxChars);
  const parts = Math.max(1, Math.ceil(whole.length / size));
  const part = Math.min(Math.max(1, options.part ?? 1), parts);
  const slice = whole.slice((part - 1) * size, part * size);
  const header = `Page: ${mask(readable.title, passwords, options.scrub)}\nURL: ${options.scrub(readable.url)}${parts > 1 ? `\nPart ${part} of ${parts} (${whole.length} characters; read more with browser_read part=${Math.min(part + 1, parts)})` : ""}`;
  return { content: `${header}\n\n${slice}`, url: readable.url, title: readable.title, parts };
}
