import type { Clock } from "../clock.js";
import type { ChannelName } from "../channels/records.js";
import type { PersonRepository } from "../storage/index.js";
import type { Outbound } from "./outbound.js";

/** What `alertOnOtherChannel` needs. */
export interface AlertDeps {
  store: { persons: Pick<PersonRepository, "listPersons" | "listIdentities"> };
  clock: Clock;
  outbound: Pick<Outbound, "queue" | "wake">;
  /** Whether a channel is running in this process now. */
  running: (channel: ChannelName) => boolean;
}

/**
 * Tells every person who uses `failing` about a problem with it, on another of their channels that
 * is running and reachable — once per day and person (the delivery key holds the day). Used when
 * WhatsApp's session becomes invalid. Resolves with how many persons were told; throws what the
 * store throws.
 */
export async function alertOnOtherChannel(deps: AlertDeps, failing: ChannelName, text: string): Promise<number> {
  const { store, clock, outbound } = deps;
  let told = 0;
  let after: string | undefined;
  do {
    const page = await store.persons.listPersons({ limit: 200, ...(after && { after }) });
    for (const person of page.items) {
      const identities = await store.persons.listIdentities(person.id);
      if (!identities.some((i) => i.channel === failing)) continue;
      const other = identities.find((i) => i.channel !== failing && !i.unreachable && deps.running(i.channel));
      if (!other) continue;
      const day = clock.now().toISOString().slice(0, 10);
      await outbound.queue({ personId: person.id, channel: other.channel, deliveryKey: `alert:${failing}:${day}:${person.id}`, text }, { wake: false });
      told++;
    }
    after = page.next;
  } while (after);
  if (told > 0) outbound.wake();
  return told;
}
