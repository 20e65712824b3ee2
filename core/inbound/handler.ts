import type { InboundEvent, InboundMessage, InboundOutcome, InboundPress } from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/index.js";
import type { Outbound } from "../outbox/index.js";
import { screenInbound, type SecretDesk } from "../secrets/index.js";
import type { Store } from "../storage/index.js";
import type { Identity, Person } from "../persons/records.js";
import type { CommandRegistry } from "./commands.js";
import type { Door } from "./door.js";
import type { LinkCodes } from "./links.js";
import { describedOnly, type MediaIntake, type PreparedMedia } from "./media.js";
import { slowDownText, type InboundRateLimit } from "./rate-limit.js";
import type { TimeZoneQuestion, ZonePlan } from "./time-zone-question.js";

/** The outbox delivery key of a direct answer to an inbound event (command output, notices): one answer per update. */
export function answerDeliveryKey(event: Pick<InboundEvent, "channel" | "updateId">): string {
  return `answer:${event.channel}:${event.updateId}`;
}

/** Decides who an unknown sender is: a person to create (trusted channel), or null (drop / pairing). */
export type UnknownSenderPolicy = (event: InboundEvent) => Promise<Person | null>;

/**
 * Handles a button press: returns null when the button is not its own, else the outcome (with a
 * `notice` for the presser, e.g. "Approved once" or "This request isn't yours").
 */
export type PressHandler = (press: InboundPress, person: Person | null, identity: Identity | null) => Promise<InboundOutcome | null>;

export interface InboundDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  commands: CommandRegistry;
  unknownSender: UnknownSenderPolicy;
  /** The task loop: poked when a new user message was recorded and bound to a turn. */
  turns: { poke(): void };
  /** Where direct answers (command output, notices) are queued, on the event's channel. */
  outbound: Pick<Outbound, "queue" | "wake">;
  pressHandlers: () => PressHandler[];
  /** Whether a known person may be served where the event came from (group member lists); default yes. */
  door?: Pick<Door, "admits">;
  /** The secret desk: after secret-looking text was withheld, the person is offered its one-time link. */
  secrets?: Pick<SecretDesk, "offerText">;
  /** /link codes: a message that is a pending code is redeemed before the sender is resolved (it may be nobody yet). */
  links?: Pick<LinkCodes, "claim" | "release" | "redeem">;
  /** Takes in the files of a message (download, workspace, transcription, vision check) before it is recorded. */
  media?: Pick<MediaIntake, "prepare">;
  /** Per sender, per chat and global message limits: a message over one is kept and its turn waits for the window. */
  rateLimit?: Pick<InboundRateLimit, "check">;
  /**
   * The person's daily model budget (core/runtime/model-budget.ts): while it is used up, a message
   * is kept and the turn it starts waits for the reset (later messages join it); the person is told once that day.
   */
  budget?: { exhaustedUntil(person: Person): Promise<Date | null>; tell(person: Person): Promise<void> };
  /** The one time-zone question for a person whose zone is only the default (see `TimeZoneQuestion`). */
  timeZone?: Pick<TimeZoneQuestion, "plan" | "ask" | "release" | "afterCommand">;
}

/**
 * The inbound flow, message → turn: dedupe on the platform's update id, append to the person's one
 * conversation and bind the message to a turn task — all three in one transaction, so a crash can
 * neither lose a message, leave it without a turn, nor let a redelivery through. Commands are
 * answered directly; a pending /link code is redeemed first (see `LinkCodes`); a message's files
 * are taken in before it is recorded (see `MediaIntake`). The person writing again clears an
 * "unreachable" mark on their account, and the reply address follows the chat they last wrote from.
 * Secret-looking text (passwords, keys, one-time codes) is withheld before anything keeps or reads
 * it, and the person is told so and offered the vault's one-time link. Adapters call `handle` (their
 * `InboundSink`) and acknowledge the platform as soon as it resolves; the turn runs afterwards (the
 * task loop claims it). A message over the inbound rate limit is recorded all the same; a turn it
 * starts waits until the window opens, and the person is told once per window (see `InboundRateLimit`).
 */
export class InboundHandler {
  constructor(private readonly deps: InboundDeps) {}

