import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { ChannelName } from "../channels/records.js";
import type { Identity, ReachPreference } from "../persons/records.js";
import type { NewOutboxMessage, OutboxMessage } from "./records.js";
import type { Store } from "../storage/index.js";

/** How long after its last poll a web chat page still counts as open, ms (its long poll waits at most 25 s). */
export const PAGE_OPEN_MS = 45_000;

/** Whether one of a person's web chat pages is open now (see {@link WebPresence}). */
export interface PagePresence {
  isOpen(personId: PersonId): boolean;
}

/**
 * Which persons have a web chat page open: the web chat's live poll calls `seen` each time it
 * asks for news, and a page counts as open for {@link PAGE_OPEN_MS} after its last poll. Kept in
 * memory: after a restart no page counts as open until it polls again (within seconds).
 */
export class WebPresence implements PagePresence {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** A page of `personId` asked for news now. */
  seen(personId: PersonId): void {
    this.lastSeen.set(personId, this.clock.now().getTime());
  }

  isOpen(personId: PersonId): boolean {
    const at = this.lastSeen.get(personId);
    if (at === undefined) return false;
    if (this.clock.now().getTime() - at <= PAGE_OPEN_MS) return true;
    this.lastSeen.delete(personId);
    return false;
  }
}

/** What routing knows about a person when it chooses where a message goes. */
export interface RouteFacts {
  /** Linked identities not marked unreachable. */
  reachable: Identity[];
  /** Channels the person wrote from, most recent first, each once. */
  lastUsed: ChannelName[];
  /** One of their web chat pages is open now. */
  pageOpen: boolean;
  reach: ReachPreference;
}

/**
 * The channels a message goes to, in order (empty: nowhere). A message for a channel goes there
 * while the person has a reachable account on it; a message for wherever the person is (or whose
 * channel is gone) follows their {@link ReachPreference}:
 * - `last`: the chat they last used, where the web chat counts only while a page is open; else
 *   their most recently used messenger (then the most recently linked one); else the web chat
 *   (its mailbox keeps the message until they open it);
 * - `messenger`: the chosen messenger if reachable, else as `last`;
 * - `all`: every reachable channel.
 * `exclude` leaves one channel out (the one a message is being taken away from).
 */
export function chooseLanes(requested: ChannelName | null, facts: RouteFacts, exclude?: ChannelName): ChannelName[] {
  const linked = [...facts.reachable].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((i) => i.channel);
  const candidates = [...new Set(linked)].filter((c) => c !== exclude);
  if (candidates.length === 0) return [];
  if (requested !== null && candidates.includes(requested)) return [requested];
  if (requested === null && facts.reach.mode === "all") return candidates;
  if (requested === null && facts.reach.mode === "messenger" && candidates.includes(facts.reach.channel)) return [facts.reach.channel];
  const live = (c: ChannelName): boolean => c !== "local" || facts.pageOpen;
  const last = facts.lastUsed.find((c) => candidates.includes(c) && live(c));
  if (last) return [last];
  const messenger = [...facts.lastUsed.filter((c) => candidates.includes(c)), ...candidates].find((c) => c !== "local");
  if (messenger) return [messenger];
  return candidates.includes("local") ? ["local"] : [candidates[0]!];
}

/** Reads the {@link RouteFacts} of a person from the store (and the page presence). */
export async function routeFacts(store: Pick<Store, "persons" | "conversation">, presence: PagePresence | undefined, personId: PersonId): Promise<RouteFacts> {
  const person = await store.persons.getPerson(personId);
  const reachable = (await store.persons.listIdentities(personId)).filter((i) => !i.unreachable);
  const recent = await store.conversation.listRecentMessages(personId, 50);
  const lastUsed = [...new Set([...recent].reverse().filter((m) => m.role === "user").map((m) => m.channel))];
  return { reachable, lastUsed, pageOpen: presence?.isOpen(personId) ?? false, reach: person?.reach ?? { mode: "last" } };
}

/** The delivery key of the copy of `message` for `channel` (reach `all`). */
export function copyKey(message: Pick<OutboxMessage, "deliveryKey">, channel: ChannelName): string {
  return `${message.deliveryKey}@${channel}`;
}

/** What {@link routeRow} needs: the store, and `queue` for the copies of reach `all` (the outbound door). */
export interface RoutingDeps {
  store: Pick<Store, "persons" | "conversation" | "outbox">;
  clock: Clock;
  logger: Logger;
  presence?: PagePresence;
  queue: (message: NewOutboxMessage) => Promise<unknown>;
}

/**
 * Chooses the channel(s) of one unrouted row (see {@link chooseLanes}); an edit follows its
 * original. Reach `all`: the row takes the first channel and a copy is queued for each other one
 * (first, so a crash in between loses none). A row with nowhere to go fails with the reason.
 */
export async function routeRow(deps: RoutingDeps, row: OutboxMessage): Promise<void> {
  const { store, clock, logger } = deps;
  const facts = await routeFacts(store, deps.presence, row.personId);
  const original = row.editOf ? await store.outbox.getOutbound(row.editOf) : null;
  const editLane = original ? (original.delivered?.channel ?? original.lane) : null;
  const lanes = chooseLanes(editLane ?? row.channel, facts).slice(0, editLane ? 1 : undefined);
  const [lane, ...others] = lanes;
  if (!lane) {
    // A row taken off its channel keeps why (a block, an unlink) in front.
    const error = row.lastError ? `${row.lastError}; no other reachable identity` : "no reachable identity";
    if (await store.outbox.routeOutbound({ id: row.id, lane: null, error, now: clock.now() })) {
      logger.warn({ outboxId: row.id, personId: row.personId }, "outbound message dropped: the person has no reachable identity");
    }
    return;
  }
  for (const channel of others) {
    await deps.queue({ personId: row.personId, channel, deliveryKey: copyKey(row, channel), text: row.text, buttons: row.buttons, card: row.card, attachments: row.attachments });
  }
  await store.outbox.routeOutbound({ id: row.id, lane, now: clock.now() });
}
