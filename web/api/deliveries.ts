import { channelInWords } from "../../core/channels/index.js";
import { GIVE_UP_AFTER_MS } from "../../core/outbox/index.js";
import type { AuditEvent } from "../../core/audit/index.js";
import type { OutboxMessage } from "../../core/outbox/index.js";
import type { Person } from "../../core/persons/index.js";
import type { Store } from "../../core/storage/index.js";

/** How far back *Now* shows deliveries that were given up on a channel, ms: one day. */
export const FAILED_SHOWN_MS = 86_400_000;

/** One delivery that waits or failed, for *Now*: `words` is the sentence shown; the rest is for layout. */
export interface DeliveryJson {
  id: string;
  state: "waiting" | "failed";
  /** The channel it waits on or failed on (`local`, `telegram`, …) and that in words. */
  channel: string | null;
  channelWords: string | null;
  words: string;
  /** ISO-8601: the next try (waiting), when it failed (failed). */
  at: string | null;
  /** ISO-8601: when a waiting delivery is given up there and sent to another chat. */
  giveUpAt: string | null;
}

/** "A photo", "A message with 2 files", … for an outbox row. */
function whatOf(message: OutboxMessage): string {
  const files = message.attachments.length;
  const text = message.text.trim().length > 0;
  if (files === 0) return "A message";
  const fileWords = files === 1 ? "a file" : `${files} files`;
  return text ? `A message with ${fileWords}` : fileWords.charAt(0).toUpperCase() + fileWords.slice(1);
}

/** HH:MM in the person's zone (ISO when the zone is unknown). */
function clockTime(at: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(at);
  } catch {
    return at.toISOString();
  }
}

function waitingJson(message: OutboxMessage, person: Person, behind: number): DeliveryJson {
  const lane = message.lane;
  const where = lane ? (lane === "local" ? "in the web chat" : `on ${channelInWords(lane)}`) : "until Familiar knows where to reach you";
  const since = message.progress.failingSince ? new Date(message.progress.failingSince) : null;
  const giveUpAt = since ? new Date(since.getTime() + GIVE_UP_AFTER_MS) : null;
  const tries = `It was tried ${message.attempts} ${message.attempts === 1 ? "time" : "times"}; the next try is at ${clockTime(message.nextAttemptAt, person.timeZone)}`;
  const then = giveUpAt ? `, and if it still fails by ${clockTime(giveUpAt, person.timeZone)} it goes to another of your chats` : "";
  const queue = behind > 0 ? ` ${behind} more ${behind === 1 ? "message waits" : "messages wait"} behind it there.` : "";
  return {
    id: message.id,
    state: "waiting",
    channel: lane,
    channelWords: lane ? channelInWords(lane) : null,
    words: `${whatOf(message)} for you is waiting to go out ${where}. ${tries}${then}.${queue}`,
    at: message.nextAttemptAt.toISOString(),
    giveUpAt: giveUpAt?.toISOString() ?? null,
  };
}

function failedJson(event: AuditEvent): DeliveryJson {
  const data = event.data && typeof event.data === "object" && !Array.isArray(event.data) ? event.data : {};
  const channel = typeof data.channel === "string" ? data.channel : null;
  return { id: event.id, state: "failed", channel, channelWords: channel ? channelInWords(channel) : null, words: `${event.summary}.`, at: event.at.toISOString(), giveUpAt: null };
}

/**
 * What *Now* shows about delivery, in words: messages waiting because their channel keeps failing
 * (with their next try, when they will be handed to another chat, and how many wait behind them),
 * and those given up on a channel or undeliverable in the last day, newest first.
 */
export async function deliveriesOf(store: Pick<Store, "outbox" | "audit">, person: Person, now: Date): Promise<{ waiting: DeliveryJson[]; failed: DeliveryJson[] }> {
  const undelivered = (await store.outbox.listOutbound(person.id, { status: ["queued", "sending"], limit: 200 })).items;
  const failing = undelivered.filter((m) => m.lastError !== null);
  const waiting = failing.map((m) => waitingJson(m, person, undelivered.filter((o) => o.lane === m.lane && o.createdAt > m.createdAt).length));
  const events = (await store.audit.listAudit(person.id, { kinds: ["outbound.given_up", "outbound.failed"], limit: 10 })).items;
  const failed = events.filter((e) => now.getTime() - e.at.getTime() <= FAILED_SHOWN_MS).map(failedJson);
  return { waiting, failed };
}
