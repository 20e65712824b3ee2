import { randomInt } from "node:crypto";
import type { InboundMessage } from "../channels/index.js";
import type { Clock } from "../clock.js";
import { DuplicateKeyError } from "../errors.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { Store } from "../storage/index.js";
import type { ChannelName } from "../channels/records.js";
import type { Person } from "../persons/records.js";

/** /link codes expire after ten minutes. */
export const LINK_TTL_MS = 10 * 60_000;
/** Characters of a /link code. */
export const LINK_CODE_LENGTH = 6;
/** Unambiguous characters (no 0/O, 1/I/L). */
export const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";

/** A random code of `length` characters from {@link CODE_ALPHABET}. */
export function randomCode(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return out;
}

/** How an answer names each channel ("This telegram account …", as the answers always said). */
const channelTitle: Record<ChannelName, string> = { local: "local chat", telegram: "telegram", slack: "slack", discord: "discord", whatsapp: "whatsapp" };

/** A message that is a pending link code: the code, whose it is, and whether the sender confirmed a move. */
export interface LinkClaim {
  code: string;
  personId: PersonId;
  expiresAt: number;
  move: boolean;
}

/** The person an answer goes to and the answer itself. */
export interface LinkAnswer {
  person: Person;
  text: string;
}

/**
 * `CODE`, `/link CODE` (also `/link@Bot CODE`), each optionally followed by `move`; and `/start CODE`,
 * what Telegram sends when a person opens the bot's `https://t.me/<bot>?start=CODE` link (Bot API,
 * "Deep linking").
 */
const CODE_MESSAGE = new RegExp(`^(?:/(?:link|start)(?:@\\S+)?\\s+)?([${CODE_ALPHABET}]{${LINK_CODE_LENGTH}})(?:\\s+(move))?$`, "i");

/**
 * `/link` codes, in every direction: a code shown on any channel (a messenger or the local chat)
 * joins the account that sends it back — from any other channel — to the same person and
 * conversation.
 *
 * - An account Familiar does not know yet is attached at once (this is also how a stranger gets in
 *   without pairing: someone who already talks to Familiar vouches for the account).
 * - An account that already belongs to the code's person is told so.
 * - An account that belongs to **another** person is never taken silently: the answer explains that
 *   it has its own conversation and that `/link CODE move` moves the account over (its old
 *   conversation stays with the other person; that person's background work is paused when it has
 *   no account left).
 *
 * Codes live in memory (a restart forgets them; the person asks for a new one) and work once.
 */
export class LinkCodes {
  private readonly pending = new Map<string, { personId: PersonId; expiresAt: number }>();

  constructor(private readonly deps: { store: Store; clock: Clock; logger: Logger; onLinked?: (channel: ChannelName, accountId: string) => void }) {}

  /** A new code for `personId`, valid for {@link LINK_TTL_MS}. */
  issue(personId: PersonId): string {
    this.sweep();
    let code = randomCode(LINK_CODE_LENGTH);
    while (this.pending.has(code)) code = randomCode(LINK_CODE_LENGTH);
    this.pending.set(code, { personId, expiresAt: this.deps.clock.now().getTime() + LINK_TTL_MS });
    return code;
  }

  /**
   * Takes the pending code `text` names (null when it names none). Synchronous, so two accounts
   * sending one code at the same moment cannot both take it; `release` puts back a code that was not used.
   */
  claim(text: string): LinkClaim | null {
    const match = CODE_MESSAGE.exec(text.trim());
    if (!match) return null;
    this.sweep();
    const code = match[1]!.toUpperCase();
    const link = this.pending.get(code);
    if (!link) return null;
    this.pending.delete(code);
    return { code, personId: link.personId, expiresAt: link.expiresAt, move: match[2] !== undefined };
  }

  /** Puts back a claimed code that did not link anything (it stays valid until it expires). */
  release(claim: LinkClaim): void {
    if (claim.expiresAt > this.deps.clock.now().getTime()) this.pending.set(claim.code, { personId: claim.personId, expiresAt: claim.expiresAt });
  }

  /**
   * Uses a claimed code for the sender of `event` (see the class comment for the cases). Returns the
   * person to answer and the answer; null when the code's person no longer exists and the sender is
   * nobody Familiar knows (nothing to answer through).
   */
  async redeem(event: InboundMessage, claim: LinkClaim): Promise<LinkAnswer | null> {
    const { store } = this.deps;
    const target = await store.persons.getPerson(claim.personId);
    const identity = await store.persons.findIdentity(event.channel, event.accountId);
    const owner = identity ? await store.persons.getPerson(identity.personId) : null;
    const here = channelTitle[event.channel];
    if (!target) return owner ? { person: owner, text: "That code belongs to a conversation that no longer exists. Ask for a new one with /link." } : null;

    if (!identity || !owner) {
      try {
        if (identity) await store.persons.moveIdentity({ channel: event.channel, accountId: event.accountId, toPersonId: target.id, address: event.address });
        else await store.persons.addIdentity({ personId: target.id, channel: event.channel, accountId: event.accountId, address: event.address });
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        // The account became someone's in the meantime (its first message is being handled): decide again.
        return this.redeem(event, claim);
      }
      await this.audit(target, "identity.linked", `Linked ${event.channel} account ${event.accountId}`, event);
      this.deps.logger.info({ channel: event.channel, personId: target.id }, "account linked with a /link code");
      this.deps.onLinked?.(event.channel, event.accountId);
      return { person: target, text: `Linked! This ${here} account now shares your conversation with Familiar.` };
    }

    if (owner.id === target.id) {
      this.release(claim);
      return { person: owner, text: `This ${here} account is already linked to you, so there is nothing to do. Send the code from the account you want to add.` };
    }

    if (!claim.move) {
      this.release(claim);
      return {
        person: owner,
        text:
          `This ${here} account already has its own conversation with me, so I haven't linked it. ` +
          `To move this account into the conversation that made the code, send "/link ${claim.code} move" within 10 minutes. ` +
          `Its current conversation (messages, memory, reminders) stays where it is and won't reach you on this account any more.`,
      };
    }

    await store.persons.moveIdentity({ channel: event.channel, accountId: event.accountId, toPersonId: target.id, address: event.address });
    const left = await store.persons.listIdentities(owner.id);
    if (left.length === 0) await store.persons.updatePerson(owner.id, { paused: true });
    await this.audit(owner, "identity.moved", `Moved ${event.channel} account ${event.accountId} to another conversation (/link)${left.length === 0 ? "; background work paused: no account left" : ""}`, event);
    await this.audit(target, "identity.linked", `Linked ${event.channel} account ${event.accountId}, moved from another conversation`, event);
    this.deps.logger.info({ channel: event.channel, from: owner.id, to: target.id }, "account moved to another person with a /link code");
    return { person: target, text: `Linked! This ${here} account now shares your conversation with Familiar. Its earlier conversation stays saved apart.` };
  }

  private async audit(person: Person, kind: string, summary: string, event: InboundMessage): Promise<void> {
    await this.deps.store.audit.appendAudit({ personId: person.id, kind, summary, data: { channel: event.channel, accountId: event.accountId } });
  }

  private sweep(): void {
    const now = this.deps.clock.now().getTime();
    for (const [code, link] of this.pending) if (link.expiresAt <= now) this.pending.delete(code);
  }
}
