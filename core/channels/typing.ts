import type { PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { ChannelName } from "./records.js";
import type { PersonRepository } from "../storage/index.js";
import type { ChannelAdapter } from "./port.js";

/** How often a typing indicator is renewed, ms (Telegram's lasts 5 s; the others' are similar or longer). */
const RENEW_MS = 4_000;

/**
 * Typing indicators while Familiar works on an answer: shown on the channel the person wrote from,
 * renewed every 4 s until stopped. A channel without a typing indicator costs nothing; a failure
 * only logs (at debug: it is cosmetic).
 */
export class TypingIndicators {
  constructor(
    private readonly deps: {
      channel: (name: ChannelName) => ChannelAdapter | undefined;
      store: { persons: Pick<PersonRepository, "listIdentities"> };
      logger: Logger;
    },
  ) {}

  /** Starts the indicator for `person` on `channel`; returns the function that stops it. */
  start = (person: { id: PersonId }, channel: ChannelName): (() => void) => {
    const personId = person.id;
    const adapter = this.deps.channel(channel);
    if (!adapter?.typing) return () => undefined;
    const typing = adapter.typing.bind(adapter);
    const { store, logger } = this.deps;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const failed = (err: unknown) => logger.debug({ err, personId }, "typing indicator failed");
    const tick = async () => {
      if (stopped) return;
      const identity = (await store.persons.listIdentities(personId)).find((i) => i.channel === channel);
      if (identity && !stopped) await typing({ accountId: identity.accountId, address: identity.address });
      if (!stopped) timer = setTimeout(() => void tick().catch(failed), RENEW_MS).unref();
    };
    tick().catch(failed);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  };
}
