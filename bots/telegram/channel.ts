import { autoRetry } from "@grammyjs/auto-retry";
import express, { type Router } from "express";
import { timingSafeEqual } from "node:crypto";
import { Bot, GrammyError, InlineKeyboard, InputFile, webhookCallback, type Api } from "grammy";
import { boundedJson, requireContentType, type RefusalSink } from "../../web/http/index.js";
import type { Update } from "grammy/types";
import {
  DeliveryError,
  type BotAccount,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundPart,
  type RenderOptions,
  type InboundOutcome,
  type InboundSink,
  type OutboundContent,
  type OutboundAttachment,
  fileOfPart,
  isPhoto,
  sendsAsDocument,
  AttachmentError,
  formatBytes,
} from "../../core/channels/index.js";
import type { Logger } from "../../core/log/index.js";
import { KeyedQueue } from "../../core/scheduling/index.js";
import { downloadLimited } from "../shared/index.js";
import type { Button } from "../../core/channels/index.js";
import { z } from "zod";
import { isNotModified, isStaleCallback, toDeliveryError, toStartError } from "./errors.js";
import { renderTelegram, renderTelegramHtml, renderTelegramPlain, TELEGRAM_TEXT_LIMIT } from "./render.js";

/** What one rendered Telegram part carries to `sendPart`. */
interface TelegramPartBody {
  text: string;
  html: boolean;
  keyboard: InlineKeyboard | null;
}
import { ALLOWED_UPDATES, decideUpdate, type ChatPolicy } from "./inbound.js";
import { UpdatePoller, type PollerOptions, type UpdateJournal } from "./polling.js";

/** Telegram Bot API (InlineKeyboardButton): callback_data is 1–64 bytes. */
export const CALLBACK_DATA_MAX_BYTES = 64;
/** Telegram Bot API (answerCallbackQuery): the notification text is 0–200 characters. */
const CALLBACK_TEXT_MAX = 200;
/** Buttons per inline keyboard row when a card has more than three. */
const BUTTONS_PER_ROW = 2;

/** Where the webhook route is mounted: `HttpServer` fits (its `mount(router, path?)`). */
export interface WebhookMount {
  mount(router: Router, path?: string): void;
}

/** Webhook mode: Telegram posts updates to `url`; the route is served by `http`. */
export interface TelegramWebhookOptions {
  /** TELEGRAM_WEBHOOK_URL: the public https URL Telegram posts to. */
  url: string;
  /** TELEGRAM_WEBHOOK_SECRET: sent by Telegram in X-Telegram-Bot-Api-Secret-Token; a wrong one gets 401. */
  secret: string;
  /** The process's HTTP server. */
  http: WebhookMount;
  /** Local route path (default: the pathname of `url`; a reverse proxy must keep it). */
  path?: string;
  /** How long one webhook request may wait for the sink before answering 500 so Telegram redelivers, ms (default 10000). */
  timeoutMs?: number;
  /** Told about refused webhook requests (wrong secret, body too large or too deep) for the audit log. */
  onRefused?: RefusalSink;
}

/** Largest webhook body accepted, bytes (an update is a few KB; 1 MiB leaves room for long texts). */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** The least a webhook body must be before grammY handles it (Telegram Bot API: Update). */
const webhookUpdateSchema = z.looseObject({ update_id: z.number().int().nonnegative() });

/** What `createTelegramChannel` needs; the composition root fills it from settings. */
export interface TelegramChannelOptions {
  /** TELEGRAM_BOT_TOKEN. Never logged, never put in an error message. */
  token: string;
  /** TELEGRAM_API_ROOT without a trailing slash (default https://api.telegram.org). */
  apiRoot?: string;
  /** Group chat ids Familiar reads (the `telegram:` entries of ALLOW_GROUPS, without the prefix). */
  groups?: readonly string[];
  logger: Logger;
  /** Webhook mode when given; long polling otherwise. */
  webhook?: TelegramWebhookOptions;
  /** Limits of @grammyjs/auto-retry for 429 and 5xx answers (defaults: 2 retries, waits of at most 5 s). */
  retry?: { maxRetryAttempts?: number; maxDelaySeconds?: number };
  /** Long-polling tuning. */
  polling?: PollerOptions;
  /**
   * Where long polling records fetched updates before it confirms them to Telegram (the store's
   * inbound journal; see `UpdatePoller`). Unused in webhook mode, where Telegram waits for the answer.
   */
  journal: UpdateJournal;
}

