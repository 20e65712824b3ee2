import type { Logger } from "../log/index.js";
import type { ChannelName } from "./records.js";
import type { ChannelAdapter, InboundSink } from "./port.js";

/** What starting the channels came to: the ones running, and each one that failed with its error. */
export interface ChannelsStarted {
  started: ChannelName[];
  failed: { channel: ChannelName; error: string }[];
}

/**
 * The channel adapters of this process, by channel: installed before start (and while running, when
 * the setup page configures a messenger), started together — a channel that fails to start is
 * reported and dropped, the others keep running — and stopped together. The outbox, access control
 * and typing indicators look adapters up here.
 */
export class ChannelRegistry {
  private readonly adapters = new Map<ChannelName, ChannelAdapter>();

  constructor(private readonly logger: Logger) {}

  /** Installs `adapter` for its channel (replacing an earlier one of the same channel). */
  add(adapter: ChannelAdapter): void {
    this.adapters.set(adapter.channel, adapter);
  }

  /** The installed adapter of `channel`, if any. */
  get = (channel: ChannelName): ChannelAdapter | undefined => this.adapters.get(channel);

  /** Every installed adapter, by channel (a live view). */
  all = (): ReadonlyMap<ChannelName, ChannelAdapter> => this.adapters;

  /** Starts every installed adapter with `sink`; one that throws is logged, dropped and reported. */
  async startAll(sink: InboundSink): Promise<ChannelsStarted> {
    const started: ChannelName[] = [];
    const failed: { channel: ChannelName; error: string }[] = [];
    for (const [name, adapter] of this.adapters) {
      try {
        await adapter.start(sink);
        started.push(name);
      } catch (err) {
        this.adapters.delete(name);
        failed.push({ channel: name, error: (err as Error).message });
        this.logger.error({ channel: name, err }, "channel failed to start; the others keep running");
      }
    }
    return { started, failed };
  }

  /** Stops every adapter; one that fails to stop is logged and the others still stop. */
  async stopAll(): Promise<void> {
    for (const adapter of this.adapters.values()) {
      try {
        await adapter.stop();
      } catch (err) {
        this.logger.warn({ err, channel: adapter.channel }, "channel did not stop cleanly");
      }
    }
  }
}
