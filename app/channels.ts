/**
 * The channels: the local web chat (always), the messengers the settings configure (their libraries
 * imported only then, app/messengers.ts), and the setup page's live reconfiguration of them
 * (app/messenger-setup.ts). Every channel is installed recorded into the person's chat log, so the
 * web chat shows both sides of every channel.
 */
import { LocalChannel } from "../bots/local/index.js";
import type { WhatsAppChannel } from "../bots/whatsapp/index.js";
import type { ChannelAdapter } from "../core/channels/index.js";
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import type { Logger } from "../core/log/index.js";
import { alertOnOtherChannel } from "../core/outbox/index.js";
import { ChatLog, MessengerStatus, recordingAdapter } from "../web/api/index.js";
import type { HttpServer, Refusal } from "../web/http/index.js";
import type { Familiar } from "./familiar.js";
import { createMessengers } from "./messengers.js";
import { MessengerSetup } from "./messenger-setup.js";
import type { Secrets } from "./secrets.js";
import type { Storage } from "./store.js";

/** The channel parts the web server and the start use. */
export interface Channels {
  local: LocalChannel;
  chatLog: ChatLog;
  status: MessengerStatus;
  setup: MessengerSetup;
  /** Requests refused at the door (bad signature, too large, too deep), for the audit log. */
  onRefused: (refusal: Refusal) => void;
  /** Builds and installs the configured messengers (after the web app's routes: Slack mounts its own). */
  startMessengers(): Promise<{ whatsapp: WhatsAppChannel | null; notConfigured: string[] }>;
}

/** Installs the local chat and prepares the messengers (nothing connects until `familiar.start()`). */
export function createChannels(
  config: Config,
  parts: { familiar: Familiar; storage: Storage; secrets: Secrets; http: HttpServer; clock: Clock; logger: Logger; dataDir: string; url: () => string },
): Channels {
  const { familiar, storage, logger } = parts;
  const { store } = storage;
  const local = new LocalChannel(store.localMailbox, { clock: parts.clock });
  const chatLog = new ChatLog(store, parts.clock, logger);
  const install = (adapter: ChannelAdapter) => {
    const recorded = recordingAdapter(adapter, chatLog);
    familiar.addChannel(recorded);
    return recorded;
  };
  install(local);
  const onRefused = (refusal: Refusal) =>
    void store.audit
      .appendAudit({ personId: null, kind: "inbound.refused", summary: `${refusal.source}: refused a request (${refusal.reason})`, data: { ...refusal } })
      .catch((err: unknown) => logger.error({ err, refusal }, "could not audit a refused request"));
  const whatsappInvalid = (reason: string) => {
    logger.error({ reason }, "WhatsApp session is no longer valid; the other messengers keep running");
    const text = `WhatsApp stopped working (${reason}). Open ${parts.url()}/setup on the Familiar machine to pair it again.`;
    alertOnOtherChannel({ store, clock: parts.clock, outbound: familiar.outbound, running: (c) => familiar.channel(c) !== undefined }, "whatsapp", text).catch((err: unknown) =>
      logger.error({ err }, "could not tell the persons on WhatsApp on another channel that it stopped"),
    );
  };
  const messengerDeps = {
    http: parts.http,
    logger,
    dataDir: parts.dataDir,
    onRefused,
    inbound: store.inbound,
    ...(storage.mongoClient && { mongoClient: storage.mongoClient }),
    onWhatsAppQr: () => logger.info(`WhatsApp pairing: scan the QR printed above, or open ${parts.url()}/setup`),
    onWhatsAppInvalid: whatsappInvalid,
  };
  const status = new MessengerStatus();
  status.watchAccounts((channel) => familiar.channel(channel)?.account?.() ?? null);
  // Messenger settings from the setup page: the environment wins; applied live, without a restart.
  const setup = new MessengerSetup({
    config,
    vault: parts.secrets.vault,
    logger,
    status,
    create: (effective) => createMessengers(effective, messengerDeps),
    install,
    running: (name) => familiar.channel(name),
    sink: familiar.handleInbound,
    whatsappEnabled: () => parts.secrets.setup.whatsappEnabled(),
    setWhatsAppEnabled: (enabled) => parts.secrets.setup.setWhatsAppEnabled(enabled),
  });
  const startMessengers = async () => {
    const messengers = await createMessengers(setup.effectiveConfig(), messengerDeps);
    for (const adapter of messengers.adapters) install(adapter);
    const whatsapp = messengers.whatsapp;
    if (whatsapp) status.watchWhatsApp(() => ({ state: whatsapp.state(), qr: whatsapp.currentQr() }));
    return { whatsapp, notConfigured: messengers.notConfigured };
  };
  return { local, chatLog, status, setup, onRefused, startMessengers };
}
