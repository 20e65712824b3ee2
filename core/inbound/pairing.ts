import { sendDirect, type ChannelAdapter, type InboundEvent, type InboundOutcome, type InboundPress } from "../channels/index.js";
import type { Clock } from "../clock.js";
import { DuplicateKeyError } from "../errors.js";
import type { OutboxId, PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { Outbound } from "../outbox/index.js";
import type { Store } from "../storage/index.js";
import type { ChannelName } from "../channels/records.js";
import type { Person } from "../persons/records.js";
import type { CommandRegistry } from "./commands.js";
import type { Door } from "./door.js";
import { LinkCodes, randomCode } from "./links.js";

/** Pairing codes expire after an hour; at most three wait per messenger (so strangers cannot flood). */
const PAIRING_TTL_MS = 60 * 60_000;
const MAX_PENDING_PER_CHANNEL = 3;
interface PendingPairing {
  code: string;
  channel: ChannelName;
  accountId: string;
  address: string;
  displayName: string;
  expiresAt: number;
  /** The cards that asked the owner(s) about it, edited to the outcome once it is decided. */
  cards: { personId: PersonId; id: OutboxId }[];
}

/** Button ids of a pairing card: `pair:<code>:ok` approves, `pair:<code>:no` declines (≤ 32 characters). */
const PAIR_BUTTON = /^pair:([A-Z0-9]{8}):(ok|no)$/;

/**
 * Who may talk to Familiar:
 * - the local web chat's users become persons on their first message (the chat serves this machine
 *   only, unless LOCAL_CHAT_ALLOW_REMOTE opened it behind a sign-in);
 * - on the messengers, identities listed in ALLOW_FROM (`telegram:123,slack:U0ABC,…`) become persons on their first message;
 * - anyone else gets a one-time pairing code (expires in 1 h, at most 3 pending per messenger) and
 *   nothing else happens until the owner or an admin (door.ts) approves it with `/pair <code>`;
 *   another allowed person may not, and their attempt is audited; each request also reaches the
 *   owner as a card (in the web chat when the owner has one, else where the owner is reached) with
 *   *Approve pairing* and *Decline* buttons;
 * - `/link` shows a code; sending that code back from any other channel joins that account to the
 *   same person and conversation (`LinkCodes` has the rules, including accounts that belong to
 *   someone else already).
 * Pending codes live in memory: after a restart a stranger simply gets a new code.
 */
export class AccessControl {
  private readonly allowed: Set<string>;
  private readonly pairings = new Map<string, PendingPairing>();
  /** Local chat users being made persons now (two first messages at once make one person). */
  private readonly creatingLocal = new Map<string, Promise<Person>>();
  /** The /link codes; the inbound handler redeems them before it resolves the sender. */
  readonly links: LinkCodes;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      allowFrom: readonly string[];
      /** The running adapter of a channel (to answer people who are not persons yet). */
      channel: (name: ChannelName) => ChannelAdapter | undefined;
      /** Who may approve pairings (the owner and admins); without it anyone known may (tests). */
      door?: Door;
      /** Where the owner's pairing cards are queued; without it the owner learns of requests by /pair only. */
      outbound?: Pick<Outbound, "queue">;
    },
  ) {
    this.allowed = new Set(deps.allowFrom.map((e) => e.trim()));
    this.links = new LinkCodes({ ...deps, onLinked: (channel, accountId) => this.dropPairing(channel, accountId) });
  }

  /**
   * The unknown-sender policy: a person for local chat users, allowed or linking senders; null (after
   * answering) otherwise.
   */
  unknownSender = async (event: InboundEvent): Promise<Person | null> => {
    const { store } = this.deps;
    if (event.channel === "local") return this.localPerson(event);
    const claim = event.kind === "message" ? this.links.claim(event.text) : null;
    if (claim && event.kind === "message") {
      const answer = await this.links.redeem(event, claim);
      if (answer) await this.tell(event.channel, event, answer.text);
      return null;
    }
    if (this.allowed.has(`${event.channel}:${event.accountId}`)) {
      const person = await store.persons.createPerson({ displayName: event.displayName ?? event.accountId });
      return this.attach(person, event);
    }
    await store.audit.appendAudit({
      personId: null,
      kind: "inbound.refused",
      summary: `${event.kind === "press" ? "A button press" : "A message"} from an unknown ${event.channel} account`,
      data: { refusal: "unknown_sender", channel: event.channel, accountId: event.accountId, kind: event.kind, groupId: event.groupId ?? null },
      at: this.deps.clock.now(),
    });
    if (event.kind !== "message") return null;
    await this.offerPairing(event);
    return null;
  };

  /** The local chat is trusted (loopback only unless allowed): its users become persons on first message. */
  private localPerson(event: InboundEvent): Promise<Person> {
    const pending = this.creatingLocal.get(event.accountId);
    if (pending) return pending;
    const { store } = this.deps;
    const creation = (async () => {
      const existing = await store.persons.findIdentity("local", event.accountId);
      const known = existing && (await store.persons.getPerson(existing.personId));
      if (known) return known;
      const person = await store.persons.createPerson({ displayName: event.displayName ?? event.accountId });
      await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: event.accountId, address: event.address });
      return person;
    })().finally(() => this.creatingLocal.delete(event.accountId));
    this.creatingLocal.set(event.accountId, creation);
    return creation;
  }

  /** A fresh /link code for `person`, as the sentence that tells them what to do with it (valid 10 minutes). */
  offerLink = (person: Pick<Person, "id">): string => `Send this code to me from your other messenger (or the local chat) within 10 minutes: ${this.links.issue(person.id)}`;

  /** Registers /link and /pair. */
  registerCommands(registry: CommandRegistry): void {
    registry.register("link", "connect another messenger (or the local chat) to this conversation: send /link here, then the code from there", async ({ person, args }) => {
      // A pending code never gets here: the inbound handler redeems it first.
      if (args) {
        return {
          text: `I have no pending code ${args.split(/\s+/)[0]!.toUpperCase()}: codes work once, for 10 minutes. Send /link on the account you already use with me, then send the code it shows from the account you want to add.`,
        };
      }
      return { text: this.offerLink(person) };
    });
    registry.register("pair", "approve someone's pairing code: `/pair <code>` (owner and admins)", async ({ person, args, channel, accountId }) => {
      if (this.deps.door && !(await this.deps.door.isOwnerOrAdmin(person.id))) {
        await this.deps.store.audit.appendAudit({
          personId: person.id,
          kind: "pairing.refused",
          summary: "Tried to approve a pairing without being the owner or an admin",
          data: { channel, accountId, code: args.trim().toUpperCase().slice(0, 16) },
          at: this.deps.clock.now(),
        });
        return { text: "Only the owner (or an admin the owner named) can approve pairings." };
      }
      const code = args.trim().toUpperCase();
      if (code === "") return { text: this.waitingText() };
      const answer = await this.decide(code, true, person.id);
      return { text: answer ?? `No such code. ${this.waitingText()}` };
    });
  }

  /**
   * Presses of a pairing card's buttons (`pair:<code>:ok|no`); null for any other button. Only the
   * owner or an admin may decide; anyone else is told so and the attempt is audited.
   */
  press = async (event: InboundPress, person: Person | null): Promise<InboundOutcome | null> => {
    const match = PAIR_BUTTON.exec(event.buttonId);
    if (!match) return null;
    const [, code, verb] = match as unknown as [string, string, "ok" | "no"];
    if (!person || (this.deps.door && !(await this.deps.door.isOwnerOrAdmin(person.id)))) {
      await this.deps.store.audit.appendAudit({
        personId: person?.id ?? null,
        kind: "pairing.refused",
        summary: "Pressed a pairing card without being the owner or an admin",
        data: { channel: event.channel, accountId: event.accountId, code },
        at: this.deps.clock.now(),
      });
      return { status: "handled", notice: "Only the owner (or an admin) can decide pairings." };
    }
    const answer = await this.decide(code, verb === "ok", person.id);
    return { status: "handled", notice: answer ?? "That pairing request has expired or was already decided." };
  };

  /** Who waits, each with the code that approves them (valid for an hour after they wrote). */
  private waitingText(): string {
    this.sweep();
    const waiting = [...this.pairings.values()].map((p) => `• ${p.displayName} on ${p.channel} (${p.accountId}): /pair ${p.code}`);
    return waiting.length ? `Waiting to be paired:\n${waiting.join("\n")}` : "No pairing requests are waiting.";
  }

  /**
   * Approves (a new person with that account) or declines a waiting pairing; the cards that asked about
   * it show the outcome. Returns what to tell the one who decided, or null when no such code waits.
   */
  private async decide(code: string, approve: boolean, by: PersonId): Promise<string | null> {
    this.sweep();
    const pending = this.pairings.get(code);
    if (!pending) return null;
    this.pairings.delete(pending.code);
    const { store } = this.deps;
    let outcome: string;
    if (approve) {
      const paired = await store.persons.createPerson({ displayName: pending.displayName });
      await this.attach(paired, pending);
      await store.audit.appendAudit({ personId: by, kind: "pairing.approved", summary: `Paired ${pending.channel} account ${pending.accountId}`, data: { channel: pending.channel, accountId: pending.accountId, personId: paired.id } });
      await this.tell(pending.channel, { accountId: pending.accountId, address: pending.address }, "You're paired — say hello!");
      outcome = `Paired ${pending.displayName} (${pending.channel}).`;
    } else {
      await store.audit.appendAudit({ personId: by, kind: "pairing.declined", summary: `Declined pairing of ${pending.channel} account ${pending.accountId}`, data: { channel: pending.channel, accountId: pending.accountId } });
      outcome = `Declined: ${pending.displayName} (${pending.channel}) is not paired.`;
    }
    for (const card of pending.cards) {
      await this.deps.outbound?.queue({ personId: card.personId, deliveryKey: `pairing:${pending.code}:${approve ? "ok" : "no"}:${card.personId}`, text: outcome, buttons: [], editOf: card.id });
    }
    return outcome;
  }

  /** A pending pairing of an account that was just linked with a /link code is moot: it goes. */
  private dropPairing(channel: ChannelName, accountId: string): void {
    for (const [code, p] of this.pairings) if (p.channel === channel && p.accountId === accountId) this.pairings.delete(code);
  }

  /** Asks each owner about a new pairing request with a card (Approve pairing / Decline). */
  private async askOwners(pending: PendingPairing): Promise<void> {
    const { door, outbound, store } = this.deps;
    if (!door || !outbound) return;
    const text = `${pending.displayName} wants to talk to Familiar on ${pending.channel} (account ${pending.accountId}). Pair them? They get their own conversation with Familiar. The request expires in 1 hour.`;
    const buttons = [
      { id: `pair:${pending.code}:ok`, label: `Approve pairing` },
      { id: `pair:${pending.code}:no`, label: "Decline" },
    ];
    for (const personId of await door.ownerPersons()) {
      const identities = await store.persons.listIdentities(personId);
      const channel = identities.some((i) => i.channel === "local") ? ("local" as const) : null;
      const row = await outbound.queue({ personId, deliveryKey: `pairing:${pending.code}:ask:${personId}`, text, buttons, channel });
      pending.cards.push({ personId, id: row.id });
    }
  }

  private async attach(person: Person, who: { channel: ChannelName; accountId: string; address: string }): Promise<Person> {
    try {
      await this.deps.store.persons.addIdentity({ personId: person.id, channel: who.channel, accountId: who.accountId, address: who.address });
      return person;
    } catch (err) {
      // Someone attached this account at the same moment: use that person.
      if (!(err instanceof DuplicateKeyError)) throw err;
      const existing = await this.deps.store.persons.findIdentity(who.channel, who.accountId);
      const other = existing && (await this.deps.store.persons.getPerson(existing.personId));
      if (!other) throw err;
      return other;
    }
  }

  private async offerPairing(event: InboundEvent): Promise<void> {
    this.sweep();
    const existing = [...this.pairings.values()].find((p) => p.channel === event.channel && p.accountId === event.accountId);
    if (existing) return; // one code per sender; nothing else happens until it is approved
    const pendingHere = [...this.pairings.values()].filter((p) => p.channel === event.channel).length;
    if (pendingHere >= MAX_PENDING_PER_CHANNEL) {
      this.deps.logger.warn({ channel: event.channel }, "pairing request ignored: too many pending on this messenger");
      return;
    }
    const c = randomCode(8);
    const pending: PendingPairing = {
      code: c,
      channel: event.channel,
      accountId: event.accountId,
      address: event.address,
      displayName: event.displayName ?? event.accountId,
      expiresAt: this.deps.clock.now().getTime() + PAIRING_TTL_MS,
      cards: [],
    };
    this.pairings.set(c, pending);
    this.deps.logger.info({ channel: event.channel, accountId: event.accountId }, "pairing code issued");
    await this.tell(event.channel, event, `Hi! I don't know you yet. Your pairing code is ${c} (valid for 1 hour). Ask the owner to approve it (they have been asked), or to send /pair ${c} to Familiar.`);
    try {
      await this.askOwners(pending);
    } catch (err) {
      this.deps.logger.warn({ err, channel: event.channel }, "could not ask the owner about a pairing request");
    }
  }

  private async tell(channel: ChannelName, target: { accountId: string; address: string }, text: string): Promise<void> {
    const adapter = this.deps.channel(channel);
    if (!adapter) return;
    try {
      await sendDirect(adapter, { accountId: target.accountId, address: target.address }, { text, buttons: [] }, `tell:${channel}:${target.accountId}:${this.deps.clock.now().getTime()}`);
    } catch (err) {
      this.deps.logger.warn({ err, channel }, "could not answer an unknown sender");
    }
  }

  private sweep(): void {
    const now = this.deps.clock.now().getTime();
    for (const [k, p] of this.pairings) if (p.expiresAt <= now) this.pairings.delete(k);
  }
}
