import { describe, expect, it } from "vitest";
import { inFirstShownOrder } from "../../../web/api/chat-log.js";
import type { LocalMessage } from "../../../core/channels/index.js";

const msg = (id: string, seq: number, atMs: number, card = false): LocalMessage => ({
  seq, id, user: "log:p", text: id, buttons: [], card: card ? { v: 1 } : null, attachments: [], at: new Date(atMs), role: "assistant", channel: "local",
});

describe("the chat history keeps a card where it was first shown", () => {
  it("puts an edited card (new seq, first-shown time) back before the messages that followed it", () => {
    const said = msg("said", 1, 1_000);
    const after1 = msg("after1", 3, 3_000);
    const after2 = msg("after2", 4, 4_000);
    const edited = msg("card", 5, 2_000, true); // shown at 2 s, decided (edited) later
    expect(inFirstShownOrder([said, after1, after2, edited]).map((m) => m.id)).toEqual(["said", "card", "after1", "after2"]);
  });

  it("keeps seq order for everything not edited, even when platform times are coarse", () => {
    // A Telegram message's time is whole seconds: it may read earlier than a card logged before it.
    const card = msg("card", 1, 10_500, true);
    const reply = msg("reply", 2, 10_000);
    const later = msg("later", 3, 11_000);
    expect(inFirstShownOrder([card, reply, later]).map((m) => m.id)).toEqual(["card", "reply", "later"]);
  });

  it("is a permutation: nothing lost or doubled, for any mix of edited cards", () => {
    for (let round = 0; round < 200; round++) {
      const n = 1 + (round % 12);
      const items = Array.from({ length: n }, (_, i) => msg(`m${i}`, i + 1, 1_000 * ((i * 7 + round) % (n + 3)), (i + round) % 3 === 0));
      const out = inFirstShownOrder(items);
      expect(out.map((m) => m.id).sort()).toEqual(items.map((m) => m.id).sort());
      // Messages that are not cards keep their relative order.
      const plain = out.filter((m) => m.card === null).map((m) => m.seq);
      expect(plain).toEqual([...plain].sort((a, b) => a - b));
    }
  });
});