  /** The inbound sink every channel adapter is started with: resolves when the event is durably recorded. */
  handle = async (event: InboundEvent): Promise<InboundOutcome> => {
    const screened = screenInbound(event);
    const outcome = await this.handleScreened(screened.event);
    if (screened.kinds.length > 0 && outcome.status === "accepted") await this.offerVault(screened.event, screened.kinds);
    return outcome;
  };

  /** After withheld text: tells the person it was not kept and offers the vault's one-time link. */
  private async offerVault(event: InboundEvent, kinds: readonly string[]): Promise<void> {
    const { store, logger, secrets } = this.deps;
    logger.info({ channel: event.channel, kinds }, "withheld secret-looking text from an inbound message");
    const identity = await store.persons.findIdentity(event.channel, event.accountId);
    if (!identity) return;
    const what = kinds.map((k) => k.replace(/_/g, " ")).join(", ");
    const why = `Part of that looked like a secret (${what}), so I did not keep it or read it.\n`;
    const text = secrets ? secrets.offerText(identity.personId, null, why) : `${why}Secrets belong in the vault, not in chat.`;
    await this.deps.outbound.queue({ personId: identity.personId, deliveryKey: `secret-offer:${event.channel}:${event.updateId}`, text, channel: event.channel });
  }

  /** Sends a direct answer (command output, press feedback) on the event's channel. */
  private async answer(person: Person, event: InboundEvent, text: string): Promise<void> {
    await this.deps.outbound.queue({ personId: person.id, deliveryKey: answerDeliveryKey(event), text, channel: event.channel });
  }

