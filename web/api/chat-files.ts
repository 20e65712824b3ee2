/**
 * Files in the web chat, both ways:
 * - `POST /api/web/chat/files` (`multipart/form-data`: `clientMessageId`, optional `text`, up to
 *   {@link MAX_FILES_PER_MESSAGE} `file` parts, and optionally `skipped` — a JSON list of
 *   `{name, type, size}` the page found over the size limit and did not upload) says a message with
 *   files on the local channel. The files take the same path as a messenger's (core/inbound
 *   MediaIntake): the size limit (MAX_ATTACHMENT_BYTES, with the same honest answer for a file over
 *   it), saved to the workspace's inbox, an image shown to the model when it can see, a voice or
 *   audio recording transcribed. A retry with the same client id is not said twice. The body is read
 *   with a bound of its own (every file at the limit, plus room for the text): more is 413.
 * - `GET /api/web/chat/files/:messageId/:artifactId` — a file Familiar sent in the person's chat (on
 *   any channel): only one the person's chat log lists with that message. Images inline, everything
 *   else as a download, never rendered as a page of the app (`default-src 'none'; sandbox`, no
 *   sniffing).
 * Both sit behind the web app's gate and session (CSRF checked on the upload).
 */
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import mime from "mime-types";
import { z } from "zod";
import { AttachmentError, formatBytes, type InboundAttachment, type InboundEvent, type InboundOutcome } from "../../core/channels/index.js";
import type { Clock } from "../../core/clock.js";
import { asId, type ArtifactId, type PersonId } from "../../core/ids.js";
import type { Artifact } from "../../core/artifacts/index.js";
import type { AttachmentKind } from "../../core/conversation/index.js";
import type { Store } from "../../core/storage/index.js";
import { readBody, type WithRawBody } from "../http/index.js";
import { MESSAGE_BODY_MAX_BYTES, MESSAGE_TEXT_MAX, tooLongMessage } from "../shared/index.js";
import { localAccountOf, webContext } from "./auth.js";
import type { ChatLog } from "./chat-log.js";
import { plainErrors } from "./plain-errors.js";

/** Most files in one message from the web chat. */
export const MAX_FILES_PER_MESSAGE = 8;

/** Image types the page shows inline (and the file route serves inline). */
export const INLINE_IMAGE = /^image\/(png|jpeg|gif|webp)$/;

/** What the file routes need. */
export interface ChatFilesDeps {
  store: Pick<Store, "persons">;
  log: ChatLog;
  clock: Clock;
  /** MAX_ATTACHMENT_BYTES: the largest file taken in, bytes. */
  maxFileBytes: number;
  deliver: (event: InboundEvent) => Promise<InboundOutcome>;
  /** A file of the person (an artifact version) with its bytes, or null when it is gone or not theirs. */
  load: (personId: PersonId, id: ArtifactId) => Promise<{ artifact: Artifact; bytes: Buffer } | null>;
  /** The web app's gate and session check (web/api/auth.ts). */
  gate: RequestHandler;
  requireSession: (req: Request, res: Response, next: NextFunction) => Promise<void>;
}

const clientId = z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "1–100 characters of A–Z a–z 0–9 _ . : -");
const skippedList = z.array(z.object({ name: z.string().max(255), type: z.string().max(255), size: z.number().int().min(0) }).strict()).max(MAX_FILES_PER_MESSAGE);

/** The kind a file of this MIME type is taken in as: audio is a recording to transcribe, like a voice note. */
export function kindOfUpload(mimeType: string): AttachmentKind {
  if (mimeType.startsWith("image/")) return "image";
  if (mimeType.startsWith("audio/")) return "voice";
  if (mimeType.startsWith("video/")) return "video";
  return "document";
}

function attachment(name: string, type: string, size: number, bytes: Buffer | null): InboundAttachment {
  const mimeType = type || mime.lookup(name) || "application/octet-stream";
  return {
    kind: kindOfUpload(mimeType),
    mimeType,
    size,
    fileName: name || null,
    caption: null,
    emoji: null,
    durationSeconds: null,
    fetch: async (maxBytes) => {
      if (bytes === null || size > maxBytes) throw new AttachmentError("too_large", `${formatBytes(size)} is over the ${formatBytes(maxBytes)} limit`, { size, limit: maxBytes });
      return bytes;
    },
  };
}

