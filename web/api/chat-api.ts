import { setTimeout as sleep } from "node:timers/promises";
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { type InboundEvent, type InboundOutcome, parseCardView } from "../../core/channels/index.js";
import type { Clock } from "../../core/clock.js";
import type { PersonId } from "../../core/ids.js";
import type { Store } from "../../core/storage/index.js";
import type { LocalMessage } from "../../core/channels/index.js";
import { MESSAGE_TEXT_MAX, tooLongMessage } from "../shared/index.js";
import { localAccountOf, webContext } from "./auth.js";
import { plainErrors } from "./plain-errors.js";
import { inFirstShownOrder, type ChatLog } from "./chat-log.js";

/** Longest long-poll (ms); the page polls again at once, so a server restart is noticed within a poll. */
export const LIVE_WAIT_MAX_MS = 25_000;

const clientId = z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "1–100 characters of A–Z a–z 0–9 _ . : -");
const sendBody = z
  .object({
    text: z.string().refine((t) => t.trim().length > 0, "Please write a message first."),
    clientMessageId: clientId,
  })
  .strict();
const pressBody = z.object({ messageId: z.string().min(1).max(100), buttonId: z.string().min(1).max(200), clientActionId: clientId }).strict();
const historyQuery = z.object({
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(30),
});
const liveQuery = z.object({
  after: z.coerce.number().int().min(0),
  wait: z.coerce.number().int().min(0).max(60_000).default(0).transform((ms) => Math.min(ms, LIVE_WAIT_MAX_MS)),
  typing: z.enum(["0", "1"]).default("0").transform((v) => v === "1"),
});

/** One log entry as the page gets it. */
export function chatItemJson(m: LocalMessage) {
  // An approval card comes with its structured view (Sentinel's CardView); `text` is its markdown form.
  const card = parseCardView(m.card);
  // Files come with the address the page fetches them at (web/api/chat-files.ts) and, being artifacts, their own page.
  const attachments = m.attachments.map((a) => ({ ...a, url: `/api/web/chat/files/${encodeURIComponent(m.id)}/${encodeURIComponent(a.id)}`, page: `/a/${encodeURIComponent(a.id)}` }));
  return { id: m.id, seq: m.seq, role: m.role, channel: m.channel, text: m.text, buttons: m.buttons, ...(card ? { card } : {}), ...(attachments.length > 0 ? { attachments } : {}), at: m.at.toISOString() };
}

/** What the chat API needs. */
export interface ChatApiDeps {
  store: Pick<Store, "persons">;
  log: ChatLog;
  clock: Clock;
  /** Hands an event to the core through the (recording) local channel. */
  deliver: (event: InboundEvent) => Promise<InboundOutcome>;
  /** Whether Familiar is typing to this local account now. */
  typing: (account: string) => boolean;
  /** MAX_ATTACHMENT_BYTES, told to the page (it does not upload a file over it, and says so through the core). */
  maxFileBytes?: number;
  /** Told each time a page polls for news: while one polls, the person counts as reachable here. */
  presence?: { seen(personId: PersonId): void };
}

/** The text's length when a body's `text` is a string over {@link MESSAGE_TEXT_MAX}, else null. */
export function overLimit(body: unknown): number | null {
  const text = z.object({ text: z.string() }).safeParse(body);
  return text.success && text.data.text.length > MESSAGE_TEXT_MAX ? text.data.text.length : null;
}

/** The signed-in person of a live poll, noted as having a page open. */
function present(deps: ChatApiDeps, req: Request) {
  const { person } = webContext(req);
  deps.presence?.seen(person.id);
  return person;
}

function bad(res: Response, error: z.ZodError): void {
  res.status(400).json({ error: plainErrors(error) });
}

/**
 * The web chat over the person's whole conversation (mount behind `requireSession`):
 * - `GET /api/web/chat?before=&limit=` — a page of the log, oldest first, newest page without
 *   `before`; `{items, before}` where `before` (null at the start) loads the page before it;
 *   `cursor` is where live polling starts;
 * - `GET /api/web/chat/live?after=&wait=&typing=` — what changed after the cursor (new messages and
 *   edited cards), held up to `wait` ms (at most 25 s) while nothing does; `{items, cursor, typing}`;
 * - `POST /api/web/chat` `{text, clientMessageId}` — says something on the local channel; a retry
 *   with the same client id is recognised and not said twice; a text over `MESSAGE_TEXT_MAX`
 *   characters is refused with 413 `{error, limit, length}` (never shortened);
 * - `POST /api/web/chat/press` `{messageId, buttonId, clientActionId}` — presses a card's button;
 *   it reaches the same press handlers as a messenger button.
 */
