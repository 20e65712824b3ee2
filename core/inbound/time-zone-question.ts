/**
 * The one time-zone question (issue 19 item 5). A person first met on a messenger starts with the
 * default zone (UTC), which they never chose. The first time they write something whose time
 * depends on their zone ("remind me tomorrow at 9", "every Monday at 8" — see
 * `core/time/mentions.ts`), Familiar asks once, in words, with a button per zone their messenger's
 * language suggests (Telegram's `language_code`) and "Another zone"; the message waits, without a
 * turn, until they answer, so nothing is scheduled on a zone they did not choose. The answer — a
 * button, a city or zone name typed back, or `/timezone` — sets their zone and releases the waiting
 * message to its turn. Anything else they write releases it too (the model, told that the zone is
 * not confirmed, says which zone it means); Familiar does not ask again.
 *
 * Button ids are `tz:<IANA zone>` (at most 32 characters, so Telegram's callback_data holds them)
 * and `tz:other`; a press counts only from the person it was asked of (their own identity).
 */
import type { Button, ChannelName } from "../channels/records.js";
import type { InboundMessage, InboundOutcome, InboundPress } from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { Outbound } from "../outbox/index.js";
import type { Person } from "../persons/records.js";
import type { Store } from "../storage/index.js";
import { formatLocal, isValidTimeZone, mentionsLocalTime, resolveTimeZone, zoneGuesses } from "../time/index.js";

const PREFIX = "tz:";
const OTHER = `${PREFIX}other`;

/** What the question needs. Its store writes run inside the inbound transaction they are called in. */
export interface TimeZoneQuestionDeps {
  store: Pick<Store, "persons" | "conversation" | "tasks" | "transaction">;
  clock: Clock;
  outbound: Pick<Outbound, "queue" | "wake">;
  turns: { poke(): void };
}

/** What to do with a person's message, as far as their time zone goes. */
export type ZonePlan =
  /** Nothing to do: record and bind it as usual. */
  | { kind: "none" }
  /** Ask: record the message without a turn and ask (see {@link TimeZoneQuestion.ask}). */
  | { kind: "ask" }
  /** A message waits for the answer: release it first, then bind this one; `zone` when this one is the answer. */
  | { kind: "release"; pendingSeq: number; zone: string | null };

/** See the file comment. */
export class TimeZoneQuestion {
  constructor(private readonly deps: TimeZoneQuestionDeps) {}

  /** Decides for a message from a known person (not a command). Pure: reads only `person` and the text. */
  plan(person: Person, event: InboundMessage): ZonePlan {
    if (person.timeZoneConfirmed) {
      const pending = person.timeZoneAsk?.pendingSeq ?? null;
      return pending === null ? { kind: "none" } : { kind: "release", pendingSeq: pending, zone: null };
    }
    if (person.timeZoneAsk !== null) {
      const pending = person.timeZoneAsk.pendingSeq;
      if (pending === null) return { kind: "none" };
      return { kind: "release", pendingSeq: pending, zone: resolveTimeZone(event.text.replace(/[.!]+$/, "")) };
    }
    // The web app proposes the browser's zone on its first screen; groups are not the person's own chat.
    if (event.channel === "local" || event.groupId !== undefined) return { kind: "none" };
    return mentionsLocalTime(event.text, this.deps.clock.now()) ? { kind: "ask" } : { kind: "none" };
  }

