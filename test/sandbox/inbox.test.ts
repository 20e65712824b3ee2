import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asId } from "../../core/ids.js";
import { ModelCapabilities } from "../../core/model/capabilities.js";
import { workspaceContextMedia, workspaceReceivedFiles } from "../../sandbox/workspace/inbox.js";
import { PathJailError } from "../../sandbox/workspace/tools.js";

/** Received files in the workspace: new files only, numbered names, the jail, byte limits. */
describe("received files in the person's workspace", () => {
  let dataDir: string;
  const person = asId("person", "per_inbox");

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "familiar-inbox-"));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it("saves bytes exactly, never overwrites (numbered names), and reads them back", async () => {
    const files = workspaceReceivedFiles(dataDir, 1024);
    const a = Buffer.from([0, 1, 2, 255, 254]);
    const b = Buffer.from("second");
    expect(await files.save(person, "inbox/2026-11-30", "photo.jpg", a)).toBe("inbox/2026-11-30/photo.jpg");
    expect(await files.save(person, "inbox/2026-11-30", "photo.jpg", b)).toBe("inbox/2026-11-30/photo-2.jpg");
    expect(await files.save(person, "inbox/2026-11-30", "notes", b)).toBe("inbox/2026-11-30/notes");
    // The same bytes again (a message redelivered after a crash between saving and recording): one copy.
    expect(await files.save(person, "inbox/2026-11-30", "photo.jpg", a)).toBe("inbox/2026-11-30/photo.jpg");
    expect(await files.save(person, "inbox/2026-11-30", "photo.jpg", b)).toBe("inbox/2026-11-30/photo-2.jpg");
    const root = join(dataDir, "persons", person, "workspace");
    expect(readFileSync(join(root, "inbox/2026-11-30/photo.jpg"))).toEqual(a);
    expect(readFileSync(join(root, "inbox/2026-11-30/photo-2.jpg"))).toEqual(b);
    expect(await files.read(person, "inbox/2026-11-30/photo.jpg", 100)).toEqual(a);
    await expect(files.read(person, "inbox/2026-11-30/photo-2.jpg", 3)).rejects.toThrow(/limit/);
    await expect(files.save(person, "inbox", "big.bin", Buffer.alloc(2000))).rejects.toThrow(/limit is 1024/);
  });

  it("keeps received files inside the jail: no climbing out, no writing through a symlinked folder", async () => {
    const files = workspaceReceivedFiles(dataDir, 1024);
    await expect(files.save(person, "../..", "x.txt", Buffer.from("x"))).rejects.toBeInstanceOf(PathJailError);
    const root = join(dataDir, "persons", person, "workspace");
    mkdirSync(root, { recursive: true });
    mkdirSync(join(dataDir, "outside"));
    symlinkSync(join(dataDir, "outside"), join(root, "inbox"));
    await expect(files.save(person, "inbox", "x.txt", Buffer.from("x"))).rejects.toBeInstanceOf(PathJailError);
    writeFileSync(join(dataDir, "outside", "secret"), "s");
    await expect(files.read(person, "inbox/secret", 100)).rejects.toBeInstanceOf(PathJailError);
  });

  it("never writes through or over what is in the way: a symlink or a folder at the name gets the next name", async () => {
    const files = workspaceReceivedFiles(dataDir, 1024);
    const root = join(dataDir, "persons", person, "workspace");
    mkdirSync(join(root, "inbox"), { recursive: true });
    writeFileSync(join(dataDir, "target"), "outside");
    symlinkSync(join(dataDir, "target"), join(root, "inbox", "a.bin"));
    mkdirSync(join(root, "inbox", "a-2.bin"));
    expect(await files.save(person, "inbox", "a.bin", Buffer.from("new"))).toBe("inbox/a-3.bin");
    expect(readFileSync(join(dataDir, "target"), "utf8")).toBe("outside");
  });

  it("stops at the workspace quota", async () => {
    const files = workspaceReceivedFiles(dataDir, 1024, { quotaBytes: 10 });
    await files.save(person, "inbox", "a.bin", Buffer.alloc(8));
    await expect(files.save(person, "inbox", "b.bin", Buffer.alloc(8))).rejects.toMatchObject({ code: "quota_exceeded" });
  });

  it("shows saved photos as data URLs while the model may see images, and none once it may not", async () => {
    const files = workspaceReceivedFiles(dataDir, 10 * 1024 * 1024);
    const capabilities = ModelCapabilities.fixed({ model: "m", vision: "auto", transcription: false });
    const media = workspaceContextMedia(files, capabilities);
    const path = await files.save(person, "inbox", "p.png", Buffer.from("png-bytes"));
    const photo = { kind: "image" as const, mimeType: "image/png", size: 9, fileName: null, caption: null, path, transcript: null, emoji: null, durationSeconds: null, note: null };
    expect(media.canShowImages()).toBe(true);
    expect(await media.imageUrl(person, photo)).toBe(`data:image/png;base64,${Buffer.from("png-bytes").toString("base64")}`);
    expect(await media.imageUrl(person, { ...photo, path: "inbox/gone.png" })).toBeNull();
    capabilities.visionRefused("400");
    expect(media.canShowImages()).toBe(false);
  });
});