/**
 * Creates the Telegram channel (grammY). Nothing is contacted before `start`.
 *
 * @example
 * const telegram = createTelegramChannel({ token: config.TELEGRAM_BOT_TOKEN, apiRoot: config.TELEGRAM_API_ROOT,
 *   groups, logger, webhook: config.TELEGRAM_WEBHOOK_URL ? { url, secret, http } : undefined });
 */
export function createTelegramChannel(options: TelegramChannelOptions): TelegramChannel {
  return new TelegramChannel(options);
}

/**
 * Familiar's Telegram adapter. Inbound: long polling (`UpdatePoller`, which confirms an update once
 * its journal holds it, and hands it to the sink again after a crash) or a webhook route (grammY's `webhookCallback`, which answers 200 once the
 * sink resolved, 401 on a wrong secret). Messages of one chat reach the sink one after another, in
 * order; button presses never wait behind them and are answered (`answerCallbackQuery`, with the
 * sink's `notice`) as soon as the sink resolved. Outbound: markdown rendered as Telegram HTML, split
 * by visible length, inline keyboard on the last part. Failed calls become `DeliveryError`s.
 */
export class TelegramChannel implements ChannelAdapter {
  readonly channel = "telegram" as const;
  private readonly bot: Bot;
  private readonly logger: Logger;
  private readonly apiRoot: string;
  private readonly groups: ReadonlySet<string>;
  private sink: InboundSink | null = null;
  private policy: ChatPolicy | null = null;
  private poller: UpdatePoller | null = null;
  /** chat id → the tail of that chat's message handling (keeps one chat's messages in order). */
  /** A chat's messages reach the core in order, even when one of them waits for a download. */
  private readonly chatOrder = new KeyedQueue();

  constructor(private readonly options: TelegramChannelOptions) {
    this.logger = options.logger;
    this.apiRoot = options.apiRoot ?? "https://api.telegram.org";
    this.groups = new Set(options.groups ?? []);
    this.bot = new Bot(options.token, { client: { apiRoot: this.apiRoot } });
    this.bot.api.config.use(
      autoRetry({
        maxRetryAttempts: options.retry?.maxRetryAttempts ?? 2,
        maxDelaySeconds: options.retry?.maxDelaySeconds ?? 5,
        // Network failures surface at once: the outbox and the poller have their own retries.
        rethrowHttpErrors: true,
      }),
    );
    this.bot.use((ctx) => this.onUpdate(ctx.update));
    if (options.webhook) this.mountWebhook(options.webhook);
  }

  /**
   * Checks the token (getMe), then sets the webhook (with `secret_token` and `allowed_updates`) or
   * deletes it and starts long polling. Throws a `ConfigError` naming TELEGRAM_BOT_TOKEN on 401/404,
   * TELEGRAM_WEBHOOK_URL when Telegram refuses the webhook, and an error naming TELEGRAM_API_ROOT
   * when the API cannot be reached.
   */
  async start(sink: InboundSink): Promise<void> {
    if (this.sink) throw new Error("telegram: the channel is already started");
    try {
      this.bot.botInfo = await this.bot.api.getMe();
    } catch (err) {
      throw toStartError(err, "getMe", this.apiRoot);
    }
    this.policy = { me: this.bot.botInfo, groups: this.groups };
    const webhook = this.options.webhook;
    try {
      if (webhook) {
        await this.bot.api.setWebhook(webhook.url, { secret_token: webhook.secret, allowed_updates: [...ALLOWED_UPDATES] });
      } else {
        await this.bot.api.deleteWebhook({ drop_pending_updates: false });
      }
    } catch (err) {
      throw toStartError(err, webhook ? "setWebhook" : "deleteWebhook", this.apiRoot);
    }
    this.sink = sink;
    if (!webhook) {
      this.poller = new UpdatePoller(this.bot.api, this.options.journal, (update) => this.bot.handleUpdate(update), this.logger, this.options.polling);
      this.poller.start();
    }
    this.logger.info({ bot: this.bot.botInfo.username, mode: webhook ? "webhook" : "polling" }, "telegram: started");
  }

