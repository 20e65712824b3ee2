/** The file tools of the browser: download into the workspace, upload a workspace file into a field. */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { PersonId } from "../../core/ids.js";
import { ActionUnavailableError, defineTool, type ToolDefinition } from "../../core/tools/index.js";
import type { ArtifactSink } from "../artifacts/index.js";
import { Workspace } from "../workspace/index.js";
import { describeDownload, describeUpload } from "./describe.js";
import { egressDenied, ref, type PageKit } from "./kit.js";
import { inPage } from "./in-page.js";

/** What the file tools need besides the kit. */
export interface FileToolOptions {
  /** Where downloads are recorded. */
  artifacts: ArtifactSink;
  /** DATA_DIR (workspace files for uploads). */
  dataDir: string;
  /** Largest download, bytes (default 50 MiB). */
  maxDownloadBytes?: number;
}

/** `browser_download`: a link ref or URL into the workspace's downloads/ (asks first; a download is tainted). */
export function downloadTool(kit: PageKit, options: FileToolOptions): ToolDefinition {
  return defineTool({
    name: "browser_download",
    offered: kit.inUse,
    description: "Download a file (link ref or URL) into the workspace's downloads/. Asks first.",
    parameters: z.object({ ref: ref.optional(), url: z.string().min(1).max(4096).optional() }).refine((a) => (a.ref === undefined) !== (a.url === undefined), "give either ref or url"),
    sideEffect: true,
    capability: "browser.download",
    policy: {
      capability: "browser.download",
      access: "write",
      destinationArgs: ["url"],
      exfiltrationArgs: [],
      describe: async (args, context) => {
        const parsed = z.object({ ref: z.string().optional(), url: z.string().optional() }).parse(args);
        return kit.describeWith(context.personId, async (session, page) => {
          if (parsed.ref !== undefined) {
            const pageUrl = kit.requirePage(page, session);
            const facts = await kit.factsOf(page, parsed.ref);
            return describeDownload({ tool: "browser_download", pageUrl, scrub: kit.scrub, ref: parsed.ref }, facts.href, facts.label);
          }
          return describeDownload({ tool: "browser_download", pageUrl: page.url(), scrub: kit.scrub, ref: null }, parsed.url ?? null, "");
        });
      },
    },
    async execute(args, context) {
      return kit.withPage(context.personId, async (session, page) => {
        const facts = args.ref !== undefined ? await kit.factsOf(page, args.ref) : null;
        const now = describeDownload({ tool: "browser_download", pageUrl: page.url(), scrub: kit.scrub, ref: args.ref ?? null }, facts ? facts.href : (args.url ?? null), facts?.label ?? "");
        const changed = kit.stillSame(context, now);
        if (changed) return changed;
        const limit = options.maxDownloadBytes ?? 50 * 1024 * 1024;
        const waiting = page.waitForEvent("download", { timeout: 20_000 });
        session.downloadArmed = true;
        if (args.ref !== undefined) await page.getByRef(args.ref).click();
        else await page.evaluate(inPage<string, void>("(u) => { const a = document.createElement('a'); a.href = u; a.download = ''; document.body.appendChild(a); a.click(); a.remove(); }"), args.url!);
        let file;
        try {
          file = await waiting;
        } catch {
          session.downloadArmed = false;
          const denied = await session.takeRefusals();
          if (denied.length > 0) return egressDenied(denied);
          return { ok: false, code: "no_download", error: "No download started within 20 s; nothing was saved." };
        }
        session.downloadArmed = false;
        const bytes = await readStream(await file.createReadStream(), limit);
        if (bytes === null) {
          await file.cancel().catch(() => undefined);
          return { ok: false, code: "too_large", error: `The download is larger than ${limit} bytes; nothing was saved.` };
        }
        const saved = await options.artifacts.save({
          personId: context.personId,
          name: safeName(file.suggestedFilename()) || "download",
          mimeType: mimeOf(file.suggestedFilename()),
          bytes,
          source: `download from ${kit.scrub(file.url())}`,
          folder: "downloads",
          title: safeName(file.suggestedFilename()) || "download",
          taskId: context.taskId,
          // A download is content from outside.
          taint: { source: kit.scrub(file.url()) },
        });
        await file.delete().catch(() => undefined);
        return { ok: true, content: `Downloaded ${saved.name} (${saved.size} bytes) to ${saved.path}; artifact ${saved.id}.`, data: { artifactId: saved.id, path: saved.path } };
      });
    },
  });
}

/** `browser_upload`: a workspace file into a file field by ref (asks first; sent when the form is submitted). */
export function uploadTool(kit: PageKit, options: FileToolOptions): ToolDefinition {
  return defineTool({
    name: "browser_upload",
    offered: kit.inUse,
    description: "Attach a workspace file to a file field by ref. Asks first.",
    parameters: z.object({ ref, path: z.string().min(1).max(500) }),
    sideEffect: true,
    capability: "browser.upload",
    policy: {
      capability: "browser.upload",
      access: "write",
      destinationArgs: [],
      exfiltrationArgs: ["path"],
      describe: async (args, context) => {
        const parsed = z.object({ ref: z.string(), path: z.string() }).parse(args);
        const bytes = await readWorkspace(options.dataDir, context.personId, parsed.path);
        return kit.describeWith(context.personId, async (session, page) => {
          const pageUrl = kit.requirePage(page, session);
          return describeUpload({ tool: "browser_upload", pageUrl, scrub: kit.scrub, ref: parsed.ref }, await kit.factsOf(page, parsed.ref), parsed.path, bytes.length, sha(bytes));
        });
      },
    },
    async execute(args, context) {
      const bytes = await readWorkspace(options.dataDir, context.personId, args.path);
      return kit.withPage(context.personId, async (session, page) => {
        const pageUrl = kit.requirePage(page, session);
        const now = describeUpload({ tool: "browser_upload", pageUrl, scrub: kit.scrub, ref: args.ref }, await kit.factsOf(page, args.ref), args.path, bytes.length, sha(bytes));
        const changed = kit.stillSame(context, now);
        if (changed) return changed;
        session.network.arm({ method: "NONE", url: "", fields: [] });
        let outcome: ReturnType<typeof session.network.disarm>;
        try {
          await page.getByRef(args.ref).setInputFiles({ name: args.path.split("/").pop() ?? "file", mimeType: mimeOf(args.path), buffer: bytes });
        } finally {
          outcome = session.network.disarm();
        }
        return kit.afterAction(session, page, `${now.summary}: done. It is sent when the form is submitted.`, outcome.stopped);
      });
    },
  });
}

async function readWorkspace(dataDir: string, personId: PersonId, path: string): Promise<Buffer> {
  try {
    return await Workspace.of(dataDir, personId).readBytes(path, 50 * 1024 * 1024);
  } catch (error) {
    throw new ActionUnavailableError("file_error", error instanceof Error ? error.message : String(error));
  }
}

async function readStream(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += buffer.length;
    if (size > limit) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A file name safe for the workspace: no separators or control characters, at most 120 characters. */
export function safeName(name: string): string {
  return name.replace(/[\\/\0-\x1f\x7f]+/g, "_").replace(/^\.+/, "").slice(0, 120);
}

const MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  htm: "text/html",
  csv: "text/csv",
  json: "application/json",
  ics: "text/calendar",
  zip: "application/zip",
};

/** MIME type by file extension (application/octet-stream when unknown). */
export function mimeOf(name: string): string {
  return MIME[name.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}
