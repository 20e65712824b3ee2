import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { z } from "zod";
import {
  type InboundMessage,
  type InboundOutcome,
  type InboundPress,
  parseCardView,
  type CardView,
} from "../../core/channels/index.js";
import { systemClock, type Clock } from "../../core/clock.js";
import type { Logger } from "../../core/log/index.js";
import type { LocalMessage } from "../../core/channels/index.js";
import { asId, type ArtifactId } from "../../core/ids.js";
import { ALLOW_REMOTE_SETTING, checkExpressRequest, boundedJson } from "../http/index.js";
import { LocalChannelNotStartedError, type LocalChannel } from "../../bots/local/index.js";
import { servePage } from "./page.js";
import { MESSAGE_BODY_MAX_BYTES, MESSAGE_TEXT_MAX, tooLongMessage } from "../shared/index.js";

/** Longest long-poll a client may ask for with `wait` (ms); larger values are clamped. */
export const MAX_WAIT_MS = 25_000;
/** Most messages one `GET /api/local/messages` returns; the client polls again from the cursor. */
export const PAGE_LIMIT = 100;

const userSchema = z
  .string({ error: "must be a string" })
  .regex(/^[A-Za-z0-9_.@-]{1,64}$/, { error: "must be 1–64 characters of A–Z a–z 0–9 _ . @ -" });
/** Client-chosen idempotency ids (so a retried POST is deduplicated by the core). */
const clientIdSchema = z
  .string({ error: "must be a string" })
  .regex(/^[A-Za-z0-9_.:@-]{1,128}$/, { error: "must be 1–128 characters of A–Z a–z 0–9 _ . : @ -" });

const postMessageSchema = z.object(
  {
    user: userSchema,
    text: z
      .string({ error: "must be a string" })
      .min(1, { error: "must not be empty" })
      .refine((t) => t.trim().length > 0, { error: "must not be only whitespace" }),
    clientMessageId: clientIdSchema.optional(),
  },
  { error: "body must be a JSON object (send Content-Type: application/json)" },
);

const pressSchema = z.object(
  {
    user: userSchema,
    messageId: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).max(128),
    buttonId: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).max(64),
    clientActionId: clientIdSchema.optional(),
  },
  { error: "body must be a JSON object (send Content-Type: application/json)" },
);

const listQuerySchema = z.object({
  user: userSchema,
  after: z
    .string({ error: "must be a single cursor" })
    .regex(/^\d{1,15}$/, { error: "must be a cursor returned by this API (a non-negative integer)" })
    .transform(Number)
    .optional(),
  wait: z
    .string({ error: "must be a single number" })
    .regex(/^\d{1,9}$/, { error: `must be a whole number of milliseconds (0–${MAX_WAIT_MS})` })
    .transform((ms) => Math.min(Number(ms), MAX_WAIT_MS))
    .optional(),
  typing: z
    .enum(["0", "1"], { error: "must be 0 or 1 (whether the page shows the typing indicator now)" })
    .transform((v) => v === "1")
    .optional(),
});

/** One message as the JSON API shows it. */
export interface LocalMessageJson {
  id: string;
  text: string;
  /** Absent when the message has no buttons. */
  buttons?: { id: string; label: string }[];
  /** An approval card's structured view (Sentinel's `CardView`); `text` is its markdown fallback. */
  card?: CardView;
  /** Files sent with the message; `url` fetches one (for this user only). Absent when none. */
  attachments?: { id: string; name: string; mimeType: string; size: number; url: string }[];
  /** ISO-8601 UTC. */
  at: string;
}

/** Options of `localChatRouter`. */
export interface LocalChatRouterOptions {
  /** `LOCAL_CHAT_ALLOW_REMOTE`: serve non-loopback clients too (off by default: it has no login). */
  allowRemote: boolean;
  logger: Logger;
  clock?: Clock;
  /** Reads an attachment's bytes by artifact id (the route checks the message was sent to the asking user). */
  attachment?: (id: ArtifactId) => Promise<{ name: string; mimeType: string; bytes: Buffer } | null>;
}

