import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { MessageMedia, Poll } from "whatsapp-web.js";
import type { WaMessage, WhatsAppClientPort, WhatsAppLibrary } from "../../bots/whatsapp/port.js";

/**
 * A fake whatsapp-web.js for tests: clients that emit the library's events (`qr`, `authenticated`,
 * `ready`, `auth_failure`, `disconnected`, `message`, `vote_update`) when the test says so and record
 * every call. `pair()` emulates LocalAuth by writing the session directory under `dataPath`, as the
 * real Chromium profile would. Polls are the library's own `Poll` structure (plain data, no browser).
 *
 * Media: `receiveMedia` emits a media message whose `downloadMedia` fetches the bytes from a
 * loopback HTTP server of the client (as WhatsApp Web downloads them from WhatsApp's media servers)
 * and returns them base64-encoded with the MIME type and file name; `expired` media (gone from the
 * phone) makes it return undefined. Downloads are recorded in `mediaDownloads`.
 */

const PollClass = createRequire(import.meta.url)("whatsapp-web.js/src/structures/Poll.js") as typeof Poll;
const MediaClass = createRequire(import.meta.url)("whatsapp-web.js/src/structures/MessageMedia.js") as typeof MessageMedia;

export const OWN_ID = "15550009999@c.us";

export interface SentRecord {
  id: string;
  chatId: string;
  content: string | Poll | MessageMedia;
  options?: { quotedMessageId?: string; linkPreview?: boolean; sendMediaAsDocument?: boolean };
}

let counter = 0;
const nextId = (chat: string): string => `true_${chat}_3EB0${(++counter).toString(16).padStart(8, "0")}`;

export class FakeWhatsAppClient extends EventEmitter implements WhatsAppClientPort {
  info = { wid: { _serialized: OWN_ID } };
  readonly sent: SentRecord[] = [];
  readonly edits: { id: string; content: string; options?: { linkPreview?: boolean } }[] = [];
  readonly typing: string[] = [];
  initialized = false;
  destroyed = false;
  /** Makes `initialize()` fail (e.g. Chromium missing). */
  initializeError: Error | null = null;
  /** Makes the next `sendMessage` fail with this error. */
  sendError: Error | null = null;
  /** Whether `message.edit` applies (WhatsApp: only within 15 minutes). */
  editable = true;
  readonly lids = new Map<string, string>();
  /** Ids of media messages whose media was downloaded, in order. */
  readonly mediaDownloads: string[] = [];
  private mediaServer: Server | null = null;
  private readonly media = new Map<string, Buffer>();
  private readonly expired = new Set<string>();

  constructor(readonly settings: { dataPath: string; chromiumPath: string }) {
    super();
  }

