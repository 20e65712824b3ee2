import { describe, expect, it } from "vitest";
import { layoutMessage } from "../../../bots/slack/layout.js";
import { renderSlackSections } from "../../../bots/slack/render.js";

/** Section texts of at most `max` characters. */
const renderMrkdwn = (md: string, max: number) => renderSlackSections(md, max).map((part) => ({ text: part.body }));
/** The sections joined the way they are shown (one block after another). */
const joined = (md: string, max = 3_000) => renderMrkdwn(md, max).map((c) => c.text).join("\n\n");

/** Whether every `*`, `_`, `~`, `` ` `` marker and ``` fence in a chunk is paired (nothing left open at a cut). */
function balanced(text: string): boolean {
  const fences = text.match(/```/g)?.length ?? 0;
  const withoutCode = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`]*`/g, "").replace(/<[^>]*>/g, "");
  return fences % 2 === 0 && ["*", "_", "~"].every((m) => (withoutCode.split(m).length - 1) % 2 === 0);
}

describe("Slack mrkdwn rendering", () => {
  it("renders the reserved-characters case as valid mrkdwn (T2 shape on Slack)", () => {
    expect(joined("Plan\n\n---\n\n1. Call <NAME> (mon-fri).\n2. Pay #<N>!")).toBe(
      "Plan\n\n──────────\n\n1. Call &lt;NAME&gt; (mon-fri).\n2. Pay #&lt;N&gt;!",
    );
  });

  it("maps markdown formatting to Slack's markers and drops unsafe link schemes", () => {
    expect(joined("# Title\n\n**b** *i* ~~s~~ `a<b` [x](https://e.com/?q=1&r=2) [bad](javascript:alert(1))\n\n- one\n  - two\n\n> quoted")).toBe(
      "*Title*\n\n*b* _i_ ~s~ `a&lt;b` <https://e.com/?q=1&amp;r=2|x> bad\n\n• one\n    • two\n\n> quoted",
    );
  });

  it("cuts a long bold paragraph between words, closing and reopening the marker", () => {
    const chunks = renderMrkdwn(`**${"word & word ".repeat(300).trim()}**`, 500);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(500);
      expect(c.text.startsWith("*") && c.text.endsWith("*")).toBe(true);
      expect(c.text).not.toMatch(/&(?!amp;)/); // never cut inside an entity
    }
  });

  it("cuts a long code block into fenced blocks of whole lines", () => {
    const chunks = renderMrkdwn("```\n" + Array.from({ length: 400 }, (_, i) => `line ${i} < x`).join("\n") + "\n```", 1_000);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(1_000);
      expect(c.text.startsWith("```\n") && c.text.endsWith("\n```")).toBe(true);
    }
    expect(chunks.map((c) => c.text.replace(/^```\n|\n```$/g, "")).join("\n").split("\n")).toHaveLength(400);
  });

  it("lays out sections with every marker balanced and buttons only on the last message", () => {
    const md = Array.from({ length: 120 }, (_, i) => `Item ${i}: **bold ${i}** and _it ${i}_ with \`code\` and ${"filler ".repeat(20)}`).join("\n\n");
    const parts = layoutMessage({ text: md, buttons: [{ id: "a", label: "A" }] }, { sectionChars: 800, messageChars: 4_000, messageSections: 45, plainChars: 800 });
    expect(parts.length).toBeGreaterThan(1);
    for (const [i, part] of parts.entries()) {
      const sections = part.blocks.filter((b) => b.type === "section").map((b) => (b as { text: { text: string } }).text.text);
      expect(sections.join("").length).toBeLessThanOrEqual(4_000);
      for (const s of sections) expect(balanced(s)).toBe(true);
      expect(part.blocks.some((b) => b.type === "actions")).toBe(i === parts.length - 1);
    }
  });
});
