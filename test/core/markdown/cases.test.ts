import { describe, expect, it } from "vitest";
import { renderDiscord, renderDiscordMessages } from "../../../bots/discord/render.js";
import { parseMarkdown } from "../../../core/markdown/ir.js";
import { renderSlackPlain, renderSlackSections } from "../../../bots/slack/render.js";
import { renderTelegram, renderTelegramHtml } from "../../../bots/telegram/render.js";
import { renderWhatsApp, renderWhatsAppMessages } from "../../../bots/whatsapp/render.js";
import { parseTelegramHtml } from "../../fakes/telegram-html.js";

/** The one renderer, case by case: what each platform shows for the same markdown. */

const telegramShown = (html: string): string => {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.text;
};

describe("the IR", () => {
  it("keeps everything the model wrote: raw HTML as text, images as links, task state, numbering, code languages", () => {
    expect(parseMarkdown("<div>x & y</div>\n\n3. a\n4. [x] b\n\n![chart](https://c.io/x.png)\n\n```ts extra\nlet a;\n```")).toEqual([
      { type: "paragraph", content: [{ type: "text", text: "<div>x & y</div>" }] },
      {
        type: "list",
        ordered: true,
        start: 3,
        loose: false,
        items: [
          { checked: null, blocks: [{ type: "paragraph", content: [{ type: "text", text: "a" }] }] },
          { checked: true, blocks: [{ type: "paragraph", content: [{ type: "text", text: "b" }] }] },
        ],
      },
      { type: "paragraph", content: [{ type: "link", href: "https://c.io/x.png", children: [{ type: "text", text: "chart" }] }] },
      { type: "code", language: "ts", text: "let a;" },
    ]);
  });
});

describe("T2 reserved characters on every platform: shown as typed", () => {
  const plan = "Plan\n\n---\n\n1. Call <Ana & Bo> (mon-fri).\n2. Pay #<42>!";
  it("Telegram escapes < > & with escape-html and shows them as typed", () => {
    expect(renderTelegramHtml(plan).map(telegramShown)).toEqual(["Plan\n\n──────────\n\n1. Call <Ana & Bo> (mon-fri).\n2. Pay #<42>!"]);
  });
  it("Slack escapes them as &lt; &gt; &amp;, in text and in code", () => {
    expect(renderSlackSections(plan + "\n\n`a<b && c>d`", 3_000).map((p) => p.body)).toEqual([
      "Plan\n\n──────────\n\n1. Call &lt;Ana &amp; Bo&gt; (mon-fri).\n2. Pay #&lt;42&gt;!\n\n`a&lt;b &amp;&amp; c&gt;d`",
    ]);
  });
  it("Discord and WhatsApp need no escape for them; Discord escapes a mention-like tag and its own markers", () => {
    expect(renderDiscordMessages(plan)).toEqual(["Plan\n\n──────────\n\n1. Call <Ana & Bo> (mon-fri).\n2. Pay #<42>!"]);
    expect(renderWhatsAppMessages(plan)).toEqual(["Plan\n\n──────────\n\n1. Call <Ana & Bo> (mon-fri).\n2. Pay #<42>!"]);
    expect(renderDiscordMessages("Ping <@123> or <#42>: 2*3, a_b, ~~~x and ****")).toEqual(["Ping \\<@123> or \\<#42>: 2\\*3, a\\_b, \\~\\~\\~x and \\*\\*\\*\\*"]);
  });
});

