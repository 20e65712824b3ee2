import mime from "mime-types";
import { AttachmentError, formatBytes, type InboundAttachment, type InboundMessage } from "../channels/index.js";
import { attachmentNoun } from "../context/index.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import { type ModelCapabilities, TranscriptionUnavailableError, type Transcriber } from "../model/index.js";
import type { MessageAttachment } from "../conversation/records.js";
import type { Person } from "../persons/records.js";

/** Default MAX_ATTACHMENT_BYTES: 20 MB, the most the Telegram Bot API lets a bot download (getFile). */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** Image formats Chat Completions accepts as `image_url` parts (OpenAI vision guide: PNG, JPEG, WEBP, non-animated GIF). */
export const VISION_MIME_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/webp", "image/gif"]);

/** Where received files are kept: the person's workspace (`sandbox/`, behind its path jail). */
export interface ReceivedFiles {
  /**
   * Saves `bytes` as a new file called `fileName` in `folder` (both workspace-relative, already
   * safe names); when the name is taken a numbered one is used. Returns the path used.
   */
  save(personId: PersonId, folder: string, fileName: string, bytes: Buffer): Promise<string>;
  /** Reads back a saved file; throws above `maxBytes` or when it is gone. */
  read(personId: PersonId, path: string, maxBytes: number): Promise<Buffer>;
}

/** What `MediaIntake.prepare` made of a message's files. */
export interface PreparedMedia {
  attachments: MessageAttachment[];
  /**
   * Honest one-line answers, one per file that could not be used (no vision, no transcription,
   * too large, download failed), joined by newlines; null when every file was fine.
   */
  notice: string | null;
  /**
   * Whether the model has something to answer: text, an image it may see, a transcript, a kept file
   * or a sticker. When false, `notice` is the whole answer and no turn runs.
   */
  needsTurn: boolean;
}

/** One file taken in: its record, the honest line about it (if any), and whether the model can use it. */
interface Taken {
  attachment: MessageAttachment;
  notice: string | null;
  usable: boolean;
}

/** File extensions transcription services recognise, for the ones `mime-types` names otherwise. */
const TRANSCRIBABLE_EXTENSION: Record<string, string> = { oga: "ogg", opus: "ogg", weba: "webm", mpga: "mp3" };

/**
 * Takes in the files of a person's message before it is recorded: each file is downloaded through
 * its platform (at most `maxBytes`), saved to the person's workspace under `inbox/<local date>/`,
 * a voice note is transcribed, an image is checked against what the model can see, a sticker is
 * kept as its emoji. Whatever cannot be done becomes a note on the attachment (for the model) and
 * an honest line for the person. Never throws for a file's own failure; each file is handled on its own.
 */
export class MediaIntake {
  constructor(
    private readonly deps: {
      files: ReceivedFiles;
      /** The transcriber of the endpoint in use now (the model can be switched while Familiar runs), or null. */
      transcriber: () => Transcriber | null;
      capabilities: ModelCapabilities;
      logger: Logger;
      /** MAX_ATTACHMENT_BYTES: largest file taken in, bytes. */
      maxBytes: number;
    },
  ) {}

  async prepare(person: Person, event: InboundMessage): Promise<PreparedMedia> {
    const attachments: MessageAttachment[] = [];
    const notices: string[] = [];
    let usable = false;
    for (const [index, inbound] of (event.attachments ?? []).entries()) {
      const taken = await this.take(person, event, inbound, index);
      attachments.push(taken.attachment);
      if (taken.notice) notices.push(taken.notice);
      usable ||= taken.usable;
    }
    return { attachments, notice: notices.length ? notices.join("\n") : null, needsTurn: usable || event.text.trim().length > 0 };
  }

  private async take(person: Person, event: InboundMessage, inbound: InboundAttachment, index: number): Promise<Taken> {
    const { capabilities, logger } = this.deps;
    const noun = attachmentNoun[inbound.kind];
    const attachment: MessageAttachment = {
      kind: inbound.kind,
      mimeType: inbound.mimeType,
      size: inbound.size,
      fileName: inbound.fileName,
      caption: inbound.caption,
      path: null,
      transcript: null,
      emoji: inbound.emoji,
      durationSeconds: inbound.durationSeconds,
      note: null,
    };
    const failed = (note: string, notice: string): Taken => ({ attachment: { ...attachment, note }, notice, usable: false });
    if (inbound.kind === "sticker") return { attachment, notice: null, usable: true };

    let bytes: Buffer;
    try {
      bytes = await inbound.fetch(this.deps.maxBytes);
    } catch (err) {
      const limit = formatBytes(this.deps.maxBytes);
      if (err instanceof AttachmentError && err.reason === "too_large") {
        const size = err.details.size ?? inbound.size;
        const said = size != null ? formatBytes(size) : "larger than that";
        return failed(`not kept: ${said} is over the ${limit} limit`, `Your ${noun} is ${said}; I take files up to ${limit}, so I didn't keep it.`);
      }
      logger.warn({ err, channel: event.channel, updateId: event.updateId, kind: inbound.kind }, "attachment could not be downloaded");
      return failed("not kept: it could not be downloaded", `I couldn't download your ${noun} from ${event.channel}; please send it again.`);
    }
    attachment.size = bytes.byteLength;
    try {
      attachment.path = await this.deps.files.save(person.id, inboxFolder(event.at, person.timeZone), fileNameFor(inbound, event, index), bytes);
    } catch (err) {
      // The workspace's quota (sandbox/workspace/jail.ts: JailError "quota_exceeded") is the person's to manage.
      if (err instanceof Error && "code" in err && err.code === "quota_exceeded") {
        return failed("not kept: the workspace is full", `Your workspace is full, so I couldn't keep your ${noun}; delete some files there and send it again.`);
      }
      logger.error({ err, personId: person.id, kind: inbound.kind }, "attachment could not be saved to the workspace");
      return failed("not kept: it could not be saved", `I couldn't save your ${noun} to your workspace; please send it again later.`);
    }

    if (inbound.kind === "image") {
      if (capabilities.vision === "no") {
        const why = capabilities.visionMissingBecause ?? "the model in use does not accept images";
        return failed(`not shown to you: ${why}`, `I can't see images (${why}), so I only saved your photo as ${attachment.path}.`);
      }
      if (!VISION_MIME_TYPES.has((attachment.mimeType ?? "").toLowerCase())) {
        return failed(`not shown to you: ${attachment.mimeType ?? "its format"} cannot be shown to the model`, `I can only look at JPEG, PNG, WebP and GIF images; I saved yours as ${attachment.path}.`);
      }
      return { attachment, notice: null, usable: true };
    }
    if (inbound.kind === "voice") return this.transcribe(attachment, bytes, failed);
    return { attachment, notice: null, usable: true };
  }

