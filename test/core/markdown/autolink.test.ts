import fc from "fast-check";
import { Marked } from "marked";
import { describe, expect, it } from "vitest";
import { boundedAutolink } from "../../../core/markdown/autolink.js";
import { parseMarkdown, type Inline } from "../../../core/markdown/ir.js";

/** Every link (href, shown text) in the IR of `md`. */
function links(md: string): { href: string; text: string }[] {
  const out: { href: string; text: string }[] = [];
  const walk = (inl: Inline[]) => {
    for (const i of inl) {
      if (i.type === "link") out.push({ href: i.href, text: i.children.map((c) => (c.type === "text" ? c.text : "")).join("") });
      if ("children" in i) walk(i.children);
    }
  };
  for (const b of parseMarkdown(md)) if (b.type === "paragraph") walk(b.content);
  return out;
}

const html = new Marked({ gfm: true, tokenizer: { url: boundedAutolink } });

describe("bare URLs end where a person expects (quotes, trailing punctuation)", () => {
  it("stops at a quote: JSON-like text keeps its rest as text", () => {
    const md = '{"url":"http://127.0.0.1:9/order","method":"POST"}';
    expect(links(md)).toEqual([{ href: "http://127.0.0.1:9/order", text: "http://127.0.0.1:9/order" }]);
    expect(html.parse(md, { async: false })).toContain('<a href="http://127.0.0.1:9/order">http://127.0.0.1:9/order</a>&quot;,&quot;method&quot;');
  });

  it("keeps GFM's own rules: trailing punctuation off, balanced parentheses kept, www. gets http", () => {
    expect(links("see https://example.com/a_(b). Next")).toEqual([{ href: "https://example.com/a_(b)", text: "https://example.com/a_(b)" }]);
    expect(links("(https://example.com/x), ok")).toEqual([{ href: "https://example.com/x", text: "https://example.com/x" }]);
    expect(links("at www.example.com, then")).toEqual([{ href: "http://www.example.com", text: "www.example.com" }]);
    expect(links("'https://example.com/q?a=1&b=2'")).toEqual([{ href: "https://example.com/q?a=1&b=2", text: "https://example.com/q?a=1&b=2" }]);
    expect(links("mail me@example.com.")).toEqual([{ href: "mailto:me@example.com", text: "me@example.com" }]);
  });

  it("property: a bare URL link never contains a quote, backtick or brace (explicit <…> autolinks are CommonMark's own), and no text is lost", () => {
    const piece = fc.constantFrom("https://example.com/a", "http://127.0.0.1:9/x?y=1", '"', "'", ",", ":", " ", "`", "{", "}", "word", ".", ")", "(");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const md = parts.join("");
        for (const l of links(md)) expect(l.href).not.toMatch(/["`<>{}]/);
        // Every letter and digit is still shown, in order (the text around a link is kept).
        const leaves: string[] = [];
        JSON.stringify(parseMarkdown(md), (key, value: unknown) => (key === "text" && typeof value === "string" ? (leaves.push(value), value) : value));
        expect(leaves.join("").replace(/[^a-z0-9]/g, "")).toBe(md.replace(/[^a-z0-9]/g, ""));
      }),
      { numRuns: 300 },
    );
  });
});
