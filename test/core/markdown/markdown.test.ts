import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderDiscord, renderDiscordPlain } from "../../../bots/discord/render.js";
import { layoutMessage } from "../../../bots/slack/layout.js";
import { renderSlackPlain, renderSlackSections } from "../../../bots/slack/render.js";
import { renderTelegram, renderTelegramPlain } from "../../../bots/telegram/render.js";
import { renderWhatsApp, renderWhatsAppPlain } from "../../../bots/whatsapp/render.js";
import { parseMarkdown, type Block, type Inline } from "../../../core/markdown/ir.js";
import type { RenderedPart } from "../../../core/markdown/render.js";
import { parseTelegramHtml } from "../../fakes/telegram-html.js";
import { markdownArbitrary } from "./markdown-gen.js";

/**
 * Property tests of the one markdown renderer, per platform: for random model-like markdown and a
 * random limit, (1) every part is within the limit as the platform counts it, (2) the parts' visible
 * text, concatenated, is the single-part rendering's (only whitespace at the cuts may go), (3) every
 * part is well-formed on its own (formats balanced, code fences closed). Visible text is read back by
 * an independent decoder of each platform's markup (Telegram: the fake Bot API's strict HTML parser).
 */

// A fixed seed by default (reproducible in CI); FC_SEED explores others, FC_SHRINK=1 shrinks a failure (slow on long inputs).
const RUNS = { numRuns: 150, seed: Number(process.env.FC_SEED ?? 9_090_707), endOnFailure: process.env.FC_SHRINK !== "1" };
const limitArb = fc.integer({ min: 60, max: 900 });
const squash = (s: string) => s.replace(/\s+/g, "");

