/**
 * The HTTP server and what is mounted on it, in order: the web app first (it serves `/`), the old
 * local chat's API, then — after the messengers mounted their webhooks — the JSON APIs without
 * sign-in (they stay on this machine even when the web app is opened up) and the inbound webhooks.
 */
import type { Addresses } from "./addresses.js";
import type { Config } from "../core/config/index.js";
import type { Clock } from "../core/clock.js";
import type { Logger, SecretRegistry } from "../core/log/index.js";
import { asId } from "../core/ids.js";
import { WebSessions, fileLink, fileLinksRouter, readReadme, webApp } from "../web/api/index.js";
import { hooksRouter } from "../web/hooks/index.js";
import { HttpServer } from "../web/http/index.js";
import { artifactsRouter, dashboardRouter, localChatRouter, pairingQrRouter, secretsRouter } from "../web/local/index.js";
import type { WhatsAppChannel } from "../bots/whatsapp/index.js";
import type { Channels } from "./channels.js";
import type { Computer } from "./computer.js";
import type { Models } from "./model.js";
import type { Runtime } from "./runtime.js";
import type { Secrets } from "./secrets.js";
import type { Storage } from "./store.js";

/**
 * The HTTP server with the health of the store, the scheduler and the computer (informational: a
 * host without sandboxes is healthy, its computer is just off and says why); every JSON body it
 * sends is scrubbed of secrets.
 */
export function createHttp(logger: Logger, storage: Storage, registry: SecretRegistry, computer: Computer): HttpServer {
  const { store, scheduler } = storage;
  return new HttpServer(
    logger,
    [
      { name: "store", check: async () => ({ ...(await store.health()) }) },
      { name: "scheduler", check: async () => ({ ok: scheduler.status().running, ...scheduler.status() }) },
      { name: "computer", check: async () => ({ ok: true, ...computer.view() }) },
    ],
    registry.scrubDeep,
  );
}

/** Mounts the web app (setup, dashboard, web chat) and the old local chat's API; resolves with the web sessions. */
export async function mountWebApp(
  config: Config,
  http: HttpServer,
  parts: { runtime: Runtime; channels: Channels; storage: Storage; secrets: Secrets; models: Models; clock: Clock; logger: Logger; dataDir: string; publicUrl: () => string; devices: () => Addresses },
): Promise<WebSessions> {
  const { runtime, channels, storage, clock, logger } = parts;
  const { familiar, artifacts } = runtime;
  const { store } = storage;
  const sessions = await WebSessions.open(parts.dataDir, clock);
  // A file a messenger refuses is sent as a signed download link (7 days).
  familiar.fileLinks.current = (personId, artifactId) => fileLink(sessions, parts.publicUrl(), personId, artifactId);
  http.mount(fileLinksRouter({ sessions, source: artifacts }));
  http.mount(
    webApp({
      store,
      familiar,
      chatLog: channels.chatLog,
      sessions,
      setup: parts.secrets.setup,
      clock,
      logger,
      allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE,
      secureCookies: (config.PUBLIC_URL ?? "").startsWith("https:"),
      publicUrl: parts.publicUrl,
      deliver: (event) => channels.local.deliver(event),
      typing: (account) => channels.local.isTyping(account),
      maxFileBytes: config.MAX_ATTACHMENT_BYTES,
      channelStatus: channels.status.channels,
      setupApi: {
        model: parts.models.switchable,
        notificationJudgement: config.NOTIFY_MODEL_JUDGEMENT,
        envModel: parts.models.envModel,
        modelTimeoutMs: config.MODEL_TIMEOUT_MS,
        messengers: channels.status.messengers,
        whatsappQr: channels.status.whatsappQr,
        messengerSetup: channels.setup,
        ownAccounts: {
          linked: async (personId) => (await store.persons.listIdentities(personId)).map((i) => ({ channel: i.channel, accountId: i.accountId })),
          issueCode: (personId) => familiar.access.links.issue(personId),
        },
        computer: runtime.computer.view,
        devices: () => {
          const where = parts.devices();
          return { allowRemote: config.LOCAL_CHAT_ALLOW_REMOTE, listensBeyondLoopback: where.listensBeyondLoopback, network: where.network, publicUrlSet: config.PUBLIC_URL !== undefined, https: (config.PUBLIC_URL ?? "").startsWith("https:") };
        },
      },
      readme: readReadme,
      artifacts,
      ...(familiar.secrets && { secrets: familiar.secrets }),
      connections: { desk: parts.runtime.connectors.desk, connections: parts.runtime.connectors.connections },
    }),
  );
  http.mount(
    localChatRouter(channels.local, {
      allowRemote: false,
      logger,
      attachment: async (id) => {
        const artifact = await store.artifacts.getArtifact(id);
        return artifact ? artifacts.loadAttachment(artifact.personId, id) : null;
      },
    }),
  );
  return sessions;
}

/** Mounts the JSON APIs without sign-in (loopback only) and the inbound webhooks. */
export function mountLocalApis(http: HttpServer, parts: { runtime: Runtime; channels: Channels; storage: Storage; secrets: Secrets; whatsapp: WhatsAppChannel | null }): void {
  const { runtime, storage, whatsapp } = parts;
  const { store } = storage;
  http.mount(pairingQrRouter(() => (whatsapp ? { state: whatsapp.state(), qr: whatsapp.currentQr() } : null), { allowRemote: false }));
  http.mount(dashboardRouter({ store, views: runtime.familiar.views, allowRemote: false }));
  http.mount(secretsRouter(parts.secrets.vault, { allowRemote: false, isPerson: async (id) => (await store.persons.getPerson(asId("person", id))) !== null }));
  http.mount(artifactsRouter({ store, source: runtime.artifacts, allowRemote: false }));
  http.mount(hooksRouter(runtime.familiar.webhooks.receive, { onRefused: parts.channels.onRefused }));
}