  /**
   * Asks, inside the transaction that recorded the message `seq` (which gets no turn now): marks
   * the question on the person, appends it to the conversation and queues it on the message's chat.
   */
  async ask(person: Person, event: InboundMessage, seq: number): Promise<void> {
    const { store, clock, outbound } = this.deps;
    const now = clock.now();
    await store.persons.updatePerson(person.id, { timeZoneAsk: { at: now, pendingSeq: seq } });
    const guesses = zoneGuesses(event.languageCode, person.locale).filter((z) => isValidTimeZone(z) && `${PREFIX}${z}`.length <= 32);
    const text = [
      "Before I do that: which time zone are you in? I'd rather ask than guess, so that the times you give me are your times.",
      guesses.length > 0 ? "Tap yours below, or send me your city or zone (for example Lisbon or Europe/Lisbon)." : "Send me your city or zone (for example Lisbon or Europe/Lisbon).",
    ].join(" ");
    const buttons: Button[] = [...guesses.map((zone) => ({ id: `${PREFIX}${zone}`, label: `${cityOf(zone)} (now ${clockIn(zone, now)})` })), { id: OTHER, label: "Another zone" }];
    await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: event.channel, text, taskId: null });
    await outbound.queue({ personId: person.id, deliveryKey: `timezone-ask:${event.channel}:${event.updateId}`, text, buttons, channel: event.channel }, { wake: false });
  }

  /**
   * Releases the waiting message to its turn, inside the inbound transaction; with `zone`, sets it
   * first and says so on `channel`.
   */
  async release(person: Person, pendingSeq: number, zone: string | null, channel: ChannelName, key: string): Promise<void> {
    const { store, clock, outbound } = this.deps;
    const now = clock.now();
    const asked = person.timeZoneAsk?.at ?? now;
    await store.persons.updatePerson(person.id, { ...(zone !== null && { timeZone: zone }), timeZoneAsk: { at: asked, pendingSeq: null } });
    if (zone !== null) {
      const text = setText(zone, now);
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel, text, taskId: null });
      await outbound.queue({ personId: person.id, deliveryKey: `timezone-set:${key}`, text, channel }, { wake: false });
    }
    await store.tasks.bindTurnMessage({ personId: person.id, seq: pendingSeq, now });
  }

  /** After a command (`/timezone` may have answered the question): releases a message still waiting. */
  async afterCommand(personId: Person["id"]): Promise<void> {
    const { store } = this.deps;
    const person = await store.persons.getPerson(personId);
    const pending = person?.timeZoneAsk?.pendingSeq ?? null;
    if (!person || !person.timeZoneConfirmed || pending === null) return;
    await store.transaction(async () => {
      await store.persons.updatePerson(person.id, { timeZoneAsk: { at: person.timeZoneAsk!.at, pendingSeq: null } });
      await store.tasks.bindTurnMessage({ personId: person.id, seq: pending, now: this.deps.clock.now() });
    });
    this.deps.turns.poke();
  }

  /** The question's buttons: a zone sets it and releases the waiting message; "Another zone" asks for a name. */
  press = async (event: InboundPress, person: Person | null): Promise<InboundOutcome | null> => {
    if (!event.buttonId.startsWith(PREFIX)) return null;
    if (person === null) return { status: "handled", notice: "This question isn't yours." };
    const { store, outbound } = this.deps;
    if (event.buttonId === OTHER) {
      await outbound.queue({ personId: person.id, deliveryKey: `timezone-other:${event.channel}:${event.updateId}`, text: "Send me your city or your zone's name (for example Lisbon, or Europe/Lisbon), or use /timezone Europe/Lisbon.", channel: event.channel });
      return { status: "handled", notice: "Send me your city or zone." };
    }
    const zone = event.buttonId.slice(PREFIX.length);
    if (!isValidTimeZone(zone)) return { status: "handled", notice: "That button is no longer active." };
    const pending = person.timeZoneAsk?.pendingSeq ?? null;
    await store.transaction(async () => {
      if (pending === null) {
        await store.persons.updatePerson(person.id, { timeZone: zone });
        await outbound.queue({ personId: person.id, deliveryKey: `timezone-set:${event.channel}:${event.updateId}`, text: setText(zone, this.deps.clock.now()), channel: event.channel }, { wake: false });
      } else {
        await this.release(person, pending, zone, event.channel, `${event.channel}:${event.updateId}`);
      }
    });
    outbound.wake();
    if (pending !== null) this.deps.turns.poke();
    return { status: "handled", notice: `Time zone: ${zone}` };
  };
}

function setText(zone: string, now: Date): string {
  return `Thanks: your time zone is ${zone} (it is ${formatLocal(now, zone)} there now). You can change it any time with /timezone.`;
}

function cityOf(zone: string): string {
  return (zone.split("/").at(-1) ?? zone).replace(/_/g, " ");
}

function clockIn(zone: string, now: Date): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(now);
}
