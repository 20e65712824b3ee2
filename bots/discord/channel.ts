import {
  ActionRowBuilder,
  AttachmentBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Partials,
  RESTJSONErrorCodes,
  type ButtonInteraction,
  type Interaction,
  type Message,
  type SendableChannels,
} from "discord.js";
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
} from "../../core/channels/index.js";
import type { Logger } from "../../core/log/index.js";
import { KeyedQueue } from "../../core/scheduling/index.js";
import type { Button } from "../../core/channels/index.js";
import { attachmentsOf } from "./attachments.js";
import { isDiscordCode, toDeliveryError } from "./errors.js";
import { createHash } from "node:crypto";
import { DISCORD_MESSAGE_LIMIT, renderDiscord, renderDiscordMessages, renderDiscordPlain } from "./render.js";

/** What one rendered Discord part carries to `sendPart`. */
interface DiscordPartBody {
  content: string;
  buttons: Button[];
}

/** Discord API: a message nonce is at most 25 characters; derived from the part's delivery key. */
export function discordNonce(key: string): string {
  return createHash("sha256").update(key).digest("base64url").slice(0, 25);
}

/** Discord API: at most 5 buttons per action row and 5 action rows per message. */
export const DISCORD_BUTTONS_PER_ROW = 5;
export const DISCORD_ROWS_PER_MESSAGE = 5;
/** Discord API: a button label is at most 80 characters. */
export const DISCORD_BUTTON_LABEL_MAX = 80;

/** Options of `createDiscordChannel`, wired from settings by the composition root. */
export interface DiscordChannelOptions {
  /** DISCORD_BOT_TOKEN. */
  token: string;
  /** DISCORD_API_URL: base of the REST API without the version (discord.js appends `/v10`); default Discord's. */
  apiUrl?: string;
  /** Guild channel ids from ALLOW_GROUPS (`discord:<channelId>` entries, prefix removed) Familiar reads when mentioned. */
  groups?: readonly string[];
  logger: Logger;
  /** @discordjs/rest retries of a 5xx / network failure (default 3, the library's own). */
  restRetries?: number;
}

/** Thrown by `start` when Discord refuses the bot; the message names the setting to check, never its value. */
export class DiscordStartError extends Error {
  readonly code = "CHANNEL_ERROR" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DiscordStartError";
  }
}

/**
 * Discord DMs (and mentions in allowed guild channels) through discord.js over the gateway.
 *
 * Inbound: MESSAGE_CREATE from a DM (needs the DirectMessages intent **and** the Channel partial, or a DM
 * from someone the bot never wrote to is dropped) or from an ALLOW_GROUPS channel that mentions the bot
 * (mention stripped) → `InboundMessage` with `updateId` = message id, `address` = channel id, files
 * and stickers as attachments (downloaded from the CDN only when the core asks). Button
 * presses → `deferUpdate()` first (Discord: an interaction must be answered within 3 s, later answers fail
 * with 10062 "Unknown interaction"), then the sink; its `notice` becomes an ephemeral follow-up.
 *
 * Outbound: markdown rendered for Discord and split ≤ 2,000 characters; buttons as action rows on the
 * last part; `allowedMentions` empty so model text never pings anyone.
 */
export class DiscordChannel implements ChannelAdapter {
  readonly channel = "discord" as const;
  private client: Client | null = null;
  private readonly inOrder = new KeyedQueue();
  private readonly groups: ReadonlySet<string>;

  constructor(private readonly options: DiscordChannelOptions) {
    this.groups = new Set(options.groups ?? []);
  }

