import { existsSync } from "node:fs";
import { join } from "node:path";
import qrcode from "qrcode-terminal";
import {
  DeliveryError,
  type BotAccount,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundPart,
  type RenderOptions,
  type InboundEvent,
  type InboundSink,
  type OutboundContent,
  fileOfPart,
  isPhoto,
} from "../../core/channels/index.js";
import { clientAuth } from "./auth.js";
import { CardBook, numberedHint, pollOptions, POLL_MAX_OPTIONS, POLL_MIN_OPTIONS, pollQuestion } from "./cards.js";
import { renderWhatsApp, renderWhatsAppMessages, renderWhatsAppPlain, WHATSAPP_MESSAGE_LIMIT } from "./render.js";
import { messageEvent, voteEvents, type InboundContext } from "./inbound.js";
import type { Button } from "../../core/channels/index.js";

/** What one rendered WhatsApp part carries to `sendPart`: a text, or a card's poll; `buttons` register the card. */
interface WhatsAppPartBody {
  kind: "text" | "poll";
  text: string;
  buttons: Button[];
}
import {
  realWhatsAppLibrary,
  type WaMessage,
  type WaPollVote,
  type WhatsAppClientAuth,
  type WhatsAppClientPort,
  type WhatsAppLibrary,
} from "./port.js";
import { remoteSessionName } from "./remote-store.js";
import type { WhatsAppChannelOptions, WhatsAppState } from "./options.js";

export type { WhatsAppChannelOptions, WhatsAppState } from "./options.js";

/**
 * WhatsApp through whatsapp-web.js (WhatsApp Web in Chromium; LocalAuth session under DATA_DIR, or
 * RemoteAuth backed up to MongoDB GridFS and unpacked under DATA_DIR).
 *
 * Inbound: a text or media message from a person (or a mention in an ALLOW_GROUPS group) →
 * `InboundMessage` (media as an attachment fetched with `downloadMedia`, the caption as text)
 * with `updateId` = the message id; `accountId` is the phone number in E.164 (`+15550001`), mapped
 * from `…@lid` senders through `getContactLidAndPhone` where WhatsApp knows it (else the raw id).
 * Buttons are a native poll plus a numbered-reply line; a newly selected option or a numeric reply to
 * the chat's latest open card becomes an `InboundPress`.
 *
 * Session: a saved session comes back without a QR. A QR although a session existed, `auth_failure`
 * or a logout calls `onSessionInvalid` once and stops; other disconnects restart with bounded backoff
 * and give up after `maxRestarts`. Nothing is ever thrown out of an event handler.
 */
export class WhatsAppChannel implements ChannelAdapter {
  readonly channel = "whatsapp" as const;
  private readonly library: WhatsAppLibrary;
  private readonly groups: ReadonlySet<string>;
  private readonly auth: WhatsAppClientAuth;
  private readonly cards = new CardBook();
  private client: WhatsAppClientPort | null = null;
  private sink: InboundSink | null = null;
  private qr: string | null = null;
  private status: WhatsAppState = "stopped";
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private invalidReported = false;
  private sessionSeen = false;
  /** Inbound handling runs one event at a time, so async look-ups never reorder a chat's messages. */
  private inbound: Promise<void> = Promise.resolve();

  /** @throws ConfigError when a RemoteAuth `backupSyncIntervalMs` is under 60,000 ms. */
  constructor(private readonly options: WhatsAppChannelOptions) {
    this.library = options.library ?? realWhatsAppLibrary();
    this.groups = new Set(options.groups ?? []);
    this.auth = clientAuth(options.auth ?? { kind: "local" }, this.dataPath);
  }

  /** The auth `dataPath`, `DATA_DIR/whatsapp-session`: LocalAuth's `session/`, RemoteAuth's `RemoteAuth-familiar/` and `.zip`. */
  get dataPath(): string {
    return join(this.options.dataDir, "whatsapp-session");
  }

  /** Where the session is kept: "local" (LocalAuth, DATA_DIR only) or "remote" (RemoteAuth, MongoDB GridFS). */
  get authKind(): "local" | "remote" {
    return this.auth.kind;
  }

  /** The QR to scan for pairing right now (raw string for any QR renderer), or null. */
  currentQr(): string | null {
    return this.qr;
  }

  /** The connection's state. */
  state(): WhatsAppState {
    return this.status;
  }