  /** The bot as getMe named it: its first name, `@username` and the `https://t.me/<username>` link (null before start). */
  account(): BotAccount | null {
    if (!this.sink) return null;
    const me = this.bot.botInfo;
    return { name: me.first_name, handle: `@${me.username}`, url: `https://t.me/${me.username}` };
  }

  /** Stops polling (confirming what was handled) or makes the webhook route answer 503; the webhook stays set. */
  async stop(): Promise<void> {
    await this.poller?.stop();
    this.poller = null;
    this.sink = null;
  }

  /** Telegram offers no way to ask whether a message arrived, nor to send idempotently. */
  readonly resend = "at-most-once" as const;

  /**
   * Renders `content` as Telegram messages: rich style is the model's markdown as Telegram HTML,
   * plain style the text as typed (no parse mode); each part at most `4096 × scale` characters as
   * Telegram counts them after parsing (see `renderTelegram`), the inline keyboard on the last. No
   * parts for text with nothing visible. Throws a `payload_rejected` DeliveryError for a button id over 64 bytes.
   */
  render(content: OutboundContent, options: RenderOptions): OutboundPart[] {
    const limit = Math.max(64, Math.floor(TELEGRAM_TEXT_LIMIT * options.scale));
    const html = options.style === "rich";
    const parts = html ? renderTelegram(content.text, limit) : renderTelegramPlain(content.text, limit);
    const keyboard = inlineKeyboard(content.buttons);
    return parts.map((part, i) => {
      const last = i === parts.length - 1;
      const body: TelegramPartBody = { text: part.body, html, keyboard: last && keyboard ? keyboard : null };
      return { body, plain: part.plain, buttons: last && keyboard !== undefined };
    });
  }

  /**
   * Sends one part to the chat `target.address` (link previews off: a link in a reply must not load
   * anything by itself). Returns the message id. Throws DeliveryError as `toDeliveryError` maps Telegram's answer.
   */
  async sendPart(target: ChannelTarget, part: OutboundPart): Promise<string> {
    const file = fileOfPart(part);
    if (file) return this.sendFile(target, file, sendsAsDocument(part));
    const body = part.body as TelegramPartBody;
    try {
      const message = await this.bot.api.sendMessage(target.address, body.text, {
        ...(body.html ? { parse_mode: "HTML" as const } : {}),
        ...(body.keyboard ? { reply_markup: body.keyboard } : {}),
        link_preview_options: { is_disabled: true },
      });
      return String(message.message_id);
    } catch (err) {
      throw toDeliveryError(err, `sendMessage to chat ${target.address}`);
    }
  }

  /**
   * One attachment: photos with `sendPhoto` (Bot API: at most 10 MB; png/jpeg/gif/webp), anything
   * else — larger images, and an image the outbox asks to send as a document after Telegram refused
   * the photo — with `sendDocument` (at most 50 MB from bots).
   */
  private async sendFile(target: ChannelTarget, file: OutboundAttachment, asDocument: boolean): Promise<string> {
    const input = new InputFile(file.bytes, file.name);
    const photo = !asDocument && isPhoto(file) && file.bytes.length <= 10 * 1024 * 1024;
    try {
      const message = photo ? await this.bot.api.sendPhoto(target.address, input) : await this.bot.api.sendDocument(target.address, input);
      return String(message.message_id);
    } catch (err) {
      throw toDeliveryError(err, `${photo ? "sendPhoto" : "sendDocument"} ${file.name} to chat ${target.address}`);
    }
  }

