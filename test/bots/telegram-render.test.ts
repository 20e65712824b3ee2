import { describe, expect, it } from "vitest";
import { renderTelegramHtml, TELEGRAM_TEXT_LIMIT } from "../../bots/telegram/render.js";
import { parseTelegramHtml } from "../fakes/telegram-html.js";

/** Markdown → Telegram HTML, checked by what the fake's strict Telegram parser shows. */

const shown = (html: string) => {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`${parsed.error} in ${JSON.stringify(html)}`);
  return parsed.text;
};

describe("the fake's HTML parser (so the adapter's tests can fail)", () => {
  it.each([
    ["Call <Ana & Bo>", 'Unsupported start tag "ana"'],
    ["<b>open", `Can't find end tag corresponding to start tag "b"`],
    ["<b><i>x</b></i>", "Unmatched end tag"],
    ["a <script>x</script>", 'Unsupported start tag "script"'],
    ["x </pre>", "Unexpected end tag"],
    ["1 < 2", 'Unsupported start tag ""'],
    ["<blockquote><blockquote>x</blockquote></blockquote>", "can't be nested"],
  ])("refuses %j", (html, error) => {
    const parsed = parseTelegramHtml(html);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(error);
  });

  it("decodes entities and counts what is shown", () => {
    expect(shown("<b>a &lt;b&gt; &amp; &quot;q&quot; &#39;s&#39;</b> & more")).toBe(`a <b> & "q" 's' & more`);
  });
});

describe("renderTelegramHtml", () => {
  it("renders headings, emphasis, lists, rules, links, code and quotes with Telegram's tags only", () => {
    const markdown = [
      "# Title & *more*",
      "Some **bold**, _italic_, ~~gone~~ and `a<b>` with [a link](https://example.com/?a=1&b=2).",
      "- one\n- two\n  - nested",
      "3. third\n4. fourth",
      "---",
      "> quoted **words**",
      "```ts\nif (a < b) return;\n```",
      "| k | v |\n|---|---|\n| a | 1 |",
      "- [x] done",
      "<div>raw html</div>",
      "[relative](/docs) and ![chart](https://example.com/c.png)",
    ].join("\n\n");
    const parts = renderTelegramHtml(markdown);
    expect(parts).toHaveLength(1);
    const html = parts[0]!;
    expect(html).toContain("<b>Title &amp; <i>more</i></b>");
    expect(html).toContain('<code>a&lt;b&gt;</code> with <a href="https://example.com/?a=1&amp;b=2">a link</a>');
    expect(html).toContain('<pre><code class="language-ts">if (a &lt; b) return;</code></pre>');
    expect(html).toContain("<blockquote>quoted <b>words</b></blockquote>");
    expect(shown(html)).toBe(
      [
        "Title & more",
        "Some bold, italic, gone and a<b> with a link.",
        "• one\n• two\n   • nested",
        "3. third\n4. fourth",
        "──────────",
        "quoted words",
        "if (a < b) return;",
        "k | v\na | 1",
        "• ☑ done",
        "<div>raw html</div>",
        "relative (/docs) and chart",
      ].join("\n\n"),
    );
  });

  it("returns no parts for whitespace", () => {
    expect(renderTelegramHtml(" \n\n  ")).toEqual([]);
  });

  it("splits long formatted text into well-formed parts within the limit, losing nothing but the breaks", () => {
    const long = [
      `**${"bold words ".repeat(40).trim()}**`,
      `[${"link text ".repeat(30).trim()}](https://example.com/x)`,
      "```\n" + "const line = 1 < 2 && 3 > 2;\n".repeat(30) + "```",
      "> " + "quoted & escaped <text> ".repeat(20).trim(),
      "x".repeat(700),
    ].join("\n\n");
    const limit = 300;
    const parts = renderTelegramHtml(long, limit);
    expect(parts.length).toBeGreaterThan(5);
    const texts = parts.map(shown);
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(limit);
    const squash = (s: string) => s.replace(/\s+/g, "");
    expect(squash(texts.join(""))).toBe(squash(shown(renderTelegramHtml(long, 100_000)[0]!)));
    // A format cut by a split is reopened: every part of the bold paragraph is bold.
    expect(parts[0]!.startsWith("<b>") && parts[1]!.startsWith("<b>")).toBe(true);
  });

  it("never splits a surrogate pair and counts UTF-16 code units like Telegram", () => {
    const parts = renderTelegramHtml("😀".repeat(3_000));
    expect(parts).toHaveLength(2);
    expect(parts[0]!.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
    expect(parts.join("")).toBe("😀".repeat(3_000));
  });
});
