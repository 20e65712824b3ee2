/**
 * The poller's {@link UpdateJournal} on the store's inbound repository: fetched updates are held
 * (as the JSON Telegram sent) until handled, and read back after a restart.
 */
import type { Update } from "grammy/types";
import { z } from "zod";
import type { Logger } from "../../core/log/index.js";
import type { InboundRepository } from "../../core/storage/index.js";
import type { UpdateJournal } from "./polling.js";

/** What a held payload must be to be handed over again: a Telegram update (its other fields are read by `decideUpdate`). */
const heldUpdateSchema = z.looseObject({ update_id: z.number().int().nonnegative() });

/**
 * The journal of Telegram updates on `inbound` (durable: SQLite or MongoDB). A held payload that is
 * not an update any more (a damaged row) is logged, released and skipped.
 */
export function storeUpdateJournal(inbound: Pick<InboundRepository, "holdUpdates" | "releaseUpdate" | "listHeldUpdates">, logger: Logger): UpdateJournal {
  return {
    hold: (updates) => inbound.holdUpdates("telegram", updates.map((u) => ({ updateId: String(u.update_id), payload: JSON.stringify(u) })), new Date()),
    release: (updateId) => inbound.releaseUpdate("telegram", String(updateId)),
    async held() {
      const out: Update[] = [];
      for (const row of await inbound.listHeldUpdates("telegram")) {
        const update = parseHeld(row.payload);
        if (update === null) {
          logger.error({ updateId: row.updateId }, "telegram: a held update is unreadable and is dropped");
          await inbound.releaseUpdate("telegram", row.updateId);
          continue;
        }
        out.push(update);
      }
      return out.sort((a, b) => a.update_id - b.update_id);
    },
  };
}

/** A held payload as an update, or null when it is not JSON of one. */
function parseHeld(payload: string): Update | null {
  try {
    const parsed = heldUpdateSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
