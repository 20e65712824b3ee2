import { App, ExpressReceiver, SocketModeReceiver, webApi } from "@slack/bolt";
import { Router, type RequestHandler } from "express";
import {
  DeliveryError,
  type BotAccount,
  type ChannelAdapter,
  type ChannelTarget,
  type OutboundPart,
  type RenderOptions,
  type InboundSink,
  type OutboundContent,
  type OutboundAttachment,
  fileOfPart,
} from "../../core/channels/index.js";
import type { Logger } from "../../core/log/index.js";
import { BLOCK_REJECTIONS, SlackSetupError, slackErrorCode, TOKEN_REJECTED, toDeliveryError } from "./errors.js";
import { boltLogger, SLACK_EVENTS_PATH, type SlackChannelOptions } from "./options.js";
import { toInboundMessage, toInboundPress, type SlackBlockActionsBody, type SlackMessageEvent } from "./inbound.js";
import { slackRequestGuard } from "./signature.js";
import { fetchSlackFile, slackFileAccess, type SlackFileAccess } from "./files.js";
import { KeyedQueue } from "../../core/scheduling/index.js";
import {
  actionsBlocks,
  layoutMessage,
  SLACK_LIMITS,
  type SlackBlock,
  type SlackLayoutLimits,
  type SlackMessagePart,
} from "./layout.js";
import { escapeMrkdwn, renderSlackPlain } from "./render.js";

/** Metadata event type marking Familiar's outbound parts (their key is the payload). */
const PART_EVENT = "familiar_part";

/** The key in a part's metadata payload, if any. */
function partKeyOf(payload: unknown): string | null {
  const key: unknown = payload !== null && typeof payload === "object" && "key" in payload ? payload.key : null;
  return typeof key === "string" ? key : null;
}

/** Slack Block Kit: a section's text is at most 3,000 characters. */
const SECTION_MAX = 3_000;

/** What one rendered Slack part carries to `sendPart`. */
interface SlackPartBody {
  text: string;
  blocks: (SlackBlock | { type: "section"; text: { type: "plain_text"; text: string } })[] | null;
}

export { SLACK_EVENTS_PATH, type RouterHost, type SlackChannelOptions } from "./options.js";

/**
 * Slack as a Familiar channel, on Bolt for JavaScript 5: DMs and @-mentions in ALLOW_GROUPS channels
 * in, Block Kit messages and button presses out. HTTP mode mounts Bolt's `ExpressReceiver` router on
 * our express app at `/slack/events` (Bolt verifies `v0=HMAC-SHA256(secret, "v0:ts:body")` and the
 * 5-minute window, answering 401); Socket Mode (`appToken`) opens a WebSocket instead.
 *
 * Acknowledgement: Bolt acks Events API deliveries before listeners run, and block actions are
 * acked first thing, so Slack's 3-second deadline holds however slowly the sink answers. The sink is
 * called after the ack; redeliveries are absorbed by the core's durable dedupe on update ids (see
 * inbound.ts for the id scheme). `typing` is absent on purpose: Slack has no typing indicator for bots
 * outside assistant threads (`assistant.threads.setStatus` applies to those only).
 */
export class SlackChannel implements ChannelAdapter {
  readonly channel = "slack" as const;
  private readonly app: App;
  private readonly logger: Logger;
  private readonly limits: SlackLayoutLimits;
  private readonly allowGroups: ReadonlySet<string>;
  private readonly socketMode: boolean;
  private sink: InboundSink | null = null;
  private botUserId = "";
  private me: BotAccount | null = null;
  /** User id → DM channel id, from conversations.open. */
  private readonly dmChannels = new Map<string, string>();
  /** What file downloads need: the bot token and where it may be sent. */
  private readonly files: SlackFileAccess;
  private readonly inOrder = new KeyedQueue();
  /** Last Retry-After (s) Slack sent; reported on a send that still failed after the WebClient's waits. */
  private lastRetryAfterSec: number | undefined;