  /**
   * Logs in (GET /gateway/bot, then HELLO → IDENTIFY → READY) and starts handing events to `sink`.
   * Throws `DiscordStartError` naming DISCORD_BOT_TOKEN when Discord answers 401, naming the intents
   * when Discord closes with 4014 (privileged intent not enabled), naming DISCORD_API_URL otherwise.
   */
  async start(sink: InboundSink): Promise<void> {
    if (this.client) throw new DiscordStartError("the Discord channel is already started");
    const client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      partials: [Partials.Channel],
      rest: { ...(this.options.apiUrl ? { api: this.options.apiUrl } : {}), retries: this.options.restRetries ?? 3 },
      allowedMentions: { parse: [] },
    });
    // One DM channel's messages reach the core in order, even when one of them waits for a download.
    const failed = (err: unknown) => this.options.logger.error({ err }, "discord: an event was not handled");
    client.on(Events.MessageCreate, (message) => {
      this.inOrder.run(message.channelId, () => this.onMessage(sink, message)).catch(failed);
    });
    client.on(Events.InteractionCreate, (interaction) => {
      this.onInteraction(sink, interaction).catch(failed);
    });
    client.on(Events.Error, (err) => this.options.logger.error({ err }, "discord: client error"));
    client.on(Events.ShardError, (err) => this.options.logger.warn({ err }, "discord: gateway connection error"));
    try {
      await client.login(this.options.token);
    } catch (err) {
      await client.destroy().catch(() => undefined);
      throw startError(err);
    }
    this.client = client;
    this.options.logger.info({ user: client.user?.id }, "discord: connected");
  }

  /** Closes the gateway connection. */
  /** The bot user as the gateway's READY named it (null before start); Discord has no link that opens a DM. */
  account(): BotAccount | null {
    const user = this.client?.user;
    return user ? { name: user.globalName ?? user.username, handle: user.username, url: null } : null;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await client.destroy();
  }

  /**
   * Discord deduplicates a message whose `nonce` was sent to the channel within the last few minutes
   * when `enforce_nonce` is set (Discord API: Create Message), so a part re-sent after a restart is
   * the same message.
   */
  readonly resend = "idempotent" as const;

  /**
   * Renders `content` as Discord messages of at most `2000 × scale` characters: rich style is the
   * model's markdown as Discord markdown, plain style the text as typed. Buttons ride on the last
   * part (a message of buttons only when there is no text). Throws a `payload_rejected`
   * DeliveryError for buttons that cannot be sent.
   */
  render(content: OutboundContent, options: RenderOptions): OutboundPart[] {
    const limit = Math.max(64, Math.floor(DISCORD_MESSAGE_LIMIT * options.scale));
    const texts = options.style === "rich" ? renderDiscord(content.text, limit) : renderDiscordPlain(content.text, limit);
    buttonRows(content.buttons); // validates before anything is sent
    if (texts.length === 0 && content.buttons.length === 0) return [];
    const parts = texts.length > 0 ? texts : [{ body: "", plain: "" }];
    return parts.map((part, i) => {
      const last = i === parts.length - 1;
      const body: DiscordPartBody = { content: part.body, buttons: last ? content.buttons : [] };
      return { body, plain: part.plain, buttons: last && content.buttons.length > 0 };
    });
  }

  /**
   * Sends one part to the DM or guild channel `target.address` (a user id also works: its DM channel
   * is opened), with a nonce derived from `key`. Returns the message id. Throws `DeliveryError`:
   * `recipient_gone` for 50007 / unknown channel or user, `payload_rejected` for 50035 and other 4xx.
   */
  async sendPart(target: ChannelTarget, part: OutboundPart, key: string): Promise<string> {
    const channel = await this.sendable(target.address);
    const file = fileOfPart(part);
    if (file) {
      // A file as a Discord attachment (multipart upload; Discord API reference, "Uploading Files").
      try {
        const sent = await channel.send({ files: [new AttachmentBuilder(file.bytes, { name: file.name })], allowedMentions: { parse: [] }, nonce: discordNonce(key), enforceNonce: true });
        return sent.id;
      } catch (err) {
        throw toDeliveryError(err, `send ${file.name} to channel ${target.address}`);
      }
    }
    const body = part.body as DiscordPartBody;
    try {
      const sent = await channel.send({
        ...(body.content !== "" ? { content: body.content } : {}),
        components: buttonRows(body.buttons),
        allowedMentions: { parse: [] },
        flags: MessageFlags.SuppressEmbeds,
        nonce: discordNonce(key),
        enforceNonce: true,
      });
      return sent.id;
    } catch (err) {
      throw toDeliveryError(err, `send a message to channel ${target.address}`);
    }
  }

  /**
   * Replaces the text and buttons of the last part of an earlier message (a card showing its outcome).
   * Throws a permanent `DeliveryError` when the new text needs more than one message (an edit cannot
   * add messages) or Discord refuses (10008 unknown message, 50035), a retryable one otherwise.
   */
  async edit(target: ChannelTarget, platformIds: string[], content: OutboundContent): Promise<void> {
    const id = platformIds.at(-1);
    if (id === undefined) throw new DeliveryError("Discord: edit needs the id of the message to edit", "payload_rejected");
    const parts = renderDiscordMessages(content.text);
    if (parts.length > 1) throw new DeliveryError(`Discord: the edited text of message ${id} needs ${parts.length} messages`, "payload_rejected");
    const channel = await this.sendable(target.address);
    try {
      await channel.messages.edit(id, { content: parts[0] ?? "", components: buttonRows(content.buttons), allowedMentions: { parse: [] }, flags: MessageFlags.SuppressEmbeds });
    } catch (err) {
      throw toDeliveryError(err, `edit message ${id} in channel ${target.address}`);
    }
  }

  /** Shows "typing…" in `target.address` (Discord: lasts about 10 s or until the next message). */
  async typing(target: ChannelTarget): Promise<void> {
    const channel = await this.sendable(target.address);
    try {
      await channel.sendTyping();
    } catch (err) {
      throw toDeliveryError(err, `show typing in channel ${target.address}`);
    }
  }

  private async sendable(address: string): Promise<SendableChannels> {
    const client = this.client;
    if (!client) throw new DeliveryError("Discord channel is not started", "transient");
    let channel;
    try {
      channel = await client.channels.fetch(address);
    } catch (err) {
      if (!isDiscordCode(err, RESTJSONErrorCodes.UnknownChannel)) throw toDeliveryError(err, `find channel ${address}`);
      // The address may be a user id (an identity paired before the person ever wrote): open the DM.
      try {
        channel = await client.users.createDM(address);
      } catch (dmErr) {
        throw toDeliveryError(isDiscordCode(dmErr, RESTJSONErrorCodes.UnknownUser) ? err : dmErr, `open a DM with ${address}`);
      }
    }
    if (!channel?.isSendable()) throw new DeliveryError(`Discord: channel ${address} does not accept messages`, "recipient_gone");
    return channel;
  }

  private async onMessage(sink: InboundSink, message: Message): Promise<void> {
    try {
      const me = message.client.user.id;
      if (message.author.bot || message.author.id === me || message.system) return;
      let text = message.content;
      if (message.inGuild()) {
        if (!this.groups.has(message.channelId) || !message.mentions.users.has(me)) return;
        text = text.replace(new RegExp(`<@!?${me}>`, "g"), "").replace(/\s{2,}/g, " ").trim();
      }
      text = text.trim();
      const attachments = attachmentsOf(message, this.options.apiUrl);
      if (!text && attachments.length === 0) return;
      const event: InboundEvent = {
        channel: "discord",
        kind: "message",
        updateId: message.id,
        accountId: message.author.id,
        // A guild mention is answered in the person's DM (a user id as address opens it): the core keeps
        // one address per account and sends later replies, cards and reminders there.
        address: message.inGuild() ? message.author.id : message.channelId,
        ...(message.inGuild() ? { groupId: message.channelId } : {}),
        displayName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
        at: message.createdAt,
        text,
        ...(attachments.length > 0 && { attachments }),
      };
      await sink(event);
    } catch (err) {
      this.options.logger.error({ err, messageId: message.id }, "discord: inbound message not recorded");
    }
  }

  private async onInteraction(sink: InboundSink, interaction: Interaction): Promise<void> {
    if (!interaction.isButton()) return;
    const acknowledged = await this.deferUpdate(interaction);
    try {
      const outcome = await sink({
        channel: "discord",
        kind: "press",
        updateId: interaction.id,
        accountId: interaction.user.id,
        address: interaction.inGuild() ? interaction.user.id : interaction.channelId,
        ...(interaction.inGuild() && interaction.channelId ? { groupId: interaction.channelId } : {}),
        displayName: interaction.user.globalName ?? interaction.user.username,
        at: interaction.createdAt,
        buttonId: interaction.customId,
        messageRef: interaction.message.id,
      });
      if (outcome.notice && acknowledged) {
        await interaction.followUp({ content: outcome.notice, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      }
    } catch (err) {
      this.options.logger.error({ err, interactionId: interaction.id }, "discord: button press not recorded or its notice not shown");
    }
  }

  /** Acknowledges a press at once (Discord: within 3 s); a late or repeated answer is logged, never thrown. */
  private async deferUpdate(interaction: ButtonInteraction): Promise<boolean> {
    try {
      await interaction.deferUpdate();
      return true;
    } catch (err) {
      const late = isDiscordCode(err, RESTJSONErrorCodes.UnknownInteraction);
      const again = isDiscordCode(err, RESTJSONErrorCodes.InteractionHasAlreadyBeenAcknowledged);
      this.options.logger.warn(
        { err, interactionId: interaction.id },
        late ? "discord: interaction expired before it was acknowledged (10062)" : again ? "discord: interaction already acknowledged" : "discord: could not acknowledge interaction",
      );
      return false;
    }
  }
}

/**
 * Buttons → action rows of ≤ 5 buttons, ≤ 5 rows; `custom_id` is the Button id (Discord: ≤ 100
 * characters, checked by discord.js), labels cut to 80 characters. Throws a permanent `DeliveryError`
 * for more than 25 buttons or an invalid id (the payload could never be sent).
 */
export function buttonRows(buttons: readonly Button[]): ActionRowBuilder<ButtonBuilder>[] {
  const max = DISCORD_BUTTONS_PER_ROW * DISCORD_ROWS_PER_MESSAGE;
  if (buttons.length > max) throw new DeliveryError(`Discord: ${buttons.length} buttons, at most ${max} fit on a message`, "payload_rejected");
  const rows: ActionRowBuilder<ButtonBuilder>[] = [];
  try {
    for (let i = 0; i < buttons.length; i += DISCORD_BUTTONS_PER_ROW) {
      const row = new ActionRowBuilder<ButtonBuilder>();
      for (const b of buttons.slice(i, i + DISCORD_BUTTONS_PER_ROW)) {
        const label = b.label.length > DISCORD_BUTTON_LABEL_MAX ? `${b.label.slice(0, DISCORD_BUTTON_LABEL_MAX - 1)}…` : b.label;
        row.addComponents(new ButtonBuilder().setCustomId(b.id).setLabel(label || b.id).setStyle(ButtonStyle.Secondary));
      }
      row.toJSON();
      rows.push(row);
    }
  } catch (err) {
    // discord.js builders validate with shapeshift and throw before any request: the payload is invalid.
    throw new DeliveryError(`Discord: invalid buttons (${(err as Error).message})`, "payload_rejected", { cause: err });
  }
  return rows;
}

function startError(err: unknown): DiscordStartError {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "TokenInvalid" || (err instanceof DiscordAPIError && err.status === 401)) {
    return new DiscordStartError("DISCORD_BOT_TOKEN is set but rejected by Discord (401): check DISCORD_BOT_TOKEN (Developer Portal → Bot → Reset Token)", { cause: err });
  }
  if (code === "DisallowedIntents" || code === 4014) {
    return new DiscordStartError("Discord refused the gateway intents (4014): enable MESSAGE CONTENT INTENT in the Developer Portal → Bot → Privileged Gateway Intents", { cause: err });
  }
  return new DiscordStartError(`could not connect to Discord: ${(err as Error)?.message ?? String(err)} — check DISCORD_API_URL and the network`, { cause: err });
}

/**
 * Creates the Discord channel from settings: `createDiscordChannel({ token: DISCORD_BOT_TOKEN,
 * apiUrl: DISCORD_API_URL, groups: ALLOW_GROUPS' discord ids, logger })`. Nothing connects until `start`.
 */
export function createDiscordChannel(options: DiscordChannelOptions): DiscordChannel {
  return new DiscordChannel(options);
}