  private async transcribe(attachment: MessageAttachment, bytes: Buffer, failed: (note: string, notice: string) => Taken): Promise<Taken> {
    const { capabilities, logger } = this.deps;
    const transcriber = this.deps.transcriber();
    const missing = () => {
      const why = capabilities.transcriptionMissingBecause ?? "no transcription service is configured";
      return failed(`not transcribed: ${why}`, `I can't listen to voice notes (${why}), so I only saved yours as ${attachment.path}.`);
    };
    if (!transcriber || capabilities.transcription === "no") return missing();
    try {
      const transcript = await transcriber.transcribe({ bytes, fileName: transcriptionName(attachment), mimeType: attachment.mimeType });
      capabilities.transcriptionWorked();
      if (!transcript) return { attachment: { ...attachment, transcript: "", note: "no speech was recognised" }, notice: null, usable: true };
      return { attachment: { ...attachment, transcript }, notice: null, usable: true };
    } catch (err) {
      if (err instanceof TranscriptionUnavailableError) {
        capabilities.transcriptionMissing(err.message);
        return missing();
      }
      logger.warn({ err }, "voice note not transcribed");
      return failed("not transcribed: the transcription failed", `I couldn't transcribe your voice note just now; it's saved as ${attachment.path}.`);
    }
  }
}

/**
 * The files of a message described without taking them in (no intake wired, e.g. a core built
 * without file storage): the model still learns what was sent, and the turn runs.
 */
export function describedOnly(event: InboundMessage): PreparedMedia {
  const attachments = (event.attachments ?? []).map(
    (a): MessageAttachment => ({
      kind: a.kind,
      mimeType: a.mimeType,
      size: a.size,
      fileName: a.fileName,
      caption: a.caption,
      path: null,
      transcript: null,
      emoji: a.emoji,
      durationSeconds: a.durationSeconds,
      note: a.kind === "sticker" ? null : "not kept: files are not taken in here",
    }),
  );
  return { attachments, notice: null, needsTurn: true };
}

/** `inbox/2026-11-30`: the day the message was sent, in the person's time zone. */
export function inboxFolder(at: Date, timeZone: string): string {
  let day: string;
  try {
    day = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
  } catch {
    day = at.toISOString().slice(0, 10);
  }
  return `inbox/${day}`;
}

/**
 * A safe file name: the sender's own name with anything but letters, digits, `.`, `-`, `_` and
 * spaces removed (no path separators, no leading dots, at most 120 characters), else
 * `<kind>-<HHMMSS>[-n].<ext>` with the extension from the MIME type.
 */
export function fileNameFor(inbound: Pick<InboundAttachment, "fileName" | "mimeType" | "kind">, event: Pick<InboundMessage, "at">, index: number): string {
  const own = (inbound.fileName ?? "")
    .normalize("NFC")
    .replace(/[^\p{L}\p{N}._ -]+/gu, "_")
    .replace(/^[.\s_]+/, "")
    .replace(/\s+/g, " ")
    .trim();
  const ext = (inbound.mimeType && mime.extension(inbound.mimeType)) || (own.includes(".") ? "" : "bin");
  if (own) {
    const clipped = own.length > 120 ? own.slice(own.length - 120) : own;
    return ext && !/\.[\p{L}\p{N}]{1,8}$/u.test(clipped) ? `${clipped}.${ext}` : clipped;
  }
  const time = event.at.toISOString().slice(11, 19).replace(/:/g, "");
  return `${attachmentNoun[inbound.kind].replace(/\s+/g, "-")}-${time}${index > 0 ? `-${index + 1}` : ""}.${ext || "bin"}`;
}

/** The saved file's name with an extension transcription services recognise (`voice.oga` → `voice.ogg`). */
function transcriptionName(attachment: MessageAttachment): string {
  const base = (attachment.path ?? "voice").split("/").pop()!;
  const dot = base.lastIndexOf(".");
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : "";
  const fixed = TRANSCRIBABLE_EXTENSION[ext];
  return fixed ? `${base.slice(0, dot)}.${fixed}` : base;
}