  constructor(options: SlackChannelOptions) {
    this.logger = options.logger.child({ channel: "slack" });
    this.files = slackFileAccess(options.botToken, options.apiUrl);
    this.limits = { ...SLACK_LIMITS, ...options.limits };
    this.allowGroups = new Set(options.allowGroups ?? []);
    this.socketMode = options.appToken !== undefined;
    const logger = boltLogger(this.logger);
    const clientOptions: webApi.WebClientOptions = {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      timeout: options.requestTimeoutMs ?? 30_000,
      // Bounded: the outbox retries later; ten retries over 30 minutes (the default) would pin a send.
      retryConfig: { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 2_000 },
    };
    let receiver: ExpressReceiver | SocketModeReceiver;
    if (options.appToken !== undefined) {
      receiver = new SocketModeReceiver({ appToken: options.appToken, logger, installerOptions: { clientOptions } });
    } else {
      if (!options.signingSecret) {
        throw new SlackSetupError("Slack needs SLACK_SIGNING_SECRET (HTTP events) or SLACK_APP_TOKEN (Socket Mode) with SLACK_BOT_TOKEN");
      }
      if (!options.http) throw new SlackSetupError("Slack HTTP mode needs the HTTP server to mount /slack/events on");
      const router = Router();
      router.post(SLACK_EVENTS_PATH, this.notStartedGuard(), ...slackRequestGuard({ signingSecret: options.signingSecret, ...(options.onRefused && { onRefused: options.onRefused }) }));
      receiver = new ExpressReceiver({ signingSecret: options.signingSecret, endpoints: SLACK_EVENTS_PATH, router, logger });
      options.http.mount(router);
    }
    this.app = new App({
      token: options.botToken,
      receiver,
      logger,
      clientOptions,
      deferInitialization: true,
      ...(options.appToken !== undefined ? { socketMode: true, appToken: options.appToken } : {}),
    });
    this.app.client.on(webApi.WebClientEvent.RATE_LIMITED, (seconds: number) => {
      this.lastRetryAfterSec = seconds;
    });
    // Bolt has acked already; one conversation's messages still reach the core in order (a file download may take a while).
    const ordered = (event: SlackMessageEvent) => this.inOrder.run(event.channel ?? "", () => this.onMessage(event));
    this.app.event("message", async ({ event }) => ordered(event as SlackMessageEvent));
    this.app.event("app_mention", async ({ event }) => ordered(event as SlackMessageEvent));
    this.app.action({ type: "block_actions" }, async ({ ack, body }) => {
      await ack();
      await this.onPress(body);
    });
    this.app.error(async (err) => {
      this.logger.error({ err }, "Slack listener failed");
    });
  }

  /**
   * Checks the bot token (`auth.test`), learns the bot's user id (to strip mentions) and starts
   * receiving: Socket Mode connects (`apps.connections.open`, then the WebSocket); HTTP mode opens
   * the already mounted route. Throws `SlackSetupError` naming SLACK_BOT_TOKEN / SLACK_APP_TOKEN /
   * SLACK_API_URL when Slack refuses or cannot be reached.
   */
  async start(sink: InboundSink): Promise<void> {
    let auth: { user_id?: string; user?: string; url?: string };
    try {
      auth = await this.app.client.auth.test();
      await this.app.init();
    } catch (err) {
      const code = slackErrorCode(err);
      if (code && TOKEN_REJECTED.has(code)) {
        throw new SlackSetupError(`SLACK_BOT_TOKEN is set but rejected by Slack (${code}): check the bot token`, { cause: code });
      }
      throw new SlackSetupError(`Slack auth.test failed (${code ?? (err as Error).message}): check SLACK_API_URL and the network`);
    }
    if (!auth.user_id) throw new SlackSetupError("Slack auth.test returned no bot user id: check that SLACK_BOT_TOKEN is a bot token");
    this.botUserId = auth.user_id;
    this.me = { name: auth.user ?? "Familiar", handle: auth.user ? `@${auth.user}` : null, url: auth.url ? `${auth.url.replace(/\/?$/, "/")}team/${auth.user_id}` : null };
    this.sink = sink;
    if (this.socketMode) {
      try {
        await this.app.start();
      } catch (err) {
        this.sink = null;
        const code = (err as { data?: { error?: string } }).data?.error ?? slackErrorCode(err);
        throw new SlackSetupError(`Slack Socket Mode did not connect (${code ?? (err as Error).message}): check SLACK_APP_TOKEN (xapp-… with connections:write)`);
      }
    }
    this.logger.info({ mode: this.socketMode ? "socket" : "http", botUserId: this.botUserId }, "Slack channel started");
  }

  /** Stops delivering events; Socket Mode disconnects, HTTP mode answers 503 from now on. */
  /** The bot user as auth.test named it, with a link to its profile in the workspace (null before start). */
  account(): BotAccount | null {
    return this.sink ? this.me : null;
  }

