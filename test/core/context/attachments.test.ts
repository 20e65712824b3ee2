import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleContext } from "../../../core/context/assemble.js";
import { IMAGE_TOKENS, MAX_IMAGES_PER_REQUEST, shownImages, type ContextMedia } from "../../../core/context/attachments.js";
import { createTokenCounter } from "../../../core/context/tokens.js";
import type { ChatMessage } from "../../../core/model/port.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ConversationMessage, MessageAttachment } from "../../../core/conversation/index.js";
import type { Person } from "../../../core/persons/index.js";
import { asId } from "../../../core/ids.js";

/** Photos in the assembled context: the newest shown as image parts, all described in words. */
describe("context with attachments", () => {
  let dir: string;
  let store: Store;
  let person: Person;
  const tokens = createTokenCounter();
  let canSee = true;
  const media: ContextMedia = {
    canShowImages: () => canSee,
    imageUrl: async (_p, a) => (a.path ? `data:image/jpeg;base64,${Buffer.from(a.path).toString("base64")}` : null),
  };
  const photo = (n: number, note: string | null = null): MessageAttachment => ({
    kind: "image", mimeType: "image/jpeg", size: 1000, fileName: null, caption: null, path: `inbox/p${n}.jpg`, transcript: null, emoji: null, durationSeconds: null, note,
  });
  const partsOf = (m: ChatMessage) => (m.role === "user" && Array.isArray(m.content) ? m.content.map((p) => (p.type === "image_url" ? `img:${Buffer.from(p.image_url.url.split(",")[1]!, "base64").toString()}` : "text")) : []);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "familiar-ctx-media-"));
    store = openSqliteStore({ path: join(dir, "db.sqlite") });
    person = await store.persons.createPerson({ displayName: "Ana" });
    for (let i = 1; i <= 6; i++) {
      await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "telegram", text: `photo ${i}`, taskId: null, attachments: [photo(i)] });
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "telegram", text: `seen ${i}`, taskId: null });
    }
    await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "telegram", text: "", taskId: null, attachments: [photo(7, "not shown to you: x"), { ...photo(8), kind: "voice", mimeType: "audio/ogg", transcript: "hello there", path: "inbox/v.ogg" }] });
  });
  afterAll(async () => {
    await tokens.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const assemble = () => assembleContext({ store, tokens, person, now: new Date(), budget: 16_000, tools: [], media });

  it("shows the newest photos as image parts (at most four) and describes every file in words", async () => {
    canSee = true;
    const context = await assemble();
    const users = context.messages.filter((m) => m.role === "user");
    const shown = users.flatMap(partsOf).filter((p) => p.startsWith("img:"));
    expect(shown).toEqual(["img:inbox/p3.jpg", "img:inbox/p4.jpg", "img:inbox/p5.jpg", "img:inbox/p6.jpg"]);
    expect(shown).toHaveLength(MAX_IMAGES_PER_REQUEST);
    const last = users.at(-1)!;
    expect(typeof last.content === "string" && last.content).toBe(
      '[photo (image/jpeg, 1000 bytes); saved in the person\'s workspace as inbox/p7.jpg; not shown to you: x]\n[voice note (audio/ogg, 1000 bytes); saved in the person\'s workspace as inbox/v.ogg; transcript: "hello there"]',
    );
    const first = users[0]!;
    expect(typeof first.content === "string" && first.content).toBe("[photo (image/jpeg, 1000 bytes); saved in the person's workspace as inbox/p1.jpg]\nphoto 1");
  });

  it("shows no image parts to a model that cannot see, and only as many as the budget leaves", async () => {
    canSee = false;
    const context = await assemble();
    expect(context.messages.flatMap(partsOf)).toEqual([]);
    canSee = true;
    const window: ChatMessage[] = [{ role: "user", content: "a" }, { role: "user", content: "b" }];
    const sources: ConversationMessage[] = [1, 2].map((n) => ({ id: asId("message", `msg_${n}`), personId: person.id, seq: n, role: "user", channel: "telegram", text: "", taskId: null, at: new Date(), attachments: [photo(n)] }));
    expect(await shownImages(window, sources, person.id, media, IMAGE_TOKENS + 10)).toBe(IMAGE_TOKENS);
    expect(window.flatMap(partsOf)).toEqual(["text", "img:inbox/p2.jpg"]);
  });
});