describe("links keep their address wherever the platform cannot make them clickable", () => {
  const md = "[docs](https://d.io/a_b) [rel](/x) [mail](mailto:a@b.io) <https://plain.io>";
  it("Telegram links http(s), tg and mailto; a relative link shows its address", () => {
    const [html] = renderTelegramHtml(md);
    expect(html).toContain('<a href="https://d.io/a_b">docs</a>');
    expect(telegramShown(html!)).toBe("docs rel (/x) mail https://plain.io");
  });
  it("Discord masks http(s) links only; WhatsApp shows every address", () => {
    expect(renderDiscordMessages(md)).toEqual(["[docs](https://d.io/a_b) rel (/x) mail (mailto:a@b.io) https://plain.io"]);
    expect(renderWhatsAppMessages(md)).toEqual(["docs (https://d.io/a_b) rel (/x) mail (mailto:a@b.io) https://plain.io"]);
  });
  it("the plain copy of a part (the outbox's fallback) carries every address", () => {
    expect(renderTelegram(md)[0]!.plain).toBe("docs (https://d.io/a_b) rel (/x) mail (mailto:a@b.io) https://plain.io");
  });
  it("a link whose address is longer than a part falls back to text that can be cut", () => {
    const url = `https://example.com/${"x".repeat(3_000)}`;
    const parts = renderDiscord(`see [the page](${url}) now`, 2_000);
    expect(parts.every((p) => p.body.length <= 2_000)).toBe(true);
    expect(parts.map((p) => p.body).join("")).toContain("the page (https://example.com/xxx");
  });
});

describe("cuts: formats closed and reopened, fences reopened, graphemes whole", () => {
  const code = "```py\n" + Array.from({ length: 60 }, (_, i) => `print(${i})  # <${i}>`).join("\n") + "\n```";
  it("a code block cut across parts keeps its fence and language in each (Discord, Slack, WhatsApp, Telegram)", () => {
    const discord = renderDiscordMessages(code, 300);
    expect(discord.length).toBeGreaterThan(2);
    for (const part of discord) expect(part).toMatch(/^```py\n[\s\S]*\n```$/);
    for (const part of renderSlackSections(code, 300)) expect(part.body).toMatch(/^```\n[\s\S]*\n```$/);
    for (const part of renderWhatsAppMessages(code, 300)) expect(part).toMatch(/^```[\s\S]*```$/);
    for (const html of renderTelegramHtml(code, 300)) expect(html).toMatch(/^<pre><code class="language-py">[\s\S]*<\/code><\/pre>$/);
  });
  it("a quote cut across parts is still a quote in the next part", () => {
    const quote = `> ${"quoted words ".repeat(60).trim()}`;
    const parts = renderDiscordMessages(quote, 200);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.startsWith("> ")).toBe(true);
    for (const html of renderTelegramHtml(quote, 200)) expect(html).toMatch(/^<blockquote>.*<\/blockquote>$/s);
  });
  it("prefers a blank line between blocks, then a line break, then a space", () => {
    const md = `${"a ".repeat(40).trim()}\n\n${"b ".repeat(40).trim()}\nline two of b\n\n${"c".repeat(50)}`;
    expect(renderWhatsApp(md, 120).map((p) => p.body)).toEqual([`${"a ".repeat(40).trim()}`, `${"b ".repeat(40).trim()}\nline two of b`, "c".repeat(50)]);
    expect(renderWhatsApp(`${"word ".repeat(50).trim()}`, 100).map((p) => p.body.length)).toEqual([99, 99, 49]);
  });
  it("never splits a grapheme: flags and skin-toned emoji stay whole even without spaces", () => {
    const text = "🇫🇷👍🏽".repeat(200);
    const parts = renderTelegram(text, 101);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect([...new Intl.Segmenter().segment(part.body)].every((g) => g.segment === "🇫🇷" || g.segment === "👍🏽")).toBe(true);
    expect(parts.map((p) => p.body).join("")).toBe(text);
  });
  it("WhatsApp and Slack markers hug the words and close at line ends", () => {
    expect(renderWhatsAppMessages("**bold** and *multi\nline*")).toEqual(["*bold* and _multi_\n_line_"]);
    expect(renderSlackSections("__x__ **a _b_ c**", 3_000).map((p) => p.body)).toEqual(["*x* *a _b_ c*"]);
  });
});

describe("plain style", () => {
  it("Slack escapes & < > in the top-level text; the plain copy is the text as typed", () => {
    expect(renderSlackPlain("Call <NAME> & co", 3_000)).toEqual([{ body: "Call &lt;NAME&gt; &amp; co", plain: "Call <NAME> & co" }]);
  });
});