  private async handleScreened(event: InboundEvent): Promise<InboundOutcome> {
    const { store, clock, logger } = this.deps;
    const files = event.kind === "message" ? (event.attachments ?? []) : [];
    const claim = event.kind === "message" && files.length === 0 ? this.deps.links?.claim(event.text) : null;
    if (claim && event.kind === "message") return this.link(event, claim);
    let resolved = await this.resolve(event);
    if (resolved && this.deps.door && !(await this.deps.door.admits(event, resolved.person))) {
      // In a group whose member list does not include them: treated like an unknown sender there.
      if (event.kind === "message") {
        await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now());
        return { status: "ignored" };
      }
      resolved = null;
    }
    if (event.kind === "press") {
      if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) return { status: "duplicate" };
      // Presses from people Familiar does not know still reach the handlers: an approval card in a
      // group must tell a stranger it is not theirs (field case A1), and the attempt is audited.
      return this.press(event, resolved?.person ?? null, resolved?.identity ?? null);
    }
    if (!resolved) {
      // Unknown sender without a person: remember the update id so a redelivery is not re-processed.
      await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now());
      return { status: "ignored" };
    }
    const { person, identity } = resolved;
    await this.touchIdentity(identity, event);

    const command = files.length === 0 ? this.deps.commands.parse(event.text) : null;
    if (command) {
      if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) return { status: "duplicate" };
      const reply = await this.deps.commands.run(command.name, { person, args: command.args, channel: event.channel, accountId: event.accountId });
      await this.answer(person, event, reply.text);
      await this.deps.timeZone?.afterCommand(person.id);
      return { status: "handled" };
    }

    // Files are fetched before the message is recorded: a crash meanwhile leaves the update
    // unrecorded, so the platform's redelivery brings it (and its files) back.
    const media = files.length === 0 ? null : this.deps.media ? await this.deps.media.prepare(person, event) : describedOnly(event);
    const verdict = this.deps.rateLimit ? await this.deps.rateLimit.check(event, person.id) : { allowed: true as const };
    const budgetUntil = (await this.deps.budget?.exhaustedUntil(person)) ?? null;
    const notBefore = latest(verdict.allowed ? null : verdict.retryAt, budgetUntil);
    const zone: ZonePlan = media === null && this.deps.timeZone ? this.deps.timeZone.plan(person, event) : { kind: "none" };
    const messageId = await this.record(event, person, media, notBefore, zone);
    if (!messageId) {
      logger.debug({ channel: event.channel, updateId: event.updateId }, "duplicate update dropped");
      return { status: "duplicate" };
    }
    if (!verdict.allowed && verdict.notify) {
      logger.info({ channel: event.channel, personId: person.id }, "inbound rate limit reached: the turn waits for the window");
      await this.deps.outbound.queue({ personId: person.id, deliveryKey: `slow-down:${event.channel}:${event.updateId}`, text: slowDownText(verdict.retryAt, clock.now()), channel: event.channel });
    }
    if (budgetUntil) await this.deps.budget?.tell(person);
    // The notice was queued with the message; delivery is woken now that it is committed.
    if (media?.notice) this.deps.outbound.wake();
    if (media && !media.needsTurn) return { status: "handled" };
    if (zone.kind === "ask") {
      // The question is the answer for now; the message's turn waits for the person's zone.
      this.deps.outbound.wake();
      return { status: "accepted" };
    }
    if (zone.kind === "release") this.deps.outbound.wake();
    this.deps.turns.poke();
    return { status: "accepted" };
  }

  /**
   * Dedupe, append and bind to a turn atomically; returns the new message id, or null for a
   * duplicate. A notice about the message's files is queued in the same transaction; when it is the
   * whole answer (nothing for the model), it is recorded as Familiar's reply instead of binding a
   * turn, so the message is answered and no turn waits for it.
   */
  private async record(event: InboundMessage, person: Person, media: PreparedMedia | null, notBefore: Date | null, zone: ZonePlan = { kind: "none" }): Promise<string | null> {
    const { store, clock } = this.deps;
    return store.transaction(async () => {
      if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) return null;
      const message = await store.conversation.appendMessage({
        personId: person.id,
        role: "user",
        channel: event.channel,
        text: event.text,
        taskId: null,
        at: event.at,
        ...(media && { attachments: media.attachments }),
      });
      if (media?.notice) {
        await this.deps.outbound.queue({ personId: person.id, deliveryKey: answerDeliveryKey(event), text: media.notice, channel: event.channel }, { wake: false });
      }
      if (media && !media.needsTurn && media.notice) {
        await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: event.channel, text: media.notice, taskId: null });
      } else if (zone.kind === "ask") {
        await this.deps.timeZone!.ask(person, event, message.seq);
      } else {
        if (zone.kind === "release") await this.deps.timeZone!.release(person, zone.pendingSeq, zone.zone, event.channel, `${event.channel}:${event.updateId}`);
        await store.tasks.bindTurnMessage({ personId: person.id, seq: message.seq, now: clock.now(), notBefore });
      }
      return message.id;
    });
  }

  /** A pending /link code from any account, known or not (see `LinkCodes`). */
  private async link(event: InboundMessage, claim: NonNullable<ReturnType<LinkCodes["claim"]>>): Promise<InboundOutcome> {
    const { store, clock } = this.deps;
    const links = this.deps.links!;
    if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) {
      links.release(claim);
      return { status: "duplicate" };
    }
    const answer = await links.redeem(event, claim);
    if (!answer) return { status: "ignored" };
    await this.answer(answer.person, event, answer.text);
    return { status: "handled" };
  }

  /** The person wrote from this account: it is reachable again, at the chat they wrote from. */
  private async touchIdentity(identity: Identity, event: InboundEvent): Promise<void> {
    if (!identity.unreachable && identity.address === event.address) return;
    await this.deps.store.persons.recordIdentitySeen({ channel: identity.channel, accountId: identity.accountId, address: event.address, now: this.deps.clock.now() });
  }

  private async press(event: InboundPress, person: Person | null, identity: Identity | null): Promise<InboundOutcome> {
    for (const handler of this.deps.pressHandlers()) {
      const outcome = await handler(event, person, identity);
      if (outcome) return outcome;
    }
    return { status: "handled", notice: "That button is no longer active." };
  }

  private async resolve(event: InboundEvent): Promise<{ person: Person; identity: Identity } | null> {
    const { store } = this.deps;
    const identity = await store.persons.findIdentity(event.channel, event.accountId);
    if (identity) {
      const person = await store.persons.getPerson(identity.personId);
      if (person) return { person, identity };
    }
    const person = await this.deps.unknownSender(event);
    if (!person) return null;
    const created = await store.persons.findIdentity(event.channel, event.accountId);
    return created ? { person, identity: created } : null;
  }
}

/** The later of two optional times. */
function latest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