/** Whether any text the model typed (outside code) holds a formatting character. */
function literalMarkers(markdown: string): boolean {
  const inline = (nodes: readonly Inline[]): boolean =>
    nodes.some((n) => (n.type === "text" ? /[*_~`]/.test(n.text) : n.type === "code" || n.type === "break" ? false : inline(n.children)));
  const block = (b: Block): boolean => {
    switch (b.type) {
      case "paragraph":
      case "heading":
        return inline(b.content);
      case "quote":
        return b.blocks.some(block);
      case "list":
        return b.items.some((item) => item.blocks.some(block));
      case "table":
        return [b.header, ...b.rows].some((row) => row.some(inline));
      default:
        return false;
    }
  };
  return parseMarkdown(markdown).some(block);
}

interface Platform {
  name: string;
  /** Whether the platform can escape formatting characters; without, literal ones the model typed may pair up across a cut. */
  escapes: boolean;
  /** Markdown punctuation the platform can show literally (it has an escape), added to the random words. */
  extra: string[];
  render(markdown: string, limit: number): RenderedPart<string>[];
  /** The size the platform counts. */
  size(body: string): number;
  /** What a reader sees of a body (markup removed), or an error if the body is malformed. */
  visible(body: string): string;
  /** Whether every format opened in the body is closed in it. */
  balanced(body: string): boolean;
}

/** Telegram: the fake Bot API's strict parser (only Telegram's tags, nesting rules, entities). */
const telegram: Platform = {
  name: "Telegram HTML",
  escapes: true,
  extra: ["*", "_", "`", "~", ">", "#", "[x]", "\\", "|"],
  render: renderTelegram,
  size: (body) => telegram.visible(body).length,
  visible: (body) => {
    const parsed = parseTelegramHtml(body);
    if (!parsed.ok) throw new Error(`${parsed.error} in ${JSON.stringify(body)}`);
    return parsed.text;
  },
  balanced: (body) => parseTelegramHtml(body).ok,
};

/** Removes a markdown-like body's code fences, quote and heading prefixes; `code` spans kept as text. */
function stripBlocks(body: string, fence: RegExp): string {
  return body
    .split("\n")
    .map((line) => line.replace(/^> ?/, "").replace(fence, ""))
    .join("\n");
}

/** One line of Discord markdown outside code blocks: code spans, `[label](url)`, markers, backslash escapes. */
function decodeDiscordInline(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const ticks = /^`+/.exec(text.slice(i))?.[0] ?? "";
    const close = ticks ? text.indexOf(ticks, i + ticks.length) : -1;
    const link = ch === "[" ? /^\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)/.exec(text.slice(i)) : null;
    if (ch === "\\" && i + 1 < text.length) out += text[++i];
    else if (ticks && close > 0) {
      out += text.slice(i + ticks.length, close); // a code span: its content as it is
      i = close + ticks.length - 1;
    } else if (link) {
      out += decodeDiscordInline(link[1]!);
      i += link[0].length - 1;
    } else if (!"*~".includes(ch)) out += ch;
  }
  return out;
}

/** Discord: fences, `> `, `# ` prefixes, then the inline markup of each line. */
const discord: Platform = {
  name: "Discord markdown",
  escapes: true,
  extra: ["*", "_", "`", "~", "#", "\\", "|", "**"],
  render: renderDiscord,
  size: (body) => body.length,
  visible: (body) => {
    const out: string[] = [];
    let inPre = false;
    for (const raw of body.split("\n")) {
      const line = raw.replace(/^> ?/, "");
      if (inPre) {
        if (line === "```") inPre = false;
        else out.push(line);
        continue;
      }
      const open = /^(.*?)```[\w#+.-]*$/.exec(line);
      if (open && (line.match(/(?<!\\)```/g)?.length ?? 0) === 1) {
        out.push(decodeDiscordInline(open[1]!));
        inPre = true;
      } else out.push(decodeDiscordInline(line.replace(/^#{1,3} /, "")));
    }
    return out.join("\n");
  },
  balanced: (body) => {
    let fences = 0;
    let stars = 0;
    let tildes = 0;
    let inPre = false;
    for (const raw of body.split("\n")) {
      const line = raw.replace(/^> ?/, "");
      if (inPre) {
        if (line === "```") {
          inPre = false;
          fences++;
        }
        continue;
      }
      const open = /^(.*?)```[\w#+.-]*$/.exec(line);
      const text = open && (line.match(/(?<!\\)```/g)?.length ?? 0) === 1 ? open[1]! : line;
      if (text !== line) {
        inPre = true;
        fences++;
      }
      for (let i = 0; i < text.length; i++) {
        const ticks = /^`+/.exec(text.slice(i))?.[0] ?? "";
        if (text[i] === "\\") i++;
        else if (ticks) {
          const close = text.indexOf(ticks, i + ticks.length);
          if (close < 0) return false; // a code span left open
          i = close + ticks.length - 1;
        } else if (text[i] === "*") stars++;
        else if (text.startsWith("~~", i)) {
          tildes++;
          i++;
        }
      }
    }
    // `**a *b***` closes both at once, so count stars: bold gives four, italic two.
    return !inPre && fences % 2 === 0 && stars % 2 === 0 && tildes % 2 === 0;
  },
};

/** Marker pairs outside code for WhatsApp and Slack (which have no escape, so the words carry no markers). */
function markersBalanced(body: string, code: RegExp): boolean {
  const fences = body.match(/```/g)?.length ?? 0;
  const outside = body.replace(code, "");
  return fences % 2 === 0 && ["*", "_", "~", "`"].every((m) => (outside.split(m).length - 1) % 2 === 0);
}

const whatsapp: Platform = {
  name: "WhatsApp formatting",
  escapes: false,
  extra: [],
  render: renderWhatsApp,
  size: (body) => body.length,
  visible: (body) => body.replace(/```|[*_~>\u200b]/g, ""),
  balanced: (body) => markersBalanced(body, /```[\s\S]*?```/g),
};

const slack: Platform = {
  name: "Slack mrkdwn",
  escapes: false,
  extra: [],
  render: renderSlackSections,
  size: (body) => body.length,
  visible: (body) =>
    stripBlocks(body, /```/g)
      .replace(/<([^|>]*)\|([^>]*)>/g, "$2")
      .replace(/<([^|>]*)>/g, "$1")
      .replace(/[*_~`]/g, "")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&"),
  balanced: (body) => markersBalanced(body, /```[\s\S]*?```|`[^`\n]*`|<[^>]*>/g) && !/&(?!amp;|lt;|gt;)/.test(body),
};

describe.each([telegram, discord, whatsapp, slack])("$name: random markdown, split at random limits", (platform) => {
  it("keeps every part within the limit, well-formed, in order, losing nothing but whitespace at the cuts", () => {
    fc.assert(
      fc.property(markdownArbitrary(platform.extra), limitArb, (markdown, limit) => {
        const whole = platform.render(markdown, 1_000_000);
        expect(whole.length).toBeLessThanOrEqual(1);
        const parts = platform.render(markdown, limit);
        const checkBalance = platform.escapes || !literalMarkers(markdown);
        for (const part of parts) {
          expect(platform.size(part.body)).toBeLessThanOrEqual(limit);
          if (checkBalance) expect(platform.balanced(part.body)).toBe(true);
          expect(part.body.trim()).not.toBe("");
        }
        const shown = parts.map((p) => platform.visible(p.body)).join("");
        expect(squash(shown)).toBe(squash(whole.map((p) => platform.visible(p.body)).join("")));
      }),
      RUNS,
    );
  });
});

describe("plain style: the text as typed", () => {
  it.each([
    ["Telegram", renderTelegramPlain, (b: string) => b.length],
    ["Discord", renderDiscordPlain, (b: string) => b.length],
    ["WhatsApp", renderWhatsAppPlain, (b: string) => b.length],
    ["Slack", renderSlackPlain, (b: string) => b.length],
  ] as const)("%s: parts within the limit, together the typed text", (_name, render, size) => {
    fc.assert(
      fc.property(markdownArbitrary(["*", "_", "`"]), limitArb, (text, limit) => {
        const parts = render(text, limit);
        for (const part of parts) expect(size(part.body)).toBeLessThanOrEqual(limit);
        expect(squash(parts.map((p) => p.plain).join(""))).toBe(squash(text));
      }),
      { ...RUNS, numRuns: 60 },
    );
  });
});

describe("Slack messages: sections packed into Block Kit messages", () => {
  it("keeps each section ≤ its limit, each message ≤ its budget, buttons on the last, the words in order", () => {
    const limits = { sectionChars: 400, messageChars: 1_500, messageSections: 3, plainChars: 400 };
    fc.assert(
      fc.property(markdownArbitrary(), (markdown) => {
        const parts = layoutMessage({ text: markdown, buttons: [{ id: "b", label: "Go" }] }, limits);
        for (const [i, part] of parts.entries()) {
          expect(part.sections.length).toBeLessThanOrEqual(3);
          expect(part.sections.every((s) => s.length <= 400)).toBe(true);
          expect(part.sections.join("").length).toBeLessThanOrEqual(1_500);
          expect(part.blocks.some((b) => b.type === "actions")).toBe(i === parts.length - 1);
        }
        const whole = renderSlackSections(markdown, 1_000_000).map((p) => slack.visible(p.body)).join("");
        expect(squash(parts.flatMap((p) => p.sections.map(slack.visible)).join(""))).toBe(squash(whole));
      }),
      { ...RUNS, numRuns: 60 },
    );
  });
});