  /**
   * Replaces the text and keyboard of the last of `platformIds` (the part that carried the buttons);
   * no buttons removes the keyboard. The new text must fit one message. "message is not modified"
   * (a repeated edit) counts as done. Throws DeliveryError like `send`.
   */
  async edit(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void> {
    const id = Number(platformIds[platformIds.length - 1]);
    if (!Number.isSafeInteger(id)) throw new DeliveryError(`telegram: edit needs a Telegram message id, got ${JSON.stringify(platformIds)}`, "payload_rejected");
    const keyboard = inlineKeyboard(content.buttons) ?? { inline_keyboard: [] };
    const parts = renderTelegramHtml(content.text);
    if (parts.length !== 1) {
      throw new DeliveryError(`telegram: an edited message must be one message of visible text; this one renders to ${parts.length} parts`, "payload_rejected");
    }
    try {
      await this.bot.api.editMessageText(target.address, id, parts[0]!, { parse_mode: "HTML", reply_markup: keyboard, link_preview_options: { is_disabled: true } });
    } catch (err) {
      if (isNotModified(err)) return;
      throw toDeliveryError(err, `editMessageText of message ${id} in chat ${target.address}`);
    }
  }

  /** Shows "typing…" in the chat (Telegram Bot API: sendChatAction lasts up to 5 s; callers renew it). */
  async typing(target: ChannelTarget): Promise<void> {
    try {
      await this.bot.api.sendChatAction(target.address, "typing");
    } catch (err) {
      throw toDeliveryError(err, `sendChatAction to chat ${target.address}`);
    }
  }

  /** One update, from either inbound mode. Throws when the sink throws (webhook: 500, Telegram redelivers). */
  private async onUpdate(update: Update): Promise<void> {
    const sink = this.sink;
    const policy = this.policy;
    if (!sink || !policy) throw new Error("telegram: update received while the channel is stopped");
    const decision = decideUpdate(update, policy, (fileId, size, maxBytes) => this.fetchFile(fileId, size, maxBytes));
    if (decision.action === "skip") {
      this.logger.debug({ updateId: update.update_id, chatId: update.message?.chat.id ?? update.callback_query?.message?.chat.id, reason: decision.reason }, "telegram: update skipped");
      if (decision.callbackQueryId) await this.answerPress(decision.callbackQueryId, undefined);
      return;
    }
    const { event, callbackQueryId } = decision;
    let outcome: InboundOutcome;
    try {
      outcome = event.kind === "press" ? await sink(event) : await this.chatOrder.run(event.address, () => sink(event));
    } catch (err) {
      this.logger.error({ err, updateId: event.updateId, kind: event.kind }, "telegram: the core could not record an update");
      throw err;
    }
    this.logger.debug({ updateId: event.updateId, kind: event.kind, status: outcome.status }, "telegram: update recorded");
    if (callbackQueryId) await this.answerPress(callbackQueryId, outcome.notice);
  }

  /**
   * Downloads a file a person sent (Telegram Bot API: getFile gives `file_path`, valid for at least
   * an hour; the bytes are at `<apiRoot>/file/bot<token>/<file_path>`; bots may download files of
   * up to 20 MB). Throws AttachmentError; messages never contain the URL (it holds the token).
   */
  private async fetchFile(fileId: string, announcedSize: number | null, maxBytes: number): Promise<Buffer> {
    if (announcedSize !== null && announcedSize > maxBytes) {
      throw new AttachmentError("too_large", `Telegram file is ${formatBytes(announcedSize)}, over the ${formatBytes(maxBytes)} limit`, { size: announcedSize, limit: maxBytes });
    }
    let file: Awaited<ReturnType<Api["getFile"]>>;
    try {
      file = await this.bot.api.getFile(fileId);
    } catch (err) {
      if (err instanceof GrammyError && /file is too big/i.test(err.description)) {
        throw new AttachmentError("too_large", `Telegram file is over the 20 MB bots may download`, { limit: maxBytes });
      }
      throw new AttachmentError("download_failed", `Telegram getFile failed: ${err instanceof GrammyError ? `${err.error_code} ${err.description}` : err instanceof Error ? err.message : String(err)}`);
    }
    if (!file.file_path) throw new AttachmentError("unavailable", "Telegram gave no file_path for this file");
    const path = file.file_path.split("/").map(encodeURIComponent).join("/");
    return downloadLimited(`${this.apiRoot}/file/bot${this.options.token}/${path}`, { maxBytes, what: "Telegram file", announcedSize: file.file_size ?? null });
  }

  /** Answers a press (stops the button's spinner, shows `notice`); failures are logged, never thrown. */
  private async answerPress(callbackQueryId: string, notice: string | undefined): Promise<void> {
    try {
      await this.bot.api.answerCallbackQuery(callbackQueryId, notice ? { text: notice.slice(0, CALLBACK_TEXT_MAX) } : undefined);
    } catch (err) {
      if (isStaleCallback(err)) this.logger.warn({ err, callbackQueryId }, "telegram: press answered too late (query is too old); the decision still stands");
      else this.logger.error({ err, callbackQueryId }, "telegram: answerCallbackQuery failed");
    }
  }

  private mountWebhook(webhook: TelegramWebhookOptions): void {
    const callback = webhookCallback(this.bot, "express", {
      secretToken: webhook.secret,
      onTimeout: "throw",
      timeoutMilliseconds: webhook.timeoutMs ?? 10_000,
    });
    const router = express.Router();
    const source = "telegram";
    const expected = Buffer.from(webhook.secret, "utf8");
    // The secret header is checked before a byte of the body is read; the body is then read with a
    // limit and its JSON depth bounded before grammY parses it.
    const secretFirst = (req: express.Request, res: express.Response, next: express.NextFunction) => {
      const given = Buffer.from(req.get("x-telegram-bot-api-secret-token") ?? "", "utf8");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        webhook.onRefused?.({ source, reason: "bad_signature", detail: "wrong or missing X-Telegram-Bot-Api-Secret-Token" });
        res.set("Connection", "close").status(401).json({ error: "wrong secret token" });
        return;
      }
      next();
    };
    router.post(
      webhook.path ?? new URL(webhook.url).pathname,
      secretFirst,
      requireContentType("application/json", { source, ...(webhook.onRefused && { onRefused: webhook.onRefused }) }),
      ...boundedJson({ limit: WEBHOOK_BODY_LIMIT, source, ...(webhook.onRefused && { onRefused: webhook.onRefused }) }),
      async (req, res) => {
        if (!webhookUpdateSchema.safeParse(req.body).success) {
          webhook.onRefused?.({ source, reason: "bad_json", detail: "the body is not a Telegram Update (an object with an integer update_id)" });
          res.status(400).json({ error: "The request body is not a Telegram Update: an object with an integer update_id." });
          return;
        }
        if (!this.sink) {
          res.status(503).json({ error: "the Telegram channel is not started" });
          return;
        }
        await callback(req, res);
      },
    );
    webhook.http.mount(router);
  }
}