  /**
   * Launches WhatsApp Web and resolves once the launch is under way: pairing may wait for a person to
   * scan the QR, so readiness is not awaited. Launch failures are retried with backoff, then reported
   * through `onSessionInvalid`; the other channels keep running.
   */
  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
    this.restarts = 0;
    this.invalidReported = false;
    this.launch();
  }

  /** The paired phone number (from `client.info.wid`) and its `https://wa.me/<number>` link; null until paired. */
  account(): BotAccount | null {
    const number = this.client?.info?.wid._serialized.split("@")[0];
    return this.sink && number && /^\d+$/.test(number) ? { name: `+${number}`, handle: `+${number}`, url: `https://wa.me/${number}` } : null;
  }

  /** Stops restarts and closes Chromium. */
  async stop(): Promise<void> {
    this.sink = null;
    this.status = "stopped";
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.closeClient();
  }

  /** WhatsApp Web offers no send key and the port no history look-up: a cut-short part is not resent. */
  readonly resend = "at-most-once" as const;

  /**
   * Renders `content` as WhatsApp messages (rich: WhatsApp formatting; plain: the text as typed),
   * each within `4000 × scale` characters. With buttons, the last text part ends with the
   * numbered-reply line and a poll follows when there are 2–12 buttons (WhatsApp: polls take 2–12
   * options; interactive buttons are deprecated and do not render).
   */
  render(content: OutboundContent, options: RenderOptions): OutboundPart[] {
    const limit = Math.max(64, Math.floor(WHATSAPP_MESSAGE_LIMIT * options.scale));
    const rendered = options.style === "rich" ? renderWhatsApp(content.text, limit) : renderWhatsAppPlain(content.text, limit);
    const parts: { body: WhatsAppPartBody; plain: string }[] = rendered.map((part) => ({ body: { kind: "text", text: part.body, buttons: [] }, plain: part.plain }));
    if (content.buttons.length) {
      const hint = numberedHint(content.buttons);
      const poll = content.buttons.length >= POLL_MIN_OPTIONS && content.buttons.length <= POLL_MAX_OPTIONS;
      const last = parts.at(-1);
      // The part carrying the buttons re-adds the hint when re-rendered, so only a part before a poll keeps it in `plain`.
      if (last?.body.kind === "text" && last.body.text.length + 2 + hint.length <= limit) {
        last.body.text = `${last.body.text}\n\n${hint}`;
        if (poll) last.plain = `${last.plain}\n\n${hint}`;
      } else parts.push({ body: { kind: "text", text: hint, buttons: [] }, plain: poll ? hint : "" });
      if (poll) parts.push({ body: { kind: "poll", text: pollQuestion(rendered[0]?.body ?? ""), buttons: content.buttons }, plain: "" });
      else parts.at(-1)!.body.buttons = content.buttons;
    }
    return parts.map(({ body, plain }, i) => ({ body, plain, buttons: i === parts.length - 1 && content.buttons.length > 0 }));
  }

  /**
   * Sends one part (a text, or the poll of a card); the part that carries the buttons registers the
   * card so numbered replies and votes map back to its buttons. Throws `DeliveryError`: transient
   * while WhatsApp is not ready, `recipient_gone` for a number that is not on WhatsApp.
   */
  async sendPart(target: ChannelTarget, part: OutboundPart): Promise<string> {
    const client = this.readyClient();
    const file = fileOfPart(part);
    if (file) {
      // Files as WhatsApp media: images as photos, anything else as a document.
      const media = this.library.createMedia(file.mimeType, file.bytes, file.name);
      return this.call(() => client.sendMessage(target.address, media, { sendMediaAsDocument: !isPhoto(file) }), `send ${file.name} to ${target.address}`);
    }
    const body = part.body as WhatsAppPartBody;
    const id =
      body.kind === "poll"
        ? await this.call(() => client.sendMessage(target.address, this.library.createPoll(body.text, pollOptions(body.buttons.map((b) => b.label)))), `send the poll to ${target.address}`)
        : await this.call(() => client.sendMessage(target.address, body.text, { linkPreview: false }), `send a message to ${target.address}`);
    if (body.buttons.length) this.cards.add({ pollId: body.kind === "poll" ? id : null, ref: id, address: target.address, buttons: body.buttons, open: true });
    return id;
  }

  /**
   * Shows a card's outcome: edits the last text part (WhatsApp allows edits for 15 minutes; later, or
   * if the edit does not apply, the text is sent as a reply quoting the card) and closes the card so
   * numbered replies no longer map to it. Polls cannot be edited; new buttons come as a new card.
   */
  async edit(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void> {
    const client = this.readyClient();
    this.cards.close(platformIds);
    const textIds = platformIds.filter((id) => this.cards.get(id)?.pollId !== id);
    const text = renderWhatsAppMessages(content.text).join("\n\n");
    const lastText = textIds.at(-1);
    let edited = false;
    if (lastText && text && text.length <= WHATSAPP_MESSAGE_LIMIT) {
      try {
        const message = await client.getMessageById(lastText);
        edited = Boolean(message && (await message.edit(text, { linkPreview: false })));
      } catch (err) {
        this.options.logger.warn({ err, messageId: lastText }, "whatsapp: edit failed; sending the outcome as a reply");
      }
    }
    if (!edited && text) {
      const quoted = platformIds.at(-1);
      await this.call(() => client.sendMessage(target.address, text, { linkPreview: false, ...(quoted ? { quotedMessageId: quoted } : {}) }), `send the outcome to ${target.address}`);
    }
    for (const part of this.render({ text: "", buttons: content.buttons }, { style: "rich", scale: 1 })) await this.sendPart(target, part);
  }

  /** Shows "typing…" in the chat (WhatsApp Web: lasts 25 s). */
  async typing(target: ChannelTarget): Promise<void> {
    const client = this.readyClient();
    await this.call(async () => {
      await (await client.getChatById(target.address)).sendStateTyping();
      return "";
    }, `show typing in ${target.address}`);
  }

  private readyClient(): WhatsAppClientPort {
    if (!this.client || this.status !== "ready") {
      throw new DeliveryError(`WhatsApp is not connected (${this.status})`, "transient", { retryAfterMs: 30_000 });
    }
    return this.client;
  }

  /** Runs a library call; WhatsApp Web reports failures as plain errors without codes. */
  private async call(run: () => Promise<{ id: { _serialized: string } } | string>, what: string): Promise<string> {
    try {
      const result = await run();
      return typeof result === "string" ? result : result.id._serialized;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      // "No LID for user" is WhatsApp Web not having mapped the contact yet: retried, never a reason to stop.
      const gone = /invalid wid|wid error|not a valid|chat not found|number is not registered/i.test(message);
      throw new DeliveryError(`WhatsApp could not ${what}: ${message}`, gone ? "recipient_gone" : "transient", { cause: err });
    }
  }

  private launch(): void {
    if (!this.sink) return;
    this.status = "starting";
    const auth = this.auth;
    this.sessionSeen = auth.kind === "local" && existsSync(join(this.dataPath, "session"));
    const client = this.library.createClient({ dataPath: this.dataPath, chromiumPath: this.options.chromiumPath, auth });
    this.client = client;
    if (auth.kind === "remote") {
      // Asked before `initialize`, whose RemoteAuth asks the same store before Chromium even starts: the
      // answer is in long before any QR.
      auth.store.sessionExists({ session: remoteSessionName(auth.clientId) }).then(
        (exists) => {
          if (this.client === client && exists) this.sessionSeen = true;
        },
        (err: unknown) => this.options.logger.warn({ err }, "whatsapp: could not check the session backup"),
      );
    }
    const guard = <A extends unknown[]>(name: string, handler: (...args: A) => unknown) => (...args: A): void => {
      if (this.client !== client) return;
      try {
        void Promise.resolve(handler(...args)).catch((err: unknown) => this.options.logger.error({ err }, `whatsapp: ${name} handler failed`));
      } catch (err) {
        this.options.logger.error({ err }, `whatsapp: ${name} handler failed`);
      }
    };
    client.on("qr", guard("qr", (qr: string) => this.onQr(qr)));
    client.on("authenticated", guard("authenticated", () => {
      this.qr = null;
      this.sessionSeen = true;
    }));
    client.on("auth_failure", guard("auth_failure", (message: string) => this.invalid(`WhatsApp rejected the saved session (auth_failure: ${message})`)));
    client.on("ready", guard("ready", () => {
      this.qr = null;
      this.status = "ready";
      this.restarts = 0;
      this.options.logger.info("whatsapp: ready");
    }));
    client.on("disconnected", guard("disconnected", (reason: string) => {
      if (reason === "LOGOUT") this.invalid("WhatsApp logged this device out (LOGOUT)");
      else this.restart(`disconnected: ${reason}`);
    }));
    client.on("message", guard("message", (message: WaMessage) => this.inOrder(() => this.onMessage(message))));
    client.on("vote_update", guard("vote_update", (vote: WaPollVote) => this.inOrder(() => this.onVote(vote))));
    client.initialize().catch((err: unknown) => {
      if (this.client !== client) return;
      this.options.logger.error({ err }, "whatsapp: could not start WhatsApp Web (check CHROMIUM_PATH)");
      this.restart(`initialize failed: ${(err as Error)?.message ?? String(err)}`);
    });
  }

  private inOrder(run: () => Promise<void>): Promise<void> {
    const next = this.inbound.then(run);
    this.inbound = next.catch(() => undefined);
    return next;
  }

  private onQr(qr: string): void {
    this.qr = qr;
    if (this.sessionSeen) {
      this.status = "pairing";
      this.invalid("WhatsApp asked for a new QR although a saved session existed: the session expired or was removed on the phone");
    } else {
      this.status = "pairing";
      qrcode.generate(qr, { small: true }, (art) => this.options.logger.info(`whatsapp: scan this QR in WhatsApp → Linked devices\n${art}`));
    }
    this.options.onQr?.(qr);
  }

  /** Reports an invalid session once; no restart (a new session needs a person to scan a QR). */
  private invalid(reason: string): void {
    if (this.status !== "pairing") this.status = "gave_up";
    this.options.logger.error({ reason }, "whatsapp: session invalid; re-pair by scanning the QR");
    if (this.invalidReported) return;
    this.invalidReported = true;
    try {
      this.options.onSessionInvalid?.(reason);
    } catch (err) {
      this.options.logger.error({ err }, "whatsapp: onSessionInvalid failed");
    }
  }

  private restart(reason: string): void {
    if (!this.sink || this.status === "gave_up") return;
    const max = this.options.maxRestarts ?? 5;
    this.restarts += 1;
    if (this.restarts > max) {
      this.closeClient().catch((err: unknown) => this.options.logger.warn({ err }, "whatsapp: close failed"));
      this.invalid(`WhatsApp did not come back after ${max} restarts (last: ${reason})`);
      this.status = "gave_up";
      return;
    }
    const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 5_000, maxMs: 300_000 };
    const delay = Math.min(initialMs * 2 ** (this.restarts - 1), maxMs);
    this.status = "restarting";
    this.options.logger.warn({ reason, attempt: this.restarts, delayMs: delay }, "whatsapp: restarting");
    this.closeClient().catch((err: unknown) => this.options.logger.warn({ err }, "whatsapp: close failed"));
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.launch();
    }, delay);
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    try {
      await client.destroy();
    } catch (err) {
      this.options.logger.warn({ err }, "whatsapp: destroy failed");
    }
  }

  private async onMessage(message: WaMessage): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    const event = await messageEvent(message, this.inboundContext());
    if (event) await this.deliver(sink, event);
  }

  private async onVote(vote: WaPollVote): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    for (const event of await voteEvents(vote, this.inboundContext())) await this.deliver(sink, event);
  }

  private inboundContext(): InboundContext {
    return { client: this.client, groups: this.groups, cards: this.cards, logger: this.options.logger };
  }

  /** Hands an event to the core; a press's notice is sent as a reply (WhatsApp has no transient feedback). */
  private async deliver(sink: InboundSink, event: InboundEvent): Promise<void> {
    try {
      const outcome = await sink(event);
      if (event.kind === "press" && outcome.notice && this.client) {
        await this.client.sendMessage(event.address, outcome.notice, { linkPreview: false, ...(event.messageRef ? { quotedMessageId: event.messageRef } : {}) });
      }
    } catch (err) {
      this.options.logger.error({ err, updateId: event.updateId }, "whatsapp: inbound event not recorded or notice not sent");
    }
  }
}

/**
 * Creates the WhatsApp channel from settings: `createWhatsAppChannel({ dataDir: DATA_DIR, chromiumPath:
 * CHROMIUM_PATH, groups, logger, onQr, onSessionInvalid })` when WHATSAPP_ENABLED, with `auth: { kind:
 * "remote", store }` when MONGODB_URI is set. Nothing launches until `start`.
 * @throws ConfigError when a RemoteAuth `backupSyncIntervalMs` is under 60,000 ms.
 */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): WhatsAppChannel {
  return new WhatsAppChannel(options);
}