  async stop(): Promise<void> {
    const wasStarted = this.sink !== null;
    this.sink = null;
    if (this.socketMode && wasStarted) await this.app.stop();
  }

  /** A part is posted with its key in message metadata, so `findSent` can look it up in the DM's history. */
  readonly resend = "lookup" as const;

  /**
   * Renders markdown `content` as Block Kit messages (rich: mrkdwn sections within Slack's limits,
   * scaled by `scale`), or as plain text messages (plain: the text as typed with `& < >` escaped, no
   * blocks but a plain_text section and the buttons on the last), in order, buttons on the last. No
   * parts for content with neither text nor buttons.
   */
  render(content: OutboundContent, options: RenderOptions): OutboundPart[] {
    if (options.style === "rich") {
      const scaled = { ...this.limits, sectionChars: Math.max(200, Math.floor(this.limits.sectionChars * options.scale)) };
      const parts = layoutMessage(content, scaled);
      return parts.map((part, i) => {
        const body: SlackPartBody = { text: part.text, blocks: part.blocks };
        return { body, plain: part.plain, buttons: i === parts.length - 1 && content.buttons.length > 0 };
      });
    }
    // A plain part with buttons carries its text in a plain_text section: at most 3,000 characters.
    const limit = Math.max(200, Math.floor(Math.min(this.limits.plainChars, SECTION_MAX) * options.scale));
    const texts = renderSlackPlain(content.text, limit);
    if (texts.length === 0 && content.buttons.length === 0) return [];
    const labels = content.buttons.map((b) => b.label).join(" · ");
    const pieces = texts.length > 0 ? texts : [{ body: escapeMrkdwn(labels), plain: labels }];
    return pieces.map((piece, i) => {
      const last = i === pieces.length - 1;
      const actions = last ? actionsBlocks(content.buttons) : [];
      const blocks: SlackPartBody["blocks"] = actions.length > 0 ? [{ type: "section", text: { type: "plain_text", text: piece.plain } }, ...actions] : null;
      const body: SlackPartBody = { text: piece.body, blocks };
      return { body, plain: piece.plain, buttons: last && content.buttons.length > 0 };
    });
  }

  /**
   * Posts one part (a user id address is opened as a DM first) with `key` in its metadata. Returns
   * its `ts`. Throws `DeliveryError`: `payload_rejected` for invalid or too long blocks (the outbox
   * then sends plain text), `recipient_gone` for a closed or missing conversation.
   */
  async sendPart(target: ChannelTarget, part: OutboundPart, key: string): Promise<string> {
    const file = fileOfPart(part);
    if (file) return this.upload(await this.resolveChannel(target.address), file);
    const body = part.body as SlackPartBody;
    const channel = await this.resolveChannel(target.address);
    return this.call("chat.postMessage", async () => {
      const res = await this.app.client.chat.postMessage({
        channel,
        text: body.text,
        ...(body.blocks ? { blocks: body.blocks } : {}),
        unfurl_links: false,
        unfurl_media: false,
        metadata: { event_type: PART_EVENT, event_payload: { key } },
      });
      if (!res.ts) throw new DeliveryError("Slack chat.postMessage returned no ts", "transient");
      return res.ts;
    });
  }

  /**
   * One attachment as a Slack file in the conversation (files.getUploadURLExternal → upload →
   * files.completeUploadExternal, through the WebClient's `filesUploadV2`). Returns `file:<id>`.
   */
  private async upload(channel: string, file: OutboundAttachment): Promise<string> {
    return this.call("files.uploadV2", async () => {
      const res = await this.app.client.filesUploadV2({ channel_id: channel, file: file.bytes, filename: file.name, title: file.name });
      const id = res.files?.[0]?.files?.[0]?.id;
      if (!id) throw new DeliveryError(`Slack file upload of ${file.name} returned no file id`, "transient");
      return `file:${id}`;
    });
  }

  /** Looks for the part posted with `key` since `since` in the conversation's history (conversations.history with metadata). */
  async findSent(target: ChannelTarget, key: string, since: Date): Promise<string | null> {
    const channel = await this.resolveChannel(target.address);
    const res = await this.call("conversations.history", () =>
      this.app.client.conversations.history({ channel, oldest: String((since.getTime() - 60_000) / 1000), include_all_metadata: true, limit: 100 }),
    );
    const found = (res.messages ?? []).find((m) => m.metadata?.event_type === PART_EVENT && partKeyOf(m.metadata.event_payload) === key);
    return found?.ts ?? null;
  }