/**
 * The local web chat over HTTP: the page at `GET /` (with its script and vendored markdown
 * libraries under `/local/`) and the JSON API under `/api/local/`:
 *
 * - `POST /api/local/messages` `{user, text, clientMessageId?}` → 202 `{accepted: true, updateId,
 *   outcome, notice?}` (outcome: what the core made of it — accepted, duplicate, handled, ignored);
 *   the message reaches the core as an `InboundMessage` (accountId = address = user; updateId =
 *   `<user>:<clientMessageId>` when given, so a retried POST is deduplicated, else a fresh id).
 * - `GET /api/local/messages?user=&after=&wait=` → `{messages, cursor, typing}`: Familiar's messages
 *   to that user with seq after the cursor (an edited message comes again with a new seq). With
 *   `wait` (ms, at most 25 000) an empty answer is held until a message, an edit or typing arrives,
 *   or typing ends; `typing=1` tells the server the page already shows the indicator (else a poll
 *   while Familiar is typing answers at once, so the page learns of it).
 * - `POST /api/local/actions` `{user, messageId, buttonId, clientActionId?}` → 202 (same body; a
 *   `notice` such as "this request expired" is for the person); 404 when the
 *   message is not that user's, 400 when it has no such button (any more).
 *
 * Bad input is a 400 `{error, issues}` and never reaches the core. Only loopback clients are served
 * unless `allowRemote`; others get 403. The guard and the JSON body parser apply to these paths only,
 * so other routers mounted on the same app (webhooks) are unaffected.
 */
export function localChatRouter(channel: LocalChannel, options: LocalChatRouterOptions): Router {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const router = express.Router();

  const guard = (req: Request, res: Response, next: NextFunction): void => {
    const address = req.socket.remoteAddress;
    const verdict = checkExpressRequest(req, options.allowRemote);
    if (verdict.ok) return next();
    logger.warn({ address, path: req.path, reason: verdict.reason }, "local chat: refused a request");
    res.status(403).json({
      error: `The local chat only serves this machine: ${verdict.reason}. ${ALLOW_REMOTE_SETTING}=true allows other addresses — it has no login, so only do that on a trusted network.`,
    });
  };

  router.get("/", guard, servePage("index.html"));
  router.use("/local", guard);
  router.get("/local/:asset", (req, res, next) => servePage(req.params.asset)(req, res, next));

  router.use("/api/local", guard, ...boundedJson({ limit: MESSAGE_BODY_MAX_BYTES, source: "local" }));

  router.post("/api/local/messages", async (req, res) => {
    // Over the stated limit: refused whole with the limit in words (413), never cut.
    const long = z.object({ text: z.string().min(MESSAGE_TEXT_MAX + 1) }).safeParse(req.body);
    if (long.success) return void res.status(413).json({ error: tooLongMessage(long.data.text.length), limit: MESSAGE_TEXT_MAX, length: long.data.text.length });
    const body = parse(postMessageSchema, req.body, res);
    if (!body) return;
    // Scoped to the user: client ids are chosen by clients, and two users may pick the same one.
    const updateId = body.clientMessageId ? `${body.user}:${body.clientMessageId}` : randomUUID();
    const event: InboundMessage = {
      kind: "message",
      channel: "local",
      updateId,
      accountId: body.user,
      address: body.user,
      displayName: body.user,
      text: body.text,
      at: clock.now(),
    };
    const outcome = await channel.deliver(event);
    res.status(202).json(accepted(updateId, outcome));
  });

  router.get("/api/local/messages", async (req, res) => {
    const query = parse(listQuerySchema, req.query, res);
    if (!query) return;
    const after = query.after ?? 0;
    const waitMs = query.wait ?? 0;
    // Subscribe before reading, so a message stored between the read and the wait still wakes us.
    const wait = channel.waitForActivity(query.user);
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    res.on("close", onClose);
    try {
      let messages = await channel.listMessages(query.user, after, PAGE_LIMIT);
      // Answer at once when the typing state differs from what the client shows (default: off).
      if (messages.length === 0 && waitMs > 0 && channel.isTyping(query.user) === (query.typing ?? false)) {
        // While typing shows, wake when it ends too, so the page can hide the indicator.
        const typingLeft = channel.typingRemainingMs(query.user);
        const timeoutMs = typingLeft > 0 ? Math.min(waitMs, typingLeft + 20) : waitMs;
        await Promise.race([wait.activity, sleep(timeoutMs, undefined, { signal: abort.signal }).catch(() => undefined)]);
        if (abort.signal.aborted) return;
        messages = await channel.listMessages(query.user, after, PAGE_LIMIT);
      }
      const last = messages.at(-1);
      res.json({
        messages: messages.map(toJson),
        cursor: String(last ? last.seq : after),
        typing: channel.isTyping(query.user),
      });
    } finally {
      wait.cancel();
      abort.abort();
      res.off("close", onClose);
    }
  });

  router.get("/api/local/messages/:messageId/attachments/:artifactId", async (req, res) => {
    const query = parse(z.object({ user: z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/) }), req.query, res);
    if (!query) return;
    const message = await channel.getMessage(req.params.messageId);
    const listed = message?.user === query.user ? message.attachments.find((a) => a.id === req.params.artifactId) : undefined;
    const file = listed && options.attachment ? await options.attachment(asId("artifact", listed.id)).catch(() => null) : null;
    if (!file) {
      res.status(404).json({ error: "There is no such attachment for you." });
      return;
    }
    const inline = /^image\/(png|jpeg|gif|webp)$/.test(file.mimeType);
    res.setHeader("content-type", file.mimeType);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("content-security-policy", "default-src 'none'; sandbox");
    res.setHeader("content-disposition", `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(file.name)}`);
    res.send(file.bytes);
  });

  router.post("/api/local/actions", async (req, res) => {
    const body = parse(pressSchema, req.body, res);
    if (!body) return;
    const message = await channel.getMessage(body.messageId);
    if (!message || message.user !== body.user) {
      res.status(404).json({ error: `There is no message ${body.messageId} for ${body.user}.` });
      return;
    }
    if (!message.buttons.some((b) => b.id === body.buttonId)) {
      res.status(400).json({
        error: `Message ${body.messageId} has no button ${body.buttonId} (it may have been answered already).`,
      });
      return;
    }
    const updateId = body.clientActionId ? `${body.user}:${body.clientActionId}` : randomUUID();
    const event: InboundPress = {
      kind: "press",
      channel: "local",
      updateId,
      accountId: body.user,
      address: body.user,
      displayName: body.user,
      buttonId: body.buttonId,
      messageRef: message.id,
      at: clock.now(),
    };
    const outcome = await channel.deliver(event);
    res.status(202).json(accepted(updateId, outcome));
  });

  router.use("/api/local", (_req, res) => {
    res.status(404).json({ error: "No such local chat endpoint: use /api/local/messages or /api/local/actions." });
  });

  router.use("/api/local", (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const type = (err as { type?: unknown }).type;
    if (type === "entity.parse.failed") {
      res.status(400).json({ error: "The request body is not valid JSON." });
    } else if (type === "entity.too.large") {
      res.status(413).json({ error: `The request body is larger than ${MESSAGE_BODY_MAX_BYTES} bytes.` });
    } else if (err instanceof LocalChannelNotStartedError) {
      res.status(503).json({ error: "Familiar is still starting; try again in a moment." });
    } else {
      logger.error({ err, path: req.path }, "local chat: request failed");
      res.status(500).json({ error: "Familiar could not take this request; see the server log." });
    }
  });

  return router;
}

