import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { MessageMedia, Poll } from "whatsapp-web.js";
import type { WaMessage, WhatsAppClientPort, WhatsAppLibrary } from "../../bots/whatsapp/port.js";

/**
 * A fake whatsapp-web.js for tests: clients that emit the library's events (`qr`, `authenticated`,
 * `ready`, `auth_failure`, `disconnected`, `message`, `vote_update`) when the test says so and record
 * every call. `pair()` emulates LocalAuth by writing the session directory under `dataPath`, as the
 * real Chromium profile would. Polls are the library's own `Poll` structure (plain data, no browser).
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
  readonly edits: { id: string; content: string }[] = [];
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

  constructor(readonly settings: { dataPath: string; chromiumPath: string }) {
    super();
  }

  async initialize(): Promise<void> {
    this.initialized = true;
    if (this.initializeError) throw this.initializeError;
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
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
      mentionedIds: m.mentionedIds ?? [],
      getContact: async () => ({ pushname: m.pushname ?? "Ada" }),
      edit: async (content: string) => {
        if (!this.editable) return null;
        this.edits.push({ id: m.id, content });
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
