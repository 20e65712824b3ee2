import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * A fake of the Slack Web API (and of Socket Mode's WebSocket) on 127.0.0.1, for driving the real
 * Bolt / WebClient over real HTTP. Records every call. Bodies arrive the way WebClient sends them:
 * form-encoded, nested JSON (blocks) as strings, the token in `Authorization: Bearer`.
 *
 * It enforces the Block Kit limits Slack enforces (section text ≤ 3,000, ≤ 50 blocks, ≤ 25 elements
 * per actions block, action_id ≤ 255, value ≤ 2,000, button label ≤ 75, text ≤ 40,000) and can reject
 * long block messages below the documented totals (`blocksTooLongAt`), as Slack does.
 *
 * Files: `addFile` stores bytes and returns the file object an event carries; its
 * `url_private_download` points at this server (`/files-pri/T1-<id>/download/<name>`) and is served
 * only with the bot token in `Authorization: Bearer` — without it Slack (and this fake) answers its
 * sign-in page as HTML with status 200. Downloads are recorded in `downloads`.
 */

export interface FakeSlackCall {
  method: string;
  token: string | null;
  params: Record<string, unknown>;
  at: number;
}

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: Block[] | null;
}

export interface FakeSlackOptions {
  botToken: string;
  appToken?: string;
  /** Total section characters of one message above which chat.postMessage answers msg_blocks_too_long. */
  blocksTooLongAt?: number;
}

type Block = { type: string; text?: { text: string }; elements?: { action_id: string; value: string; text: { text: string } }[] };

/** One received Socket Mode ack. */
export interface SocketAck {
  envelope_id: string;
  at: number;
}

export class FakeSlackApi {
  readonly calls: FakeSlackCall[] = [];
  readonly messages: FakeSlackMessage[] = [];
  /** Files shared in a conversation through the external upload flow. */
  readonly files: { id: string; channel: string; filename: string; title: string; bytes: Buffer }[] = [];
  private readonly pendingUploads = new Map<string, { filename: string; length: number; bytes: Buffer | null }>();
  readonly acks: SocketAck[] = [];
  /** Channels that answer channel_not_found. */
  readonly goneChannels = new Set<string>();
  /** Scripted answers: method → queue of failures used before normal handling. */
  private readonly scripted = new Map<string, ({ error: string } | { status: 429; retryAfterSec: number })[]>();
  private server: Server | null = null;
  private wss: WebSocketServer | null = null;
  private sockets = new Set<WebSocket>();
  private tsCounter = 0;
  private fileCounter = 0;
  private readonly hostedFiles = new Map<string, { bytes: Buffer; mimetype: string }>();
  /** Paths of file downloads, with the token each carried (null: none). */
  readonly downloads: { path: string; token: string | null }[] = [];
  url = "";

  constructor(private readonly options: FakeSlackOptions) {}