/**
 * The inline keyboard for `buttons` (one row for up to three, else rows of two), or undefined for
 * none. Throws a permanent DeliveryError for an id Telegram would refuse: callback_data must be
 * 1–64 bytes of UTF-8 (Telegram Bot API: InlineKeyboardButton; grammY does not check it and Telegram
 * answers BUTTON_DATA_INVALID), and a label must not be empty.
 */
export function inlineKeyboard(buttons: readonly Button[]): InlineKeyboard | undefined {
  if (buttons.length === 0) return undefined;
  for (const button of buttons) {
    const bytes = Buffer.byteLength(button.id, "utf8");
    if (bytes < 1 || bytes > CALLBACK_DATA_MAX_BYTES) {
      throw new DeliveryError(`telegram: button id ${JSON.stringify(button.id)} is ${bytes} bytes; Telegram's callback_data takes 1–${CALLBACK_DATA_MAX_BYTES} bytes`, "payload_rejected");
    }
    if (button.label.trim() === "") throw new DeliveryError(`telegram: button ${JSON.stringify(button.id)} has an empty label`, "payload_rejected");
  }
  const perRow = buttons.length <= 3 ? buttons.length : BUTTONS_PER_ROW;
  const rows: InlineKeyboard["inline_keyboard"] = [];
  for (let i = 0; i < buttons.length; i += perRow) {
    rows.push(buttons.slice(i, i + perRow).map((b) => InlineKeyboard.text(b.label, b.id)));
  }
  return InlineKeyboard.from(rows);
}