/** The message's fields and files out of a multipart body; a string is the reason it is refused. */
async function parseUpload(req: Request & WithRawBody): Promise<{ clientMessageId: string; text: string; files: InboundAttachment[] } | string> {
  let form: FormData;
  try {
    form = await new Response(req.rawBody ?? Buffer.alloc(0), { headers: { "content-type": req.get("content-type") ?? "" } }).formData();
  } catch {
    return "The upload is not valid multipart/form-data.";
  }
  const id = clientId.safeParse(form.get("clientMessageId"));
  if (!id.success) return `clientMessageId: ${plainErrors(id.error)}`;
  const text = form.get("text");
  const uploaded = form.getAll("file").filter((f): f is File => typeof f !== "string");
  let skipped: z.infer<typeof skippedList> = [];
  const listed = form.get("skipped");
  if (typeof listed === "string" && listed !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(listed);
    } catch {
      return "skipped: not valid JSON.";
    }
    const checked = skippedList.safeParse(parsed);
    if (!checked.success) return `skipped: ${plainErrors(checked.error)}`;
    skipped = checked.data;
  }
  if (uploaded.length + skipped.length > MAX_FILES_PER_MESSAGE) return `At most ${MAX_FILES_PER_MESSAGE} files in one message.`;
  if (uploaded.length + skipped.length === 0 && (typeof text !== "string" || text.trim() === "")) return "Please write a message or add a file first.";
  const files = [
    ...(await Promise.all(uploaded.map(async (f) => attachment(f.name, f.type, f.size, Buffer.from(await f.arrayBuffer()))))),
    ...skipped.map((s) => attachment(s.name, s.type, s.size, null)),
  ];
  return { clientMessageId: id.data, text: typeof text === "string" ? text : "", files };
}

/** The routes above (see the module comment). Mount before the web app's JSON body parser. */
export function chatFilesApi(deps: ChatFilesDeps): Router {
  const router = Router();
  const session: RequestHandler = (req, res, next) => void deps.requireSession(req, res, next).catch(next);
  // Every file at the limit, plus the text and the form's own lines.
  const limit = MAX_FILES_PER_MESSAGE * deps.maxFileBytes + MESSAGE_BODY_MAX_BYTES + 64 * 1024;

  router.post("/api/web/chat/files", deps.gate, session, readBody({ limit, source: "web" }), async (req: Request & WithRawBody, res) => {
    if (!req.is("multipart/form-data")) return void res.status(415).json({ error: "Send the files as multipart/form-data." });
    const upload = await parseUpload(req);
    if (typeof upload === "string") return void res.status(400).json({ error: upload });
    if (upload.text.length > MESSAGE_TEXT_MAX) return void res.status(413).json({ error: tooLongMessage(upload.text.length), limit: MESSAGE_TEXT_MAX, length: upload.text.length });
    const { person } = webContext(req);
    const account = await localAccountOf(deps.store, person);
    const outcome = await deps.deliver({
      kind: "message",
      channel: "local",
      updateId: `${account}:${upload.clientMessageId}`,
      accountId: account,
      address: account,
      displayName: person.displayName,
      text: upload.text,
      attachments: upload.files,
      at: deps.clock.now(),
    });
    res.status(202).json({ outcome: outcome.status, notice: outcome.notice ?? null });
  });

  router.get("/api/web/chat/files/:messageId/:artifactId", deps.gate, session, async (req, res) => {
    const { person } = webContext(req);
    const message = await deps.log.get(person.id, String(req.params.messageId));
    const listed = message?.attachments.find((a) => a.id === req.params.artifactId);
    const loaded = listed ? await deps.load(person.id, asId("artifact", listed.id)).catch(() => null) : null;
    if (!loaded) return void res.status(404).json({ error: "There is no such file in your chat (or it was deleted)." });
    const { artifact, bytes } = loaded;
    const inline = INLINE_IMAGE.test(artifact.mimeType) && req.query.download === undefined;
    res.set({
      "Content-Type": artifact.mimeType,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
      "Referrer-Policy": "no-referrer",
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "Content-Disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(artifact.name)}`,
    });
    res.send(bytes);
  });

  return router;
}
