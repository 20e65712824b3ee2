import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { performance } from "node:perf_hooks";
import express, { type Request, type Response } from "express";
import type { Update } from "grammy/types";
import { parseTelegramHtml } from "./telegram-html.js";

/**
 * A fake Telegram Bot API on 127.0.0.1 (random port) for driving the real grammY client over HTTP.
 * Serves `POST /bot<token>/<method>` for getMe, getUpdates (offset confirmation and long-poll
 * timeout; a newer call ends an older waiting one with 409, as Telegram does), setWebhook,
 * deleteWebhook, sendMessage and editMessageText (HTML parsed strictly by `parseTelegramHtml`,
 * visible length ≤ 4096 UTF-16 code units after trimming, callback_data 1–64 bytes),
 * answerCallbackQuery and sendChatAction. Every call is recorded; errors can be scripted per
 * method and chat. A wrong token gets 401 "Unauthorized".
 *
 * Files: `addFile` stores bytes under a new `file_id`; getFile answers its `file_path` (400 "file is
 * too big" above 20 MB, as Telegram does for bots) and `GET /file/bot<token>/<file_path>` serves the
 * bytes over loopback HTTP (404 for a wrong token or path). Downloads are recorded in `downloads`.
 */

export interface RecordedCall {
  method: string;
  payload: Record<string, unknown>;
  /** Date.now() when the request arrived. */
  at: number;
}

/** A message the fake accepted (sent or edited). `text` is what the person sees. */
export interface FakeMessage {
  chatId: string;
  messageId: number;
  html: string;
  text: string;
  replyMarkup: { inline_keyboard: { text: string; callback_data?: string }[][] } | null;
  at: number;
}

/** A file the fake received with sendPhoto / sendDocument (multipart/form-data, as grammY sends InputFile). */
export interface FakeFile {
  method: "sendPhoto" | "sendDocument";
  chatId: string;
  messageId: number;
  /** The multipart field's file name. */
  name: string;
  bytes: Buffer;
}

/** A Bot API error answer (`ok: false`). */
export interface ApiErrorAnswer {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

interface ScriptedError {
  method: string;
  chatId: string | null;
  remaining: number;
  error: ApiErrorAnswer;
}

export const FAKE_BOT = { id: 777000, is_bot: true as const, first_name: "Familiar", username: "familiar_test_bot" };
/** Telegram Bot API: getFile works for files of up to 20 MB. */
export const BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/** A file a person sent, as the fake holds it and update bodies reference it. */
export interface FakeInboundFile {
  file_id: string;
  file_unique_id: string;
  file_size: number;
  file_path: string;
}
export const TEXT_LIMIT = 4096;

export class FakeTelegramApi {
  readonly calls: RecordedCall[] = [];
  readonly messages: FakeMessage[] = [];
  readonly files: FakeFile[] = [];
  webhook: { url: string; secretToken: string | null; allowedUpdates: unknown } | null = null;
  /**
   * Answer getUpdates at once even when nothing is queued, ignoring its `timeout` (as a Bot API
   * server without long polling, or a proxy in front of one, does).
   */
  answerAtOnce = false;
  private queue: Update[] = [];
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private readonly errors: ScriptedError[] = [];
  private waiter: { wake: (result: "update" | "conflict" | "closed") => void } | null = null;
  private readonly inboundFiles = new Map<string, { file: FakeInboundFile; bytes: Buffer }>();
  private nextFile = 1;
  /** `file_path`s downloaded through `/file/bot<token>/…`, in order. */
  readonly downloads: string[] = [];
  /** Requests for files that arrived (whether answered yet or not). */
  fileRequests = 0;
  /** While set, file downloads wait for it (a slow download, to kill a process in the middle). */
  private stall: Promise<void> | null = null;
  /** update_id → `performance.now()` when `push` queued it. */
  readonly pushedAt = new Map<number, number>();
  /** update_id → `performance.now()` when a getUpdates answer first carried it (the update was fetched). */
  readonly fetchedAt = new Map<number, number>();
  /** update_id → how many getUpdates answers carried it (more than 1: fetched again, unconfirmed). */
  readonly fetchCount = new Map<number, number>();

