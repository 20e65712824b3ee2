import type { InboundEvent, InboundMessage, InboundPress } from "../channels/port.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { Store } from "../storage/ports.js";
import type { Identity, Person } from "../storage/types.js";
import type { CommandRegistry } from "./commands.js";

/** Decides who an unknown sender is: a person to create (trusted channel), or null (drop / pairing). */
export type UnknownSenderPolicy = (event: InboundEvent) => Promise<Person | null>;

/** Handles a button press; returns true if it recognised the button. */
export type PressHandler = (press: InboundPress, person: Person, identity: Identity) => Promise<boolean>;

export interface InboundDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  commands: CommandRegistry;
  unknownSender: UnknownSenderPolicy;
  /** A new user message was recorded: start (or queue) a turn. */
  onMessage: (person: Person, messageId: string) => void;
  /** Sends a direct answer (command output, press feedback) on the event's channel. */
  answer: (person: Person, event: InboundEvent, text: string) => Promise<void>;
  pressHandlers: () => PressHandler[];
}

/**
 * The inbound flow: dedupe on the platform's update id (durable, in the same transaction as the
 * message append, so a crash cannot lose a message or let a redelivery through) → resolve the
 * person → commands are answered directly → other text is appended to the person's one
 * conversation and a turn is requested. Adapters call `handle` and acknowledge the platform as soon
 * as it resolves; slow work (the turn) happens after.
 */
export class InboundHandler {
  constructor(private readonly deps: InboundDeps) {}

  async handle(event: InboundEvent): Promise<void> {
    const { store, clock, logger } = this.deps;
    const resolved = await this.resolve(event);
    if (!resolved) {
      // Unknown sender without a person: remember the update id so a redelivery is not re-processed.
      await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now());
      return;
    }
    const { person, identity } = resolved;

    if (event.kind === "press") {
      if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) return;
      await this.press(event, person, identity);
      return;
    }

    const command = this.deps.commands.parse(event.text);
    if (command) {
      if (!(await store.inbound.markUpdateProcessed(event.channel, event.updateId, clock.now()))) return;
      const reply = await this.deps.commands.run(command.name, { person, args: command.args, channel: event.channel, accountId: event.accountId });
      await this.deps.answer(person, event, reply.text);
      return;
    }

    const messageId = await this.record(event, person);
    if (messageId) this.deps.onMessage(person, messageId);
    else logger.debug({ channel: event.channel, updateId: event.updateId }, "duplicate update dropped");
  }

  /** Dedupe and append atomically; returns the new message id, or null for a duplicate. */
  private async record(event: InboundMessage, person: Person): Promise<string | null> {
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
      });
      return message.id;
    });
  }

  private async press(event: InboundPress, person: Person, identity: Identity): Promise<void> {
    for (const handler of this.deps.pressHandlers()) {
      if (await handler(event, person, identity)) return;
    }
    await this.deps.answer(person, event, "That button is no longer active.");
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
