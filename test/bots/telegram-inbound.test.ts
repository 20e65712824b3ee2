import type { Update, UserFromGetMe } from "grammy/types";
import { describe, expect, it } from "vitest";
import { decideUpdate, type ChatPolicy } from "../../bots/telegram/inbound.js";
import type { InboundMessage } from "../../core/channels/port.js";
import { FAKE_BOT, updates } from "../fakes/telegram-api.js";

/** Which Telegram messages with files Familiar reads, and how their files are described. */
const me = { ...FAKE_BOT, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false, can_connect_to_business: false, has_main_web_app: false } as UserFromGetMe;
const policy: ChatPolicy = { me, groups: new Set(["-100123"]) };
const asUpdate = (u: Omit<Update, "update_id">): Update => ({ ...u, update_id: 7 });
const file = (id: string, size: number) => ({ file_id: id, file_unique_id: `u${id}`, file_size: size, file_path: `p/${id}` });

describe("Telegram messages with files", () => {
  it("reads a photo with its caption; fetch takes the largest size within the limit", async () => {
    const asked: [string, number | null, number][] = [];
    const decision = decideUpdate(asUpdate(updates.photo(42, file("S", 100), file("L", 5000), "our dog")), policy, async (id, size, max) => {
      asked.push([id, size, max]);
      return Buffer.from(id);
    });
    expect(decision.action).toBe("sink");
    const event = (decision as { event: InboundMessage }).event;
    expect(event.text).toBe("our dog");
    expect(event.attachments).toHaveLength(1);
    expect(event.attachments![0]).toMatchObject({ kind: "image", mimeType: "image/jpeg", size: 5000 });
    await event.attachments![0]!.fetch(10_000);
    await event.attachments![0]!.fetch(1000); // the large size does not fit: the small one does
    expect(asked).toEqual([
      ["L", 5000, 10_000],
      ["S", 100, 1000],
    ]);
  });

  it("reads a voice note, a document (an image sent as a file is a photo) and a sticker's emoji", () => {
    const voice = decideUpdate(asUpdate(updates.voice(42, file("V", 9), 4)), policy);
    expect((voice as { event: InboundMessage }).event).toMatchObject({ text: "", attachments: [{ kind: "voice", mimeType: "audio/ogg", durationSeconds: 4 }] });
    const doc = decideUpdate(asUpdate(updates.document(42, file("D", 9), "scan.png", "image/png")), policy);
    expect((doc as { event: InboundMessage }).event.attachments![0]).toMatchObject({ kind: "image", fileName: "scan.png", mimeType: "image/png" });
    const sticker = decideUpdate(asUpdate(updates.sticker(42, "👍")), policy);
    expect((sticker as { event: InboundMessage }).event.attachments![0]).toMatchObject({ kind: "sticker", emoji: "👍" });
    // An animation comes with a document copy: one attachment, a video.
    const gif = decideUpdate(asUpdate(updates.media(42, { animation: { ...file("A", 9), width: 1, height: 1, duration: 2, mime_type: "video/mp4" }, document: { ...file("A", 9), mime_type: "video/mp4" } })), policy);
    expect((gif as { event: InboundMessage }).event.attachments).toEqual([expect.objectContaining({ kind: "video", durationSeconds: 2 })]);
  });

  it("in a group, reads a file only when its caption mentions the bot", () => {
    const mention = `@${FAKE_BOT.username}`;
    const addressed = decideUpdate(
      asUpdate(updates.media(55, { photo: [{ ...file("P", 10), width: 1, height: 1 }] }, { chatId: -100123, caption: `${mention} is this ok?`, captionEntities: [{ type: "mention", offset: 0, length: mention.length }] })),
      policy,
    );
    expect((addressed as { event: InboundMessage }).event).toMatchObject({ text: "is this ok?", address: "55" });
    const unaddressed = decideUpdate(asUpdate(updates.media(55, { photo: [{ ...file("P", 10), width: 1, height: 1 }] }, { chatId: -100123, caption: "holiday" })), policy);
    expect(unaddressed).toMatchObject({ action: "skip", reason: "bot not mentioned" });
  });

  it("skips what it does not read (a location) with the reason", () => {
    const location = decideUpdate(asUpdate(updates.media(42, { location: { latitude: 1, longitude: 2 } })), policy);
    expect(location).toMatchObject({ action: "skip", reason: expect.stringMatching(/^nothing Familiar reads/) });
  });
});