/**
 * The 202 body: `accepted` (the request was taken), the update id, what the core made of it
 * (`outcome`: accepted | duplicate | handled | ignored) and its `notice` for the person, if any.
 */
function accepted(updateId: string, outcome: InboundOutcome): Record<string, unknown> {
  const body: Record<string, unknown> = { accepted: true, updateId, outcome: outcome.status };
  if (outcome.notice) body.notice = outcome.notice;
  return body;
}

/** Parses `input` with `schema`; on failure answers 400 listing every problem and returns null. */
function parse<S extends z.ZodType>(schema: S, input: unknown, res: Response): z.infer<S> | null {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message));
  res.status(400).json({ error: `Invalid request: ${issues.join("; ")}`, issues });
  return null;
}

function toJson(message: LocalMessage): LocalMessageJson {
  const json: LocalMessageJson = { id: message.id, text: message.text, at: message.at.toISOString() };
  if (message.buttons.length > 0) json.buttons = message.buttons.map((b) => ({ id: b.id, label: b.label }));
  const card = parseCardView(message.card);
  if (card) json.card = card;
  if (message.attachments.length > 0) {
    json.attachments = message.attachments.map((a) => ({
      ...a,
      url: `/api/local/messages/${encodeURIComponent(message.id)}/attachments/${encodeURIComponent(a.id)}?user=${encodeURIComponent(message.user)}`,
    }));
  }
  return json;
}