  private constructor(
    private readonly server: Server,
    readonly token: string,
  ) {}

  /** Starts the fake on 127.0.0.1 with a random port; `token` is the only one accepted. */
  static async start(token = "123456:TEST-token_abcdefghij"): Promise<FakeTelegramApi> {
    const app = express();
    const server = createServer(app);
    const fake = new FakeTelegramApi(server, token);
    app.post("/bot:token/:method", express.json({ limit: "5mb" }), (req, res, next) => fake.serve(req, res).catch(next));
    app.get("/file/:token/*path", (req, res, next) => fake.download(req, res).catch(next));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return fake;
  }

  /** The API root to give grammY (`client.apiRoot`). */
  get apiRoot(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stores a file (as if a person had sent it) and returns how updates reference it. `name` becomes the path's last part. */
  addFile(bytes: Buffer, name = "file.bin"): FakeInboundFile {
    const n = this.nextFile++;
    const file: FakeInboundFile = { file_id: `FILE${n}-${bytes.length}`, file_unique_id: `U${n}`, file_size: bytes.length, file_path: `documents/${n}/${name}` };
    this.inboundFiles.set(file.file_id, { file, bytes });
    return file;
  }

  /** Makes file downloads wait until the returned function is called. */
  stallDownloads(): () => void {
    let release!: () => void;
    this.stall = new Promise<void>((r) => (release = r));
    return () => {
      this.stall = null;
      release();
    };
  }

  /** Queues an update for getUpdates (assigning the next update_id) and returns it. */
  push(update: Omit<Update, "update_id">): Update {
    const full = { ...update, update_id: this.nextUpdateId++ };
    this.pushedAt.set(full.update_id, performance.now());
    this.queue.push(full);
    this.waiter?.wake("update");
    return full;
  }

  /** Builds an update body without queueing it (for webhook posts). */
  build(update: Omit<Update, "update_id">): Update {
    return { ...update, update_id: this.nextUpdateId++ };
  }

  /** The next `times` calls of `method` (for `chatId`, or any chat when null) answer `error`. */
  failNext(method: string, error: ApiErrorAnswer, options: { chatId?: string; times?: number } = {}): void {
    this.errors.push({ method, chatId: options.chatId ?? null, remaining: options.times ?? 1, error });
  }

  /** Recorded calls of one method. */
  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** The highest offset any getUpdates call confirmed (0: none). */
  get confirmedOffset(): number {
    return Math.max(0, ...this.callsOf("getUpdates").map((c) => Number(c.payload.offset ?? 0)));
  }

  /** Resolves once `predicate` holds (checked every 10 ms); rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > until) throw new Error(`fake Telegram: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    this.waiter?.wake("closed");
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async serve(req: Request, res: Response): Promise<void> {
    const method = String(req.params.method);
    const upload = /^multipart\/form-data/i.test(req.headers["content-type"] ?? "") ? await readMultipart(req) : null;
    const payload = upload ? upload.fields : ((req.body ?? {}) as Record<string, unknown>);
    this.calls.push({ method, payload, at: Date.now() });
    const answer = (result: unknown) => res.json({ ok: true, result });
    const refuse = (error: ApiErrorAnswer) => res.status(error.error_code).json({ ok: false, ...error });
    if (req.params.token !== `bot${this.token}` && req.params.token !== this.token) return void refuse({ error_code: 401, description: "Unauthorized" });
    const chatId = payload.chat_id === undefined ? null : String(payload.chat_id);
    const scripted = this.errors.find((e) => e.method === method && e.remaining > 0 && (e.chatId === null || e.chatId === chatId));
    if (scripted) {
      scripted.remaining--;
      return void refuse(scripted.error);
    }
    switch (method) {
      case "getMe":
        return void answer(FAKE_BOT);
      case "setWebhook":
        this.webhook = { url: String(payload.url), secretToken: (payload.secret_token as string | undefined) ?? null, allowedUpdates: payload.allowed_updates };
        return void answer(true);
      case "deleteWebhook":
        this.webhook = null;
        return void answer(true);
      case "getUpdates":
        return this.getUpdates(payload, res);
      case "sendMessage":
      case "editMessageText":
        return void this.message(method, chatId ?? "", payload, answer, refuse);
      case "answerCallbackQuery":
        if (typeof payload.text === "string" && payload.text.length > 200) return void refuse({ error_code: 400, description: "Bad Request: MESSAGE_TOO_LONG" });
        return void answer(true);
      case "sendChatAction":
        return void answer(true);
      case "getFile": {
        const stored = this.inboundFiles.get(String(payload.file_id ?? ""));
        if (!stored) return void refuse({ error_code: 400, description: "Bad Request: invalid file_id" });
        if (stored.file.file_size > BOT_DOWNLOAD_LIMIT) return void refuse({ error_code: 400, description: "Bad Request: file is too big" });
        return void answer(stored.file);
      }
      case "sendPhoto":
      case "sendDocument": {
        // Bot API: photo ≤ 10 MB, document ≤ 50 MB when sent by a bot.
        const field = method === "sendPhoto" ? "photo" : "document";
        const file = upload?.files.get(String(payload[field] ?? "").replace(/^attach:\/\//, "")) ?? upload?.files.get(field);
        if (!file) return void refuse({ error_code: 400, description: `Bad Request: there is no ${field} in the request` });
        if (file.bytes.length > (method === "sendPhoto" ? 10 : 50) * 1024 * 1024) return void refuse({ error_code: 400, description: "Bad Request: file is too big" });
        const messageId = this.nextMessageId++;
        this.files.push({ method, chatId: chatId ?? "", messageId, name: file.name, bytes: file.bytes });
        return void answer({ message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: Number(chatId), type: "private" } });
      }
      default:
        return void refuse({ error_code: 404, description: "Not Found" });
    }
  }

  private async download(req: Request, res: Response): Promise<void> {
    this.fileRequests++;
    if (this.stall) await this.stall;
    if (res.destroyed) return;
    const parts = req.params.path;
    const path = (Array.isArray(parts) ? parts : [String(parts)]).join("/");
    const stored = [...this.inboundFiles.values()].find((f) => f.file.file_path === path);
    if (req.params.token !== `bot${this.token}` || !stored) {
      res.status(404).json({ ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    this.downloads.push(path);
    res.status(200).type("application/octet-stream").send(stored.bytes);
  }

  private async getUpdates(payload: Record<string, unknown>, res: Response): Promise<void> {
    if (this.webhook) {
      res.status(409).json({ ok: false, error_code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first" });
      return;
    }
    const offset = Number(payload.offset ?? 0);
    if (offset > 0) this.queue = this.queue.filter((u) => u.update_id >= offset);
    const limit = Number(payload.limit ?? 100);
    const timeoutMs = Number(payload.timeout ?? 0) * 1000;
    this.waiter?.wake("conflict");
    if (this.queue.length === 0 && timeoutMs > 0 && !this.answerAtOnce) {
      const outcome = await new Promise<"update" | "conflict" | "closed" | "timeout">((resolve) => {
        const timer = setTimeout(() => resolve("timeout"), timeoutMs);
        const waiter = {
          wake: (result: "update" | "conflict" | "closed") => {
            clearTimeout(timer);
            if (this.waiter === waiter) this.waiter = null;
            resolve(result);
          },
        };
        this.waiter = waiter;
        res.once("close", () => waiter.wake("closed"));
      });
      if (outcome === "closed") return;
      if (outcome === "conflict") {
        res.status(409).json({ ok: false, error_code: 409, description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" });
        return;
      }
    }
    const batch = this.queue.slice(0, limit);
    const now = performance.now();
    for (const u of batch) {
      if (!this.fetchedAt.has(u.update_id)) this.fetchedAt.set(u.update_id, now);
      this.fetchCount.set(u.update_id, (this.fetchCount.get(u.update_id) ?? 0) + 1);
    }
    res.json({ ok: true, result: batch });
  }

  private message(
    method: string,
    chatId: string,
    payload: Record<string, unknown>,
    answer: (result: unknown) => void,
    refuse: (error: ApiErrorAnswer) => void,
  ): void {
    const html = String(payload.text ?? "");
    const parsed = payload.parse_mode === "HTML" ? parseTelegramHtml(html) : { ok: true as const, text: html };
    if (!parsed.ok) return refuse({ error_code: 400, description: parsed.error });
    const text = parsed.text.trim();
    if (text.length === 0) return refuse({ error_code: 400, description: "Bad Request: message text is empty" });
    if (text.length > TEXT_LIMIT) return refuse({ error_code: 400, description: "Bad Request: message is too long" });
    const replyMarkup = (payload.reply_markup as FakeMessage["replyMarkup"] | undefined) ?? null;
    for (const row of replyMarkup?.inline_keyboard ?? []) {
      for (const button of row) {
        const bytes = Buffer.byteLength(button.callback_data ?? "", "utf8");
        if (bytes < 1 || bytes > 64) return refuse({ error_code: 400, description: "Bad Request: BUTTON_DATA_INVALID" });
      }
    }
    const chat = { id: Number(chatId), type: Number(chatId) < 0 ? "supergroup" : "private" };
    if (method === "editMessageText") {
      const existing = this.messages.find((m) => m.chatId === chatId && m.messageId === Number(payload.message_id));
      if (!existing) return refuse({ error_code: 400, description: "Bad Request: message to edit not found" });
      if (existing.html === html && JSON.stringify(existing.replyMarkup) === JSON.stringify(replyMarkup)) {
        return refuse({ error_code: 400, description: "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message" });
      }
      Object.assign(existing, { html, text, replyMarkup, at: Date.now() });
      return answer({ message_id: existing.messageId, date: Math.floor(Date.now() / 1000), chat, text });
    }
    const message: FakeMessage = { chatId, messageId: this.nextMessageId++, html, text, replyMarkup, at: Date.now() };
    this.messages.push(message);
    answer({ message_id: message.messageId, date: Math.floor(Date.now() / 1000), chat, text });
  }
}

/** Update bodies as Telegram sends them. */
export const updates = {
  /** A text message in a private chat (chat id = user id) or, with `chatId`, in a group. */
  text(from: number, text: string, options: { chatId?: number; entities?: unknown[]; name?: string; languageCode?: string } = {}): Omit<Update, "update_id"> {
    const chatId = options.chatId ?? from;
    return {
      message: {
        message_id: Math.floor(Math.random() * 1e6),
        date: Math.floor(Date.now() / 1000),
        chat: chatId < 0 ? { id: chatId, type: "supergroup", title: "Team" } : { id: chatId, type: "private", first_name: options.name ?? "Ana" },
        from: { id: from, is_bot: false, first_name: options.name ?? "Ana", ...(options.languageCode ? { language_code: options.languageCode } : {}) },
        text,
        ...(options.entities ? { entities: options.entities } : {}),
      },
    } as Omit<Update, "update_id">;
  },
  /**
   * A message carrying files: `photo` (PhotoSize list, smallest first), `voice`, `document`,
   * `sticker`, `audio`, `video` — whatever `media` holds — with an optional caption.
   */
  media(from: number, media: Record<string, unknown>, options: { caption?: string; chatId?: number; captionEntities?: unknown[] } = {}): Omit<Update, "update_id"> {
    const chatId = options.chatId ?? from;
    return {
      message: {
        message_id: Math.floor(Math.random() * 1e6),
        date: Math.floor(Date.now() / 1000),
        chat: chatId < 0 ? { id: chatId, type: "supergroup", title: "Team" } : { id: chatId, type: "private", first_name: "Ana" },
        from: { id: from, is_bot: false, first_name: "Ana" },
        ...media,
        ...(options.caption !== undefined ? { caption: options.caption } : {}),
        ...(options.captionEntities ? { caption_entities: options.captionEntities } : {}),
      },
    } as Omit<Update, "update_id">;
  },
  /** A photo as Telegram sends it: two sizes of the same picture (`small`, then `large`). */
  photo(from: number, small: FakeInboundFile, large: FakeInboundFile, caption?: string): Omit<Update, "update_id"> {
    const size = (f: FakeInboundFile, w: number) => ({ file_id: f.file_id, file_unique_id: f.file_unique_id, file_size: f.file_size, width: w, height: w });
    return updates.media(from, { photo: [size(small, 90), size(large, 1280)] }, caption === undefined ? {} : { caption });
  },
  /** A voice note (OGG/Opus) of `duration` seconds. */
  voice(from: number, file: FakeInboundFile, duration = 3): Omit<Update, "update_id"> {
    return updates.media(from, { voice: { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.file_size, duration, mime_type: "audio/ogg" } });
  },
  /** A document with its file name and MIME type. */
  document(from: number, file: FakeInboundFile, name: string, mime: string, caption?: string): Omit<Update, "update_id"> {
    return updates.media(from, { document: { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.file_size, file_name: name, mime_type: mime } }, caption === undefined ? {} : { caption });
  },
  /** A sticker standing for `emoji`. */
  sticker(from: number, emoji: string): Omit<Update, "update_id"> {
    return updates.media(from, { sticker: { file_id: "STICKER1", file_unique_id: "S1", type: "regular", width: 512, height: 512, is_animated: false, is_video: false, emoji, set_name: "Cats" } });
  },
  /** A press of an inline keyboard button with `data` on message `messageId`. */
  press(from: number, data: string, options: { chatId?: number; messageId?: number; queryId?: string } = {}): Omit<Update, "update_id"> {
    const chatId = options.chatId ?? from;
    return {
      callback_query: {
        id: options.queryId ?? `q${Math.floor(Math.random() * 1e9)}`,
        from: { id: from, is_bot: false, first_name: "Ana" },
        chat_instance: "ci",
        data,
        message: {
          message_id: options.messageId ?? 1,
          date: Math.floor(Date.now() / 1000),
          chat: chatId < 0 ? { id: chatId, type: "supergroup", title: "Team" } : { id: chatId, type: "private", first_name: "Ana" },
          text: "card",
        },
      },
    };
  },
};

/** Parses a multipart/form-data request (grammY's InputFile uploads) into string fields and files. */
async function readMultipart(req: Request): Promise<{ fields: Record<string, unknown>; files: Map<string, { name: string; bytes: Buffer }> }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const boundary = /boundary="?([^";]+)"?/i.exec(String(req.headers["content-type"]))?.[1];
  const fields: Record<string, unknown> = {};
  const files = new Map<string, { name: string; bytes: Buffer }>();
  if (!boundary) return { fields, files };
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next === -1) break;
    const part = body.subarray(at + delimiter.length, next);
    at = next;
    const headEnd = part.indexOf("\r\n\r\n");
    if (headEnd === -1) continue;
    const head = part.subarray(0, headEnd).toString("utf8");
    let content = part.subarray(headEnd + 4);
    if (content.subarray(-2).toString() === "\r\n") content = content.subarray(0, -2);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) continue;
    // grammY writes `filename=name` unquoted; browsers quote it.
    const filename = /filename="([^"]*)"/i.exec(head)?.[1] ?? /filename=([^;\r\n]*)/i.exec(head)?.[1];
    if (filename !== undefined) files.set(name, { name: filename, bytes: Buffer.from(content) });
    else fields[name] = content.toString("utf8");
  }
  return { fields, files };
}