  /**
   * Replaces the messages `platformIds` (their `ts`) with `content` via `chat.update`; surplus old
   * parts are deleted, surplus new parts are posted after them. Throws `DeliveryError`.
   */
  async edit(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void> {
    const channel = await this.resolveChannel(target.address);
    const parts = layoutMessage(content, this.limits);
    for (const [i, ts] of platformIds.entries()) {
      const part = parts[i];
      if (part) await this.updatePart(channel, ts, part);
      else await this.call("chat.delete", () => this.app.client.chat.delete({ channel, ts }));
    }
    for (const part of parts.slice(platformIds.length)) {
      await this.call("chat.postMessage", () => this.app.client.chat.postMessage({ channel, text: part.text, blocks: part.blocks, unfurl_links: false, unfurl_media: false }));
    }
  }

  // -------------------------------------------------------------------------------------------

  private async onMessage(event: SlackMessageEvent): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    const inbound = toInboundMessage(event, { botUserId: this.botUserId, allowGroups: this.allowGroups }, new Date(), (file, maxBytes) => fetchSlackFile(file, maxBytes, this.files));
    if (!inbound) return;
    try {
      const outcome = await sink(inbound);
      this.logger.debug({ updateId: inbound.updateId, status: outcome.status }, "Slack message handed to the core");
    } catch (err) {
      this.logger.error({ err, updateId: inbound.updateId }, "the core failed to record a Slack message");
    }
  }

  private async onPress(body: SlackBlockActionsBody): Promise<void> {
    const sink = this.sink;
    const press = toInboundPress(body, new Date());
    if (!sink || !press) return;
    let notice: string | undefined;
    try {
      notice = (await sink(press)).notice;
    } catch (err) {
      this.logger.error({ err, updateId: press.updateId }, "the core failed to record a Slack button press");
      return;
    }
    if (!notice) return;
    try {
      // Slack's transient feedback: an ephemeral message only the presser sees (chat.postEphemeral).
      await this.app.client.chat.postEphemeral({ channel: press.address, user: press.accountId, text: notice });
    } catch (err) {
      this.logger.warn({ err: slackErrorCode(err) ?? (err as Error).message, updateId: press.updateId }, "Slack ephemeral notice failed");
    }
  }

  private async updatePart(channel: string, ts: string, part: SlackMessagePart): Promise<void> {
    try {
      await this.app.client.chat.update({ channel, ts, text: part.text, blocks: part.blocks });
      return;
    } catch (err) {
      const code = slackErrorCode(err);
      if (!code || !BLOCK_REJECTIONS.has(code)) throw toDeliveryError("chat.update", err, this.lastRetryAfterSec);
      this.logger.warn({ code }, "Slack rejected the edited blocks: updating with plain text instead");
    }
    await this.call("chat.update", () => this.app.client.chat.update({ channel, ts, text: part.sections.join("\n\n") || part.text, blocks: [] }));
  }

  /** A user id (U…/W…) is turned into its DM channel with `conversations.open`; anything else is a channel id. */
  private async resolveChannel(address: string): Promise<string> {
    if (!/^[UW][A-Z0-9]+$/.test(address)) return address;
    const known = this.dmChannels.get(address);
    if (known) return known;
    const res = await this.call("conversations.open", () => this.app.client.conversations.open({ users: address }));
    const id = res.channel?.id;
    if (!id) throw new DeliveryError("Slack conversations.open returned no channel", "transient");
    this.dmChannels.set(address, id);
    return id;
  }

  private async call<T>(method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toDeliveryError(method, err, this.lastRetryAfterSec);
    }
  }

  /** Before `start` (and after `stop`) Slack gets a quick 503 instead of a silent 3-second timeout. */
  private notStartedGuard(): RequestHandler {
    return (_req, res, next) => {
      if (this.sink) next();
      else res.status(503).send();
    };
  }
}

/**
 * Creates the Slack channel from settings. Socket Mode when `appToken` is set, else HTTP mode on
 * `http` at `/slack/events` (needs `signingSecret`). Throws `SlackSetupError` when neither works.
 *
 * @example
 * const slack = createSlackChannel({ botToken: cfg.SLACK_BOT_TOKEN, signingSecret: cfg.SLACK_SIGNING_SECRET,
 *   apiUrl: cfg.SLACK_API_URL, allowGroups: slackGroupIds, http, logger });
 * await slack.start(sink);
 */
export function createSlackChannel(options: SlackChannelOptions): SlackChannel {
  return new SlackChannel(options);
}
