import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDiscordChannel } from "../../bots/discord/channel.js";
import { createSlackChannel } from "../../bots/slack/channel.js";
import { createTelegramChannel } from "../../bots/telegram/channel.js";
import { createWhatsAppChannel } from "../../bots/whatsapp/channel.js";
import type { ChannelAdapter, OutboundContent } from "../../core/channels/port.js";
import { createLogger } from "../../core/log/logger.js";
import { memoryJournal } from "../fakes/telegram-sinks.js";
import { FakeWhatsAppLibrary } from "../fakes/whatsapp-client.js";

/**
 * Every messenger adapter's `render` on the one renderer: rich parts carry the platform's formatting,
 * plain parts the text as typed, each split by the platform limit × scale; `plain` keeps every link
 * address (it is what the outbox re-sends when a platform refuses the formatted payload); buttons
 * ride on the last part. Nothing here contacts a platform: `render` is pure.
 */

const { logger } = createLogger({ level: "silent" });
const dir = mkdtempSync(join(tmpdir(), "familiar-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const adapters: [string, ChannelAdapter, number][] = [
  ["telegram", createTelegramChannel({ token: "1:test", apiRoot: "http://127.0.0.1:9", logger, journal: memoryJournal().journal }), 4096],
  ["discord", createDiscordChannel({ token: "test", logger }), 2000],
  ["slack", createSlackChannel({ botToken: "xoxb-test", appToken: "xapp-test", logger }), 3000],
  ["whatsapp", createWhatsAppChannel({ dataDir: dir, chromiumPath: "/usr/bin/chromium", logger, library: new FakeWhatsAppLibrary() }), 4000],
];

const paragraph = (i: number) => `Paragraph ${i} sees [the docs](https://example.com/docs/${i}) & <notes> with **bold** words. ${"More words follow here. ".repeat(8)}`;
const long: OutboundContent = { text: Array.from({ length: 60 }, (_, i) => paragraph(i)).join("\n\n"), buttons: [{ id: "ok", label: "OK" }, { id: "no", label: "No" }] };

describe.each(adapters)("%s adapter render", (_name, adapter, limit) => {
  it("rich: formatted parts in order, `plain` with every link address, buttons on the last only", () => {
    const parts = adapter.render(long, { style: "rich", scale: 1 });
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => p.buttons)).toEqual([...parts.slice(1).map(() => false), true]);
    const plain = parts.map((p) => p.plain).join("\n");
    for (let i = 0; i < 60; i++) expect(plain).toContain(`the docs (https://example.com/docs/${i})`);
    expect(plain).not.toContain("**");
    expect(plain).toContain("& <notes>");
  });

  it("plain: the text as typed, split by the platform limit × scale", () => {
    const full = adapter.render(long, { style: "plain", scale: 1 });
    const quarter = adapter.render(long, { style: "plain", scale: 0.25 });
    expect(quarter.length).toBeGreaterThan(full.length);
    for (const part of quarter) expect(part.plain.length).toBeLessThanOrEqual(Math.floor(limit * 0.25));
    const typed = quarter.map((p) => p.plain).join(" ").replace(/\s+/g, " ");
    expect(typed).toContain("[the docs](https://example.com/docs/0) & <notes> with **bold** words.");
    expect(quarter.at(-1)!.buttons).toBe(true);
  });

  it("nothing visible renders to no parts", () => {
    expect(adapter.render({ text: " \n\n ", buttons: [] }, { style: "rich", scale: 1 })).toEqual([]);
  });
});
