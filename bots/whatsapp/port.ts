import { createRequire } from "node:module";
import type { Client, MessageMedia, Poll } from "whatsapp-web.js";
import type { RemoteAuthStore } from "./remote-store.js";

/**
 * The narrow slice of whatsapp-web.js the WhatsApp channel uses. whatsapp-web.js drives the real
 * WhatsApp Web page in Chromium (over a hundred internal modules), so it cannot be faked over the
 * wire: tests drive the channel through this port with a fake client emitting the library's events,
 * and the type checker proves below that the real `Client` satisfies it.
 */

/** Media as `downloadMedia` returns it (whatsapp-web.js `MessageMedia`): base64 data and what WhatsApp says of it. */
export interface WaMedia {
  mimetype: string;
  /** The file, base64-encoded. */
  data: string;
  filename?: string | null;
  filesize?: number | null;
}

/** A WhatsApp message as the channel reads it (a subset of whatsapp-web.js `Message`). */
export interface WaMessage {
  id: { _serialized: string };
  /** Chat the message came from: `…@c.us` / `…@lid` (a person) or `…@g.us` (a group). */
  from: string;
  /** In groups, the participant who wrote it. */
  author?: string;
  body: string;
  fromMe: boolean;
  /** Unix seconds. */
  timestamp: number;
  /** `chat`, `image`, `ptt` (voice note), `audio`, `video`, `document`, `sticker`, … (whatsapp-web.js MessageTypes). */
  type: string;
  /** The message carries media; `body` is then its caption. */
  hasMedia: boolean;
  /** Seconds of a voice note, audio or video, as a string (whatsapp-web.js). */
  duration?: string | undefined;
  /** WhatsApp Web's own record of the message; read (zod-checked) for the media's size, type and name before downloading. */
  rawData?: object;
  /** Downloads and decrypts the media in the WhatsApp Web page; undefined when it is gone (expired, deleted). */
  downloadMedia(): Promise<WaMedia | undefined>;
  mentionedIds: string[];
  getContact(): Promise<{ pushname?: string; name?: string }>;
  /** WhatsApp lets a sender edit a message for 15 minutes; resolves null when the edit did not apply. */
  edit(content: string, options?: { linkPreview?: boolean }): Promise<unknown>;
}

/** A poll vote event (whatsapp-web.js `PollVote`): fired on every change, un-selecting included. */
export interface WaPollVote {
  voter: string;
  /** What the voter has selected now (empty after un-selecting everything); `id` is the option's localId. */
  selectedOptions: { id: number; name: string }[];
  /** Epoch ms of the change (the library's spelling). */
  interractedAtTs: number;
  parentMessage: { id: { _serialized: string } };
}

/** The whatsapp-web.js `Client` methods and events the channel uses. */
export interface WhatsAppClientPort {
  info?: { wid: { _serialized: string } };
  initialize(): Promise<void>;
  destroy(): Promise<void>;
  on(event: "qr", listener: (qr: string) => void): this;
  on(event: "ready" | "authenticated", listener: () => void): this;
  on(event: "auth_failure", listener: (message: string) => void): this;
  on(event: "disconnected", listener: (reason: string) => void): this;
  on(event: "message", listener: (message: WaMessage) => void): this;
  on(event: "vote_update", listener: (vote: WaPollVote) => void): this;
  sendMessage(
    chatId: string,
    content: string | Poll | MessageMedia,
    options?: { quotedMessageId?: string; linkPreview?: boolean; sendMediaAsDocument?: boolean },
  ): Promise<{ id: { _serialized: string } }>;
  getChatById(chatId: string): Promise<{ sendStateTyping(): Promise<void> }>;
  getMessageById(messageId: string): Promise<WaMessage | null | undefined>;
  /** Maps `…@lid` ids to phone-based ones (and back). */
  getContactLidAndPhone(userIds: string[]): Promise<{ lid: string; pn: string }[]>;
}

/** Compile-time proof that the real whatsapp-web.js `Client` satisfies the port. */
const _clientSatisfiesPort: WhatsAppClientPort = null as unknown as Client;
void _clientSatisfiesPort;

/**
 * How a client keeps its session: `LocalAuth` (the Chromium profile in `dataPath`, the default) or
 * `RemoteAuth` (the profile is unpacked in `dataPath` from a backup in `store` and zipped back every
 * `backupSyncIntervalMs`; whatsapp-web.js requires ≥ 60,000 ms and a `clientId` matching `[-_\w]+`).
 */
export type WhatsAppClientAuth =
  | { kind: "local" }
  | { kind: "remote"; store: RemoteAuthStore; clientId: string; backupSyncIntervalMs: number };

/** How the channel creates clients and polls: the real library in production, a fake in tests. */
export interface WhatsAppLibrary {
  /** A new client whose session lives in `dataPath` (LocalAuth unless `auth` says remote). */
  createClient(settings: { dataPath: string; chromiumPath: string; auth?: WhatsAppClientAuth }): WhatsAppClientPort;
  /** A single-choice poll (WhatsApp: 2–12 options). */
  createPoll(question: string, options: string[]): Poll;
  /** A media message body (whatsapp-web.js `MessageMedia`: MIME type, base64 data, file name). */
  createMedia(mimeType: string, bytes: Buffer, filename: string): MessageMedia;
}

/**
 * Chromium flags for a headless server: no sandbox (containers run as root), no GPU, and none of
 * Chromium's own background traffic (updates, sync, component downloads).
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
] as const;

/**
 * The real whatsapp-web.js: `LocalAuth` with `dataPath` (the session survives restarts and hard kills),
 * or `RemoteAuth` on the same `dataPath` with the given store when `auth.kind` is "remote"; Debian's
 * Chromium via `puppeteer.executablePath` (puppeteer's own download is skipped, see `.puppeteerrc.cjs`).
 * Loaded lazily with `require`: the package is CommonJS, and from ESM its named exports fail at run time.
 */
export function realWhatsAppLibrary(): WhatsAppLibrary {
  const wwebjs = createRequire(import.meta.url)("whatsapp-web.js") as typeof import("whatsapp-web.js");
  const { Client: WaClient, LocalAuth, RemoteAuth, Poll: WaPoll, MessageMedia: WaMedia } = wwebjs;
  return {
    createClient: ({ dataPath, chromiumPath, auth }) =>
      new WaClient({
        authStrategy:
          auth?.kind === "remote"
            ? new RemoteAuth({ store: auth.store, dataPath, clientId: auth.clientId, backupSyncIntervalMs: auth.backupSyncIntervalMs })
            : new LocalAuth({ dataPath }),
        puppeteer: { headless: true, executablePath: chromiumPath, args: [...CHROMIUM_ARGS] },
      }),
    createPoll: (question, options) => new WaPoll(question, options, { allowMultipleAnswers: false, messageSecret: undefined }),
    createMedia: (mimeType, bytes, filename) => new WaMedia(mimeType, bytes.toString("base64"), filename, bytes.length),
  };
}