  /** Web API base as SLACK_API_URL expects it (ends in `/api/`). */
  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      void this.handle(req).then(
        (answer: { status: number; body: unknown; headers?: Record<string, string>; raw?: Buffer }) => {
          res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
          res.end(answer.raw ?? JSON.stringify(answer.body));
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
    });
    this.wss = new WebSocketServer({ server, path: "/link" });
    this.wss.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("message", (data) => {
        const msg = JSON.parse(String(data)) as { envelope_id?: string };
        if (msg.envelope_id) this.acks.push({ envelope_id: msg.envelope_id, at: Date.now() });
      });
      socket.send(JSON.stringify({ type: "hello", num_connections: 1, debug_info: { host: "fake" }, connection_info: { app_id: "A1" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.terminate();
    this.wss?.close();
    const server = this.server;
    this.server = null;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /**
   * Stores a file and returns the file object a `file_share` message event carries. `subtype:
   * "slack_audio"` makes it a voice clip recorded in Slack.
   */
  addFile(bytes: Buffer, file: { name: string; mimetype: string; title?: string; subtype?: string; durationMs?: number }): Record<string, unknown> {
    const id = `F${String(++this.fileCounter).padStart(6, "0")}`;
    const path = `/files-pri/T1-${id}/download/${encodeURIComponent(file.name)}`;
    this.hostedFiles.set(path, { bytes, mimetype: file.mimetype });
    return {
      id,
      name: file.name,
      title: file.title ?? file.name,
      mimetype: file.mimetype,
      filetype: file.name.split(".").pop(),
      size: bytes.length,
      mode: "hosted",
      url_private: `${this.url}/files-pri/T1-${id}/${encodeURIComponent(file.name)}`,
      url_private_download: `${this.url}${path}`,
      ...(file.subtype ? { subtype: file.subtype } : {}),
      ...(file.durationMs ? { duration_ms: file.durationMs } : {}),
    };
  }

  /** The next `count` calls of `method` fail with Slack error `error` (ok: false) or an HTTP 429. */
  failNext(method: string, failure: { error: string } | { status: 429; retryAfterSec: number }, count = 1): void {
    const queue = this.scripted.get(method) ?? [];
    for (let i = 0; i < count; i++) queue.push(failure);
    this.scripted.set(method, queue);
  }

  callsOf(method: string): FakeSlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Number of open Socket Mode connections. */
  get socketCount(): number {
    return this.sockets.size;
  }

  /**
   * Sends a Socket Mode envelope (`events_api`, `interactive`) on every open socket; resolves with
   * the envelope id. Acks land in `acks`.
   */
  sendEnvelope(type: "events_api" | "interactive", payload: unknown, retryAttempt = 0): string {
    const envelopeId = `env-${++this.tsCounter}`;
    const frame = JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: false, retry_attempt: retryAttempt, retry_reason: retryAttempt ? "timeout" : "" });
    for (const s of this.sockets) s.send(frame);
    return envelopeId;
  }

  private nextTs(): string {
    this.tsCounter += 1;
    return `1700000100.${String(this.tsCounter).padStart(6, "0")}`;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown; headers?: Record<string, string>; raw?: Buffer }> {
    if (req.method === "GET" && (req.url ?? "").startsWith("/files-pri/")) return this.serveFile(req);
    // Step 2 of Slack's external upload: the file's bytes posted to the upload_url we handed out.
    const upload = /^\/upload\/(F\w+)$/.exec(req.url ?? "");
    if (upload) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const pending = this.pendingUploads.get(upload[1]!);
      if (!pending) return { status: 404, body: "unknown upload" };
      const raw = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      if (/^multipart\/form-data/i.test(type)) {
        // The WebClient posts the bytes as a multipart form with one file part.
        const form = await new globalThis.Response(raw, { headers: { "content-type": type } }).formData();
        const part = [...form.values()].find((v): v is File => typeof v !== "string");
        pending.bytes = part ? Buffer.from(await part.arrayBuffer()) : null;
      } else pending.bytes = raw;
      return { status: 200, body: "OK - 1" };
    }
    const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0]!;
    const raw = await new Promise<string>((resolve) => {
      let data = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (data += c));
      req.on("end", () => resolve(data));
    });
    const params: Record<string, unknown> = {};
    if ((req.headers["content-type"] ?? "").includes("application/json")) Object.assign(params, JSON.parse(raw || "{}"));
    else for (const [k, v] of new URLSearchParams(raw)) params[k] = k === "blocks" ? JSON.parse(v) : v;
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : typeof params.token === "string" ? params.token : null;
    this.calls.push({ method, token, params, at: Date.now() });

    const scripted = this.scripted.get(method)?.shift();
    if (scripted && "status" in scripted) return { status: 429, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": String(scripted.retryAfterSec) } };
    if (scripted) return { status: 200, body: { ok: false, error: scripted.error } };
    return { status: 200, body: this.answer(method, token, params) };
  }

  private serveFile(req: IncomingMessage): { status: number; body: unknown; headers?: Record<string, string>; raw?: Buffer } {
    const path = (req.url ?? "").split("?")[0]!;
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : null;
    this.downloads.push({ path, token });
    const file = this.hostedFiles.get(path);
    if (token !== this.options.botToken || !file) {
      return { status: 200, body: null, headers: { "content-type": "text/html; charset=utf-8" }, raw: Buffer.from("<!DOCTYPE html><html><body>Sign in to Slack</body></html>") };
    }
    return { status: 200, body: null, headers: { "content-type": file.mimetype }, raw: file.bytes };
  }

