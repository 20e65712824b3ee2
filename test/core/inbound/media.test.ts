import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AttachmentError } from "../../../core/channels/attachments.js";
import type { InboundAttachment, InboundMessage } from "../../../core/channels/port.js";
import { messageText } from "../../../core/context/attachments.js";
import { asId } from "../../../core/ids.js";
import { fileNameFor, inboxFolder, MediaIntake } from "../../../core/inbound/media.js";
import { ModelCapabilities } from "../../../core/model/capabilities.js";
import { TranscriptionUnavailableError, type Transcriber } from "../../../core/model/transcription.js";
import type { Person } from "../../../core/persons/index.js";
import { workspaceReceivedFiles } from "../../../sandbox/workspace/inbox.js";

/** Taking in a message's files: limits, workspace, transcription, vision, honest lines. */
describe("MediaIntake", () => {
  let dataDir: string;
  const person: Person = {
    id: asId("person", "per_media"),
    displayName: "Ana",
    timeZone: "Asia/Tokyo",
    timeZoneConfirmed: true,
    timeZoneAsk: null,
    locale: "en-US",
    proactivity: "normal",
    quietHours: null,
    digestTime: "18:00",
    paused: false,
    personaName: null,
    personaStyle: null,
    reach: { mode: "last" },
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  /** 23:30 UTC on the 29th is the 30th in Tokyo. */
  const at = new Date("2026-11-29T23:30:15Z");

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-media-"));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const file = (kind: InboundAttachment["kind"], bytes: Buffer | Error, extra: Partial<InboundAttachment> = {}): InboundAttachment & { fetched: number[] } => {
    const fetched: number[] = [];
    return {
      kind,
      mimeType: null,
      size: null,
      fileName: null,
      caption: null,
      emoji: null,
      durationSeconds: null,
      ...extra,
      fetched,
      fetch: async (maxBytes) => {
        fetched.push(maxBytes);
        if (bytes instanceof Error) throw bytes;
        return bytes;
      },
    };
  };
  const event = (attachments: InboundAttachment[], text = ""): InboundMessage => ({ kind: "message", channel: "telegram", updateId: "1", accountId: "42", address: "42", at, text, attachments });
  function intake(options: { transcriber?: Transcriber | null; vision?: "auto" | "off"; maxBytes?: number } = {}) {
    const capabilities = ModelCapabilities.fixed({ model: "gpt-test", vision: options.vision ?? "auto", transcription: options.transcriber !== null && options.transcriber !== undefined });
    const media = new MediaIntake({
      files: workspaceReceivedFiles(dataDir, 50 * 1024 * 1024),
      transcriber: () => options.transcriber ?? null,
      capabilities,
      logger: pino({ level: "silent" }),
      maxBytes: options.maxBytes ?? 1024,
    });
    return { media, capabilities };
  }
  const saved = (path: string) => readFileSync(join(dataDir, "persons", person.id, "workspace", path));

  it("saves a photo under inbox/<the person's local date>, shows it while vision is not known to be missing", async () => {
    const { media } = intake();
    const photo = file("image", Buffer.from("jpeg"), { mimeType: "image/jpeg", size: 4 });
    const out = await media.prepare(person, event([photo], "look"));
    expect(out).toMatchObject({ notice: null, needsTurn: true });
    expect(out.attachments[0]).toMatchObject({ kind: "image", path: "inbox/2026-11-30/photo-233015.jpg", size: 4, note: null });
    expect(saved(out.attachments[0]!.path!)).toEqual(Buffer.from("jpeg"));
    expect(photo.fetched).toEqual([1024]);
  });

  it("is honest about an image the model cannot see, and needs no turn for a photo without words", async () => {
    const { media, capabilities } = intake();
    capabilities.visionRefused("400 image_url is only supported by certain models");
    const out = await media.prepare(person, event([file("image", Buffer.from("jpeg"), { mimeType: "image/jpeg" })]));
    expect(out.needsTurn).toBe(false);
    expect(out.notice).toBe("I can't see images (the model gpt-test does not accept images), so I only saved your photo as inbox/2026-11-30/photo-233015.jpg.");
    expect(out.attachments[0]!.note).toBe("not shown to you: the model gpt-test does not accept images");
    // With words, the turn still runs (the model answers them), and the note tells it the photo was not shown.
    const withText = await media.prepare(person, event([file("image", Buffer.from("jpeg"), { mimeType: "image/jpeg" })], "is it ripe?"));
    expect(withText.needsTurn).toBe(true);
    expect(messageText({ text: "is it ripe?", attachments: withText.attachments })).toMatch(/^\[photo \(image\/jpeg, 4 bytes\); saved in the person's workspace as inbox\/2026-11-30\/photo-233015\.jpg; not shown to you: .*\]\nis it ripe\?$/);
  });

  it("does not show image formats vision models refuse (HEIC), and says so", async () => {
    const { media } = intake();
    const out = await media.prepare(person, event([file("image", Buffer.from("heic"), { mimeType: "image/heic", fileName: "IMG_1.HEIC" })]));
    expect(out.notice).toMatch(/^I can only look at JPEG, PNG, WebP and GIF images; I saved yours as inbox\/2026-11-30\/IMG_1\.HEIC\.$/);
    expect(out.needsTurn).toBe(false);
  });

  it("refuses files over the limit with their size, and downloads that fail, one honest line each", async () => {
    const { media } = intake();
    const big = file("document", new AttachmentError("too_large", "big", { size: 5 * 1024 * 1024, limit: 1024 }), { fileName: "a.zip" });
    const broken = file("video", new AttachmentError("download_failed", "HTTP 502"));
    const out = await media.prepare(person, event([big, broken], "both attached"));
    expect(out.notice).toBe("Your file is 5.0 MB; I take files up to 1 KB, so I didn't keep it.\nI couldn't download your video from telegram; please send it again.");
    expect(out.attachments.map((a) => [a.path, a.note])).toEqual([
      [null, "not kept: 5.0 MB is over the 1 KB limit"],
      [null, "not kept: it could not be downloaded"],
    ]);
    expect(out.needsTurn).toBe(true); // the words are still answered
  });

  it("transcribes a voice note with a file name the service recognises; learns when there is no transcription", async () => {
    const seen: string[] = [];
    let available = true;
    const transcriber: Transcriber = {
      async transcribe(input) {
        seen.push(input.fileName);
        if (!available) throw new TranscriptionUnavailableError("404");
        return "call mum";
      },
    };
    const { media, capabilities } = intake({ transcriber });
    const voice = () => file("voice", Buffer.from("OggS"), { mimeType: "audio/ogg", durationSeconds: 3 });
    const ok = await media.prepare(person, event([voice()]));
    expect(ok.attachments[0]).toMatchObject({ transcript: "call mum", path: "inbox/2026-11-30/voice-note-233015.oga" });
    expect(seen).toEqual(["voice-note-233015.ogg"]); // .oga is not a name transcription services take
    expect(capabilities.transcription).toBe("yes");

    available = false;
    const missing = await media.prepare(person, event([voice()]));
    expect(missing.notice).toMatch(/^I can't listen to voice notes \(the model service has no speech-to-text\), so I only saved yours as inbox\/2026-11-30\/voice-note-233015\.oga\.$/); // the same bytes: kept once
    expect(missing.needsTurn).toBe(false);
    expect(capabilities.transcription).toBe("no");
    await media.prepare(person, event([voice()]));
    expect(seen).toHaveLength(2); // not asked again
  });

  it("keeps a voice note when one transcription fails, without giving up on transcription", async () => {
    const transcriber: Transcriber = {
      transcribe: async () => {
        throw new Error("transcription failed (500)");
      },
    };
    const { media, capabilities } = intake({ transcriber });
    const out = await media.prepare(person, event([file("voice", Buffer.from("OggS"), { mimeType: "audio/ogg" })]));
    expect(out.notice).toMatch(/^I couldn't transcribe your voice note just now; it's saved as inbox\//);
    expect(capabilities.transcription).toBe("unknown");
  });

  it("takes a sticker as its emoji without downloading it", async () => {
    const { media } = intake();
    const sticker = file("sticker", Buffer.from("webp"), { emoji: "🐱" });
    const out = await media.prepare(person, event([sticker]));
    expect(out).toMatchObject({ notice: null, needsTurn: true });
    expect(messageText({ text: "", attachments: out.attachments })).toBe("[sticker: 🐱]");
    expect(sticker.fetched).toEqual([]);
  });

  it("makes safe file names: no path parts, no hidden files, an extension from the MIME type", () => {
    const e = { at };
    expect(fileNameFor({ kind: "document", fileName: "../../etc/passwd", mimeType: null }, e, 0)).toBe("etc_passwd.bin");
    expect(fileNameFor({ kind: "document", fileName: "résumé 2024.docx", mimeType: null }, e, 0)).toBe("résumé 2024.docx");
    expect(fileNameFor({ kind: "document", fileName: `${"x".repeat(300)}.pdf`, mimeType: "application/pdf" }, e, 0)).toHaveLength(120);
    expect(fileNameFor({ kind: "document", fileName: ".bashrc", mimeType: "text/plain" }, e, 0)).toBe("bashrc.txt");
    expect(fileNameFor({ kind: "document", fileName: "Q3 report (final).pdf", mimeType: "application/pdf" }, e, 0)).toBe("Q3 report _final_.pdf");
    expect(fileNameFor({ kind: "image", fileName: null, mimeType: "image/png" }, e, 1)).toBe("photo-233015-2.png");
    expect(fileNameFor({ kind: "document", fileName: "a/b\\c:d.txt", mimeType: null }, e, 0)).toBe("a_b_c_d.txt");
    expect(inboxFolder(at, "America/New_York")).toBe("inbox/2026-11-29");
    expect(inboxFolder(at, "Not/AZone")).toBe("inbox/2026-11-29");
  });
});