  async initialize(): Promise<void> {
    this.initialized = true;
    if (this.initializeError) throw this.initializeError;
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    const server = this.mediaServer;
    this.mediaServer = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async sendMessage(chatId: string, content: string | Poll | MessageMedia, options?: SentRecord["options"]): Promise<{ id: { _serialized: string } }> {
    if (this.sendError) {
      const err = this.sendError;
      this.sendError = null;
      throw err;
    }
    const id = nextId(chatId);
    this.sent.push({ id, chatId, content, ...(options ? { options } : {}) });
    return { id: { _serialized: id } };
  }

  async getChatById(chatId: string): Promise<{ sendStateTyping(): Promise<void> }> {
    return { sendStateTyping: async () => void this.typing.push(chatId) };
  }

  async getMessageById(messageId: string): Promise<WaMessage | null> {
    const sent = this.sent.find((s) => s.id === messageId);
    if (!sent) return null;
    return this.message({ id: messageId, from: OWN_ID, body: typeof sent.content === "string" ? sent.content : "", fromMe: true });
  }

  async getContactLidAndPhone(userIds: string[]): Promise<{ lid: string; pn: string }[]> {
    return userIds.flatMap((lid) => (this.lids.has(lid) ? [{ lid, pn: this.lids.get(lid)! }] : []));
  }

  /** Emulates LocalAuth after a scan or a restored session: writes the profile, then authenticated + ready. */
  pair(): void {
    mkdirSync(join(this.settings.dataPath, "session", "Default"), { recursive: true });
    this.emit("authenticated");
    this.emit("ready");
  }

  /** An incoming text message. */
  receive(from: string, body: string, extra: Partial<{ author: string; mentionedIds: string[]; pushname: string }> = {}): string {
    const id = `false_${from}_${(++counter).toString(16).toUpperCase()}`;
    this.emit("message", this.message({ id, from, body, fromMe: false, ...extra }));
    return id;
  }

  /**
   * An incoming media message (`type`: image, ptt, audio, video, document, sticker) with `caption`
   * as its body; `rawSize` overrides the size WhatsApp Web reports before download; `expired`
   * makes `downloadMedia` answer undefined (media gone from the phone).
   */
  async receiveMedia(from: string, media: { type: string; mimetype: string; bytes: Buffer; filename?: string; caption?: string; duration?: number; rawSize?: number; expired?: boolean }): Promise<string> {
    const id = `false_${from}_${(++counter).toString(16).toUpperCase()}`;
    if (media.expired) this.expired.add(id);
    const url = await this.serveMedia(id, media.bytes);
    const message: WaMessage = {
      ...this.message({ id, from, body: media.caption ?? "", fromMe: false }),
      type: media.type,
      hasMedia: true,
      ...(media.duration !== undefined ? { duration: String(media.duration) } : {}),
      rawData: { size: media.rawSize ?? media.bytes.length, mimetype: media.mimetype, ...(media.filename ? { filename: media.filename } : {}) },
      downloadMedia: async () => {
        if (this.expired.has(id)) return undefined;
        const res = await fetch(url);
        if (!res.ok) return undefined;
        this.mediaDownloads.push(id);
        return { mimetype: media.mimetype, data: Buffer.from(await res.arrayBuffer()).toString("base64"), filename: media.filename ?? null, filesize: media.bytes.length };
      },
    };
    this.emit("message", message);
    return id;
  }

  private async serveMedia(id: string, bytes: Buffer): Promise<string> {
    if (!this.mediaServer) {
      const server = createServer((req, res) => {
        const body = this.media.get(decodeURIComponent((req.url ?? "").slice(1)));
        if (!body) return void res.writeHead(404).end();
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length }).end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      server.unref();
      this.mediaServer = server;
    }
    this.media.set(id, bytes);
    return `http://127.0.0.1:${(this.mediaServer.address() as AddressInfo).port}/${encodeURIComponent(id)}`;
  }

  /** A poll vote: the voter's whole current selection (option localIds). */
  vote(pollId: string, voter: string, selected: number[], at = Date.now()): void {
    const poll = this.sent.find((s) => s.id === pollId)?.content as Poll | undefined;
    this.emit("vote_update", {
      voter,
      selectedOptions: selected.map((id) => ({ id, name: poll?.pollOptions[id]?.name ?? "" })),
      interractedAtTs: at,
      parentMessage: { id: { _serialized: pollId } },
    });
  }

  private message(m: { id: string; from: string; body: string; fromMe: boolean; author?: string; mentionedIds?: string[]; pushname?: string }): WaMessage {
    return {
      id: { _serialized: m.id },
      from: m.from,
      ...(m.author ? { author: m.author } : {}),
      body: m.body,
      fromMe: m.fromMe,
      timestamp: Math.floor(Date.now() / 1000),
      type: "chat",
      hasMedia: false,
      downloadMedia: async () => undefined,
      mentionedIds: m.mentionedIds ?? [],
      getContact: async () => ({ pushname: m.pushname ?? "Ada" }),
      edit: async (content: string, options?: { linkPreview?: boolean }) => {
        if (!this.editable) return null;
        this.edits.push({ id: m.id, content, ...(options && { options }) });
        return {};
      },
    };
  }
}

/** The fake library: every client it created, newest last. */
export class FakeWhatsAppLibrary implements WhatsAppLibrary {
  readonly clients: FakeWhatsAppClient[] = [];
  /** Applied to each new client before the channel sees it. */
  constructor(private readonly configure: (client: FakeWhatsAppClient, index: number) => void = () => undefined) {}

  createClient(settings: { dataPath: string; chromiumPath: string }): FakeWhatsAppClient {
    const client = new FakeWhatsAppClient(settings);
    this.configure(client, this.clients.length);
    this.clients.push(client);
    return client;
  }

  createPoll(question: string, options: string[]): Poll {
    return new PollClass(question, options, { allowMultipleAnswers: false, messageSecret: undefined });
  }

  createMedia(mimeType: string, bytes: Buffer, filename: string): MessageMedia {
    return new MediaClass(mimeType, bytes.toString("base64"), filename, bytes.length);
  }

  get last(): FakeWhatsAppClient {
    const client = this.clients.at(-1);
    if (!client) throw new Error("fake whatsapp: no client created yet");
    return client;
  }
}