export function chatApi(deps: ChatApiDeps): Router {
  const { log } = deps;
  const router = Router();

  router.get("/api/web/chat", async (req, res) => {
    const q = historyQuery.safeParse(req.query);
    if (!q.success) return bad(res, q.error);
    const { person } = webContext(req);
    const items = await log.page(person.id, q.data.before, q.data.limit + 1);
    const more = items.length > q.data.limit;
    // The oldest by seq stays for the next page; the rest shows as it was first shown (edited cards in place).
    const shown = inFirstShownOrder(more ? items.slice(1) : items);
    const cursor = q.data.before === undefined ? (await log.page(person.id, undefined, 1))[0]?.seq ?? 0 : null;
    res.json({ items: shown.map(chatItemJson), before: more ? Math.min(...shown.map((m) => m.seq)) : null, cursor, maxFileBytes: deps.maxFileBytes ?? null });
  });

  router.get("/api/web/chat/live", async (req, res) => {
    const q = liveQuery.safeParse(req.query);
    if (!q.success) return bad(res, q.error);
    const person = present(deps, req);
    const account = await localAccountOf(deps.store, person);
    const wait = log.waitForActivity(person.id);
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    res.on("close", onClose);
    try {
      let items = await log.after(person.id, q.data.after, 100);
      if (items.length === 0 && q.data.wait > 0 && deps.typing(account) === q.data.typing) {
        // While typing shows, poll in short steps so the indicator goes off when typing ends.
        const step = deps.typing(account) ? Math.min(q.data.wait, 1_000) : q.data.wait;
        await Promise.race([wait.activity, sleep(step, undefined, { signal: abort.signal }).catch(() => undefined)]);
        if (abort.signal.aborted) return;
        items = await log.after(person.id, q.data.after, 100);
      }
      res.json({ items: items.map(chatItemJson), cursor: items.at(-1)?.seq ?? q.data.after, typing: deps.typing(account) });
    } finally {
      wait.cancel();
      abort.abort();
      res.off("close", onClose);
    }
  });

  router.post("/api/web/chat", async (req, res) => {
    // Over the stated limit: refused whole with the limit in words (413), never cut.
    const length = overLimit(req.body);
    if (length !== null) return void res.status(413).json({ error: tooLongMessage(length), limit: MESSAGE_TEXT_MAX, length });
    const body = sendBody.safeParse(req.body);
    if (!body.success) return bad(res, body.error);
    const { person } = webContext(req);
    const account = await localAccountOf(deps.store, person);
    const outcome = await deps.deliver({
      kind: "message",
      channel: "local",
      // Scoped to the account: a retried POST carries the same id and is recognised as a duplicate.
      updateId: `${account}:${body.data.clientMessageId}`,
      accountId: account,
      address: account,
      displayName: person.displayName,
      text: body.data.text,
      at: deps.clock.now(),
    });
    res.status(202).json({ outcome: outcome.status, notice: outcome.notice ?? null });
  });

  router.post("/api/web/chat/press", async (req, res) => {
    const body = pressBody.safeParse(req.body);
    if (!body.success) return bad(res, body.error);
    const { person } = webContext(req);
    const message = await log.get(person.id, body.data.messageId);
    if (!message) return void res.status(404).json({ error: "There is no such message in your chat." });
    if (!message.buttons.some((b) => b.id === body.data.buttonId)) return void res.status(409).json({ error: "This card was answered already." });
    const account = await localAccountOf(deps.store, person);
    const outcome = await deps.deliver({
      kind: "press",
      channel: "local",
      updateId: `${account}:${body.data.clientActionId}`,
      accountId: account,
      address: account,
      displayName: person.displayName,
      buttonId: body.data.buttonId,
      // The logged copy of the card: Sentinel accepts a press on it as a press on the card itself.
      messageRef: message.id,
      at: deps.clock.now(),
    });
    res.json({ outcome: outcome.status, notice: outcome.notice ?? null });
  });

  return router;
}