  private answer(method: string, token: string | null, p: Record<string, unknown>): unknown {
    if (method === "apps.connections.open") {
      return token && token === this.options.appToken ? { ok: true, url: `${this.url.replace("http", "ws")}/link` } : { ok: false, error: "invalid_auth" };
    }
    if (token !== this.options.botToken) return { ok: false, error: "invalid_auth" };
    const channel = String(p.channel ?? "");
    if (this.goneChannels.has(channel)) return { ok: false, error: "channel_not_found" };
    switch (method) {
      case "auth.test":
        return { ok: true, url: "https://fake.slack.test/", team: "Fake", user: "familiar", team_id: "T1", user_id: "UBOT", bot_id: "BBOT" };
      case "conversations.open":
        return { ok: true, channel: { id: `D${String(p.users).slice(1)}` } };
      case "chat.postMessage": {
        const problem = this.checkPayload(p);
        if (problem) return { ok: false, error: problem };
        const message = { channel, ts: this.nextTs(), text: String(p.text ?? ""), blocks: (p.blocks as Block[] | undefined) ?? null };
        this.messages.push(message);
        return { ok: true, channel, ts: message.ts, message: { text: message.text } };
      }
      case "chat.update": {
        const message = this.messages.find((m) => m.channel === channel && m.ts === p.ts);
        if (!message) return { ok: false, error: "message_not_found" };
        const problem = this.checkPayload(p);
        if (problem) return { ok: false, error: problem };
        message.text = String(p.text ?? "");
        message.blocks = (p.blocks as Block[] | undefined) ?? message.blocks;
        if (Array.isArray(p.blocks) && p.blocks.length === 0) message.blocks = null;
        return { ok: true, channel, ts: message.ts };
      }
      case "chat.delete": {
        const i = this.messages.findIndex((m) => m.channel === channel && m.ts === p.ts);
        if (i < 0) return { ok: false, error: "message_not_found" };
        this.messages.splice(i, 1);
        return { ok: true, channel, ts: p.ts };
      }
      case "chat.postEphemeral":
        return { ok: true, message_ts: this.nextTs() };
      case "files.getUploadURLExternal": {
        const fileId = `F${++this.tsCounter}`;
        this.pendingUploads.set(fileId, { filename: String(p.filename ?? ""), length: Number(p.length ?? 0), bytes: null });
        return { ok: true, upload_url: `${this.url}/upload/${fileId}`, file_id: fileId };
      }
      case "files.completeUploadExternal": {
        const files = (typeof p.files === "string" ? JSON.parse(p.files) : p.files) as { id: string; title?: string }[];
        const done = [];
        for (const f of files) {
          const pending = this.pendingUploads.get(f.id);
          if (!pending || pending.bytes === null || pending.bytes.length !== pending.length) return { ok: false, error: "file_upload_incomplete" };
          this.files.push({ id: f.id, channel: String(p.channel_id ?? ""), filename: pending.filename, title: f.title ?? pending.filename, bytes: pending.bytes });
          this.pendingUploads.delete(f.id);
          done.push({ id: f.id, title: f.title ?? pending.filename });
        }
        return { ok: true, files: done };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  /** Slack's checks on a message payload (Block Kit reference, chat.postMessage errors). */
  private checkPayload(p: Record<string, unknown>): string | null {
    const text = typeof p.text === "string" ? p.text : "";
    const blocks = (p.blocks as Block[] | undefined) ?? [];
    if (text.length > 40_000) return "msg_too_long";
    if (!text && blocks.length === 0) return "no_text";
    if (blocks.length > 50) return "invalid_blocks";
    let sectionChars = 0;
    for (const b of blocks) {
      if (b.type === "section") {
        const t = b.text?.text ?? "";
        if (t.length === 0 || t.length > 3_000) return "invalid_blocks";
        sectionChars += t.length;
      } else if (b.type === "actions") {
        const els = b.elements ?? [];
        if (els.length === 0 || els.length > 25) return "invalid_blocks";
        for (const e of els) if (e.action_id.length > 255 || e.value.length > 2_000 || e.text.text.length > 75) return "invalid_blocks";
        if (new Set(els.map((e) => e.action_id)).size !== els.length) return "invalid_blocks";
      } else return "invalid_blocks";
    }
    if (this.options.blocksTooLongAt !== undefined && sectionChars > this.options.blocksTooLongAt) return "msg_blocks_too_long";
    return null;
  }
}
