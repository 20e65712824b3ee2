import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * A local fake of Discord for tests, on 127.0.0.1 (random port): the REST API under `/v10` and a
 * gateway WebSocket (JSON encoding, no compression) speaking HELLO → IDENTIFY → READY, heartbeat
 * ACKs, and dispatching MESSAGE_CREATE / INTERACTION_CREATE on demand. Every REST call is recorded.
 *
 * It enforces the platform rules a real bot trips over: the bot token (401), content ≤ 2,000
 * characters and ≤ 5 rows of ≤ 5 buttons (50035), DMs only with the DirectMessages intent, users who
 * blocked the bot (50007), unknown channels (10003) and the 3 s interaction window (10062).
 *
 * Files: `addAttachment` stores bytes and returns the attachment object a MESSAGE_CREATE carries;
 * its `url` (the CDN's, here `/attachments/<id>/<name>` on this server) serves the bytes over
 * loopback HTTP without a token, as Discord's signed CDN URLs do. Downloads land in `downloads`.
 */

export interface RecordedCall {
  method: string;
  path: string;
  query: string;
  body: unknown;
  at: number;
}

export interface FakeUser {
  id: string;
  username: string;
  global_name?: string | null;
  bot?: boolean;
}

interface StoredMessage {
  id: string;
  channel_id: string;
  content: string;
  components: unknown[];
  flags: number;
  edits: number;
  /** Files uploaded with the message (multipart `files[n]` parts). */
  attachments: { filename: string; bytes: Buffer }[];
}

interface PendingInteraction {
  token: string;
  dispatchedAt: number;
  acknowledged: boolean;
}

/** Discord API: interaction responses must arrive within 3 s of the interaction. */
export const INTERACTION_DEADLINE_MS = 3000;
const INTENT_GUILD_MESSAGES = 1 << 9;
const INTENT_DIRECT_MESSAGES = 1 << 12;

let snowflakeCounter = 0n;
/** A fresh snowflake-shaped id (increasing). */
export function snowflake(): string {
  snowflakeCounter += 1n;
  return ((BigInt(Date.now() - 1420070400000) << 22n) + snowflakeCounter).toString();
}

export class FakeDiscord {
  readonly token = `fake.${randomBytes(12).toString("hex")}.discord-token`;
  readonly bot: FakeUser = { id: snowflake(), username: "familiar", bot: true };
  readonly applicationId = snowflake();
  readonly calls: RecordedCall[] = [];
  /** Messages the bot sent or edited, by id. */
  readonly messages = new Map<string, StoredMessage>();
  /** Ephemeral and public follow-ups sent through interaction webhooks. */
  readonly followUps: StoredMessage[] = [];
  /** Every IDENTIFY payload received and every gateway query string. */
  readonly identifies: { intents: number }[] = [];
  readonly gatewayQueries: string[] = [];
  /** DM channels by id → recipient. */
  private readonly dmChannels = new Map<string, FakeUser>();
  private readonly guildChannels = new Map<string, string>();
  private readonly blocked = new Set<string>();
  private readonly interactions = new Map<string, PendingInteraction>();
  private readonly sockets = new Set<WebSocket>();
  private readonly guilds: { id: string; channelIds: string[] }[] = [];
  private seq = 0;
  private readonly files = new Map<string, { bytes: Buffer; contentType: string }>();
  /** Attachment paths downloaded, in order. */
  readonly downloads: string[] = [];
  /** While set, attachment downloads wait for it (a slow CDN). */
  private stall: Promise<void> | null = null;
  private server: Server | null = null;
  private wss: WebSocketServer | null = null;
  private port = 0;

  /** REST base to pass as DISCORD_API_URL (discord.js appends `/v10`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async start(): Promise<void> {
    const wss = new WebSocketServer({ noServer: true });
    this.wss = wss;
    const server = createServer((req, res) => {
      this.handle(req).then(({ status, body, raw, contentType }) => {
        if (raw) {
          res.writeHead(status, { "content-type": contentType ?? "application/octet-stream", "content-length": raw.length }).end(raw);
        } else if (body === undefined) {
          res.writeHead(status).end();
        } else {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
        }
      }, (err: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(String(err)));
    });
    server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/gateway") return socket.destroy();
      this.gatewayQueries.push(url.search);
      wss.handleUpgrade(req, socket, head, (ws) => this.onGateway(ws));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss?.close();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  }

  /** A guild with text channels, announced in READY and sent as GUILD_CREATE on connect. */
  addGuild(channelIds: string[]): string {
    const id = snowflake();
    this.guilds.push({ id, channelIds });
    for (const c of channelIds) this.guildChannels.set(c, id);
    return id;
  }

  /** The user blocked the bot / closed DMs: sends to their DM answer 50007. */
  block(userId: string): void {
    this.blocked.add(userId);
  }

  /** The DM channel id between the bot and `user` (created on first use, as Discord does). */
  dmChannelOf(user: FakeUser): string {
    for (const [id, u] of this.dmChannels) if (u.id === user.id) return id;
    const id = snowflake();
    this.dmChannels.set(id, user);
    return id;
  }

  /** Messages the bot sent to `channelId`, oldest first. */
  messagesIn(channelId: string): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.channel_id === channelId);
  }

  /**
   * Dispatches a DM from `user` (MESSAGE_CREATE with channel_type 1); dropped without the DM intent.
   * `extra` adds fields such as `attachments` (see `addAttachment`), `sticker_items` or `flags`
   * (1 << 13: a voice message).
   */
  sendDm(user: FakeUser, content: string, id = snowflake(), extra: Record<string, unknown> = {}): { id: string; channelId: string } {
    const channelId = this.dmChannelOf(user);
    this.dispatch("MESSAGE_CREATE", { ...this.messageBase(id, channelId, user, content), channel_type: 1, ...extra }, INTENT_DIRECT_MESSAGES);
    return { id, channelId };
  }

  /** Makes attachment downloads wait until the returned function is called. */
  stallDownloads(): () => void {
    let release!: () => void;
    this.stall = new Promise<void>((r) => (release = r));
    return () => {
      this.stall = null;
      release();
    };
  }

  /** Stores a file and returns the attachment object a message carries (Discord API: Attachment). */
  addAttachment(bytes: Buffer, file: { filename: string; contentType: string; description?: string; durationSecs?: number }): Record<string, unknown> {
    const id = snowflake();
    const path = `/attachments/${id}/${encodeURIComponent(file.filename)}`;
    this.files.set(path, { bytes, contentType: file.contentType });
    const url = `http://127.0.0.1:${this.port}${path}?ex=abc&is=def&hm=0123`;
    return {
      id,
      filename: file.filename,
      size: bytes.length,
      url,
      proxy_url: url,
      content_type: file.contentType,
      ...(file.description ? { description: file.description } : {}),
      ...(file.durationSecs !== undefined ? { duration_secs: file.durationSecs, waveform: "AAAA" } : {}),
    };
  }

  /** Dispatches a guild message; `mentionBot` adds `<@bot>` to the text and the mentions. */
  sendGuildMessage(channelId: string, user: FakeUser, content: string, mentionBot: boolean): string {
    const id = snowflake();
    const guildId = this.guildChannels.get(channelId);
    if (!guildId) throw new Error(`fake discord: ${channelId} is not a guild channel`);
    this.dispatch(
      "MESSAGE_CREATE",
      {
        ...this.messageBase(id, channelId, user, mentionBot ? `<@${this.bot.id}> ${content}` : content),
        channel_type: 0,
        guild_id: guildId,
        member: { roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 },
        mentions: mentionBot ? [this.bot] : [],
      },
      INTENT_GUILD_MESSAGES,
    );
    return id;
  }

  /** Dispatches a button press on a message the bot sent; returns the interaction id. */
  pressButton(user: FakeUser, messageId: string, customId: string): string {
    const message = this.messages.get(messageId);
    if (!message) throw new Error(`fake discord: no message ${messageId}`);
    const id = snowflake();
    const token = `itoken-${randomBytes(8).toString("hex")}`;
    this.interactions.set(id, { token, dispatchedAt: Date.now(), acknowledged: false });
    const dm = this.dmChannels.has(message.channel_id);
    this.dispatch("INTERACTION_CREATE", {
      id,
      application_id: this.applicationId,
      type: 3,
      token,
      version: 1,
      data: { custom_id: customId, component_type: 2 },
      channel_id: message.channel_id,
      channel: dm ? { id: message.channel_id, type: 1, recipients: [user] } : { id: message.channel_id, type: 0 },
      ...(dm ? { user } : { guild_id: this.guildChannels.get(message.channel_id), member: { user, roles: [], permissions: "0", joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 } }),
      message: { ...this.messageBase(message.id, message.channel_id, this.bot, message.content), components: message.components },
      app_permissions: "0",
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "1": user.id },
      context: dm ? 1 : 0,
      attachment_size_limit: 10485760,
    });
    return id;
  }

  /** Interaction ids whose callback arrived, with how long after dispatch (ms). */
  acknowledgements(): { path: string; afterMs: number }[] {
    return this.calls.filter((c) => c.path.includes("/callback")).map((c) => {
      const id = c.path.split("/")[3] ?? "";
      return { path: c.path, afterMs: c.at - (this.dispatchTimes.get(id) ?? c.at) };
    });
  }

  private readonly dispatchTimes = new Map<string, number>();

  private dispatch(t: string, d: Record<string, unknown>, intent?: number): void {
    if (t === "INTERACTION_CREATE") this.dispatchTimes.set(String(d.id), Date.now());
    for (const ws of this.sockets) {
      const intents = (ws as WebSocket & { intents?: number }).intents ?? 0;
      if (intent !== undefined && (intents & intent) === 0) continue;
      this.seq += 1;
      ws.send(JSON.stringify({ op: 0, t, s: this.seq, d }));
    }
  }

  private messageBase(id: string, channelId: string, author: FakeUser, content: string): Record<string, unknown> {
    return {
      id,
      channel_id: channelId,
      author: { discriminator: "0", avatar: null, global_name: null, ...author },
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      type: 0,
      flags: 0,
      components: [],
    };
  }

  private onGateway(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 } }));
    ws.on("message", (raw) => {
      const payload = JSON.parse(String(raw)) as { op: number; d: { token?: string; intents?: number } | number | null };
      if (payload.op === 1) ws.send(JSON.stringify({ op: 11 }));
      if (payload.op === 2 && typeof payload.d === "object" && payload.d) {
        if (payload.d.token !== this.token) return ws.close(4004, "Authentication failed.");
        const intents = payload.d.intents ?? 0;
        (ws as WebSocket & { intents?: number }).intents = intents;
        this.identifies.push({ intents });
        this.seq += 1;
        ws.send(JSON.stringify({
          op: 0, t: "READY", s: this.seq,
          d: {
            v: 10, user: { discriminator: "0", avatar: null, global_name: null, verified: true, mfa_enabled: false, flags: 0, ...this.bot },
            guilds: this.guilds.map((g) => ({ id: g.id, unavailable: true })),
            session_id: randomBytes(8).toString("hex"), resume_gateway_url: `ws://127.0.0.1:${this.port}/gateway`,
            shard: [0, 1], application: { id: this.applicationId, flags: 0 }, private_channels: [], relationships: [],
          },
        }));
        for (const g of this.guilds) {
          this.seq += 1;
          ws.send(JSON.stringify({ op: 0, t: "GUILD_CREATE", s: this.seq, d: this.guildPayload(g) }));
        }
      }
    });
  }

  private guildPayload(g: { id: string; channelIds: string[] }): Record<string, unknown> {
    return {
      id: g.id, name: "Team", icon: null, owner_id: snowflake(), afk_timeout: 300, verification_level: 0,
      default_message_notifications: 0, explicit_content_filter: 0, mfa_level: 0, premium_tier: 0, nsfw_level: 0,
      system_channel_flags: 0, features: [], emojis: [], stickers: [], large: false, unavailable: false, member_count: 2,
      joined_at: new Date().toISOString(), preferred_locale: "en-US", premium_progress_bar_enabled: false,
      roles: [{ id: g.id, name: "@everyone", permissions: "68608", position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 }],
      channels: g.channelIds.map((id, position) => ({ id, type: 0, name: `chan-${position}`, position, permission_overwrites: [], guild_id: g.id })),
      members: [], presences: [], voice_states: [], threads: [], stage_instances: [], guild_scheduled_events: [],
    };
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body?: unknown; raw?: Buffer; contentType?: string }> {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname.startsWith("/attachments/")) {
      const file = this.files.get(url.pathname);
      if (!file) return { status: 404, body: { code: 0, message: "404: Not Found" } };
      if (this.stall) await this.stall;
      this.downloads.push(url.pathname);
      return { status: 200, raw: file.bytes, contentType: file.contentType };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const text = raw.toString("utf8");
    let body: unknown = text && req.headers["content-type"]?.includes("json") ? JSON.parse(text) : text || null;
    // Messages with files: multipart/form-data with `payload_json` and `files[n]` (Discord API reference, "Uploading Files").
    const uploaded: { filename: string; bytes: Buffer }[] = [];
    if (/^multipart\/form-data/i.test(req.headers["content-type"] ?? "")) {
      const form = await new globalThis.Response(raw, { headers: { "content-type": String(req.headers["content-type"]) } }).formData();
      body = JSON.parse(String(form.get("payload_json") ?? "{}"));
      for (const [key, value] of form.entries()) {
        if (/^files\[\d+\]$/.test(key) && typeof value !== "string") uploaded.push({ filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) });
      }
    }
    const method = req.method ?? "GET";
    const path = url.pathname.replace(/^\/api/, "");
    this.calls.push({ method, path, query: url.search, body, at: Date.now() });
    const err = (status: number, code: number, message: string): { status: number; body: unknown } => ({ status, body: { code, message } });
    const isWebhook = path.startsWith("/v10/webhooks/") || path.startsWith("/v10/interactions/");
    if (!isWebhook && req.headers.authorization !== `Bot ${this.token}`) return err(401, 0, "401: Unauthorized");
    const parts = path.split("/").filter(Boolean).slice(1);
    const [a, b, c, d] = parts;

    if (method === "GET" && a === "gateway" && b === "bot") {
      return { status: 200, body: { url: `ws://127.0.0.1:${this.port}/gateway`, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } } };
    }
    if (method === "GET" && a === "users" && b === "@me" && !c) return { status: 200, body: this.bot };
    if (method === "POST" && a === "users" && b === "@me" && c === "channels") {
      const recipient = (body as { recipient_id?: string }).recipient_id ?? "";
      const known = [...this.dmChannels.values()].find((u) => u.id === recipient);
      if (!known) return err(404, 10013, "Unknown User");
      return { status: 200, body: { id: this.dmChannelOf(known), type: 1, recipients: [known], last_message_id: null } };
    }
    if (a === "channels" && b) {
      const dmUser = this.dmChannels.get(b);
      const guildId = this.guildChannels.get(b);
      if (!dmUser && !guildId) return err(404, 10003, "Unknown Channel");
      if (method === "GET" && !c) {
        return { status: 200, body: dmUser ? { id: b, type: 1, recipients: [dmUser], last_message_id: null } : { id: b, type: 0, guild_id: guildId, name: "chan", position: 0, permission_overwrites: [] } };
      }
      if (method === "POST" && c === "typing") return { status: 204 };
      if (c === "messages") {
        if (dmUser && this.blocked.has(dmUser.id)) return err(403, 50007, "Cannot send messages to this user");
        const m = body as { content?: string; flags?: number; components?: { components?: unknown[] }[] };
        const invalid = invalidPayload(m);
        if (invalid) return { status: 400, body: { code: 50035, message: "Invalid Form Body", errors: invalid } };
        if (method === "POST" && !d) {
          if (!m.content && (m.components?.length ?? 0) === 0 && uploaded.length === 0) return err(400, 50006, "Cannot send an empty message");
          // Discord: at most 10 files per message, 10 MiB each for bots without boosts.
          if (uploaded.length > 10 || uploaded.some((f) => f.bytes.length > 10 * 1024 * 1024)) return err(413, 40005, "Request entity too large");
          const stored: StoredMessage = { id: snowflake(), channel_id: b, content: m.content ?? "", components: m.components ?? [], flags: m.flags ?? 0, edits: 0, attachments: uploaded };
          this.messages.set(stored.id, stored);
          return { status: 200, body: { ...this.messageBase(stored.id, b, this.bot, stored.content), components: stored.components } };
        }
        if (method === "PATCH" && d) {
          const stored = this.messages.get(d);
          if (!stored || stored.channel_id !== b) return err(404, 10008, "Unknown Message");
          if (m.content !== undefined) stored.content = m.content;
          if (m.components !== undefined) stored.components = m.components;
          if (m.flags !== undefined) stored.flags = m.flags;
          stored.edits += 1;
          return { status: 200, body: { ...this.messageBase(stored.id, b, this.bot, stored.content), components: stored.components, edited_timestamp: new Date().toISOString() } };
        }
      }
    }
    if (method === "POST" && a === "interactions" && b && d === "callback") {
      const pending = this.interactions.get(b);
      if (!pending || pending.token !== c || Date.now() - pending.dispatchedAt > INTERACTION_DEADLINE_MS) return err(404, 10062, "Unknown interaction");
      if (pending.acknowledged) return err(400, 40060, "Interaction has already been acknowledged.");
      pending.acknowledged = true;
      return { status: 204 };
    }
    if (method === "POST" && a === "webhooks" && b === this.applicationId && c) {
      const pending = [...this.interactions.values()].find((i) => i.token === c);
      if (!pending?.acknowledged) return err(404, 10015, "Unknown Webhook");
      const m = body as { content?: string; flags?: number; components?: unknown[] };
      const stored: StoredMessage = { id: snowflake(), channel_id: "", content: m.content ?? "", components: m.components ?? [], flags: m.flags ?? 0, edits: 0, attachments: [] };
      this.followUps.push(stored);
      return { status: 200, body: { ...this.messageBase(stored.id, "0", this.bot, stored.content), flags: stored.flags, webhook_id: this.applicationId } };
    }
    return err(404, 0, "404: Not Found");
  }
}

/** Discord's validation of a message body (the part discord.js does not check client-side). */
function invalidPayload(m: { content?: string; components?: { components?: unknown[] }[] }): Record<string, unknown> | null {
  if ((m.content?.length ?? 0) > 2000) return { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } };
  if ((m.components?.length ?? 0) > 5) return { components: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 5 or fewer in length." }] } };
  if (m.components?.some((row) => (row.components?.length ?? 0) > 5)) return { components: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 5 or fewer in length." }] } };
  return null;
}
