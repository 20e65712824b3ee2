/**
 * Artifact tools: `artifact_create {kind, title, from: {path} | {content}, name?}`,
 * `artifact_update {id, from, title?}` (a new version; older ones stay), `artifact_list` and
 * `artifact_send {id, version?, text?}` (the latest version, or the one asked for, to the person's
 * current chat through the outbox — once, even across crashes: the delivery key is the call's
 * idempotency key). Every tool acts for the activation's person only; another person's artifact is
 * "not found".
 *
 * Taint: a version made in a tainted activation, or from a workspace file that carries a taint
 * (see FileTaints), carries it; the list says so.
 */
import { z } from "zod";
import { asId, type PersonId } from "../../core/ids.js";
import type { Outbound } from "../../core/outbox/index.js";
import type { Artifact, ArtifactKind } from "../../core/artifacts/index.js";
import type { Taint } from "../../core/policy/index.js";
import { defineTool, type ToolContext, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import { FileTaints, JailError } from "../workspace/index.js";
import { ARTIFACT_KINDS } from "./kinds.js";
import { ArtifactContentError, makeVersion, type ArtifactFrom, type PdfPrinter } from "./make.js";
import { PdfError } from "./pdf.js";
import { ARTIFACTS_FOLDER, type ArtifactShelf } from "./shelf.js";

/** What the artifact tools need from the composition root. */
export interface ArtifactToolsDeps {
  shelf: ArtifactShelf;
  /** Where the message with the artifact is queued (the one outbound door). */
  outbound: Pick<Outbound, "queue">;
  printPdf: PdfPrinter;
  /** The URL of an artifact's own page when the web app is reachable from the person's devices (PUBLIC_URL), else null. */
  pageUrl: (artifact: Artifact) => string | null;
  /** Whether the list, update and send tools are offered (default always); `artifact_create` always is. */
  offered?: (personId: PersonId) => boolean;
}

const artifactId = z.string().regex(/^art_[0-9a-f]{28}$/, "an artifact id like art_… (artifact_list shows them)");
const from = z.union([
  z.object({ path: z.string().min(1).max(500).describe("a file in the workspace, e.g. report/summary.html") }).strict(),
  z.object({ content: z.string().min(1).max(2_000_000).describe("the content itself: markdown, HTML, CSV, SVG, …") }).strict(),
]);

function fail(error: unknown): ToolResult {
  if (error instanceof JailError) return { ok: false, code: error.code, error: error.message };
  if (error instanceof ArtifactContentError) return { ok: false, code: "artifact_invalid", error: `${error.message}; nothing was kept.` };
  if (error instanceof PdfError) return { ok: false, code: "pdf_failed", error: `${error.message}; nothing was kept.` };
  throw error;
}

const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`);

/** One line of a list: id, title, kind, version, size, when, task/goal, taint. */
export function describeArtifact(a: Artifact, url: string | null = null): string {
  const parts = [`${a.kind}`, `version ${a.version}`, size(a.size), a.createdAt.toISOString().slice(0, 16).replace("T", " ") + " UTC"];
  if (a.goalId) parts.push(`goal ${a.goalId}`);
  if (a.taskId) parts.push(`task ${a.taskId}`);
  if (a.taint) parts.push(`made from untrusted content (${a.taint.source})`);
  return `${a.seriesId} — “${a.title}” (${parts.join(", ")})${url ? ` — ${url}` : ""}`;
}

/** The taint a version gets: the activation's, else that of the first workspace file it was made from that has one. */
async function taintOf(deps: ArtifactToolsDeps, context: ToolContext, readFrom: readonly string[]): Promise<Taint | null> {
  if (context.tainted) return { source: context.taintSource ?? "untrusted content in this activation" };
  const taints = FileTaints.of(deps.shelf.workspace(context.personId).root);
  for (const path of readFrom) {
    const taint = await taints.of(path);
    if (taint) return { source: `${path}: ${taint.source}` };
  }
  return null;
}

async function keep(deps: ArtifactToolsDeps, context: ToolContext, input: { kind: ArtifactKind; title: string; from: ArtifactFrom; name?: string; versionOf?: Artifact }): Promise<ToolResult> {
  try {
    const ws = deps.shelf.workspace(context.personId);
    const made = await makeVersion({ ws, kind: input.kind, title: input.title, from: input.from, ...(input.name && { name: input.name }), printPdf: deps.printPdf });
    const taint = await taintOf(deps, context, made.readFrom);
    const saved = await deps.shelf.save({
      personId: context.personId,
      name: made.name,
      mimeType: made.mimeType,
      bytes: made.bytes,
      source: "path" in input.from ? `made by Familiar from ${input.from.path}` : "made by Familiar",
      folder: ARTIFACTS_FOLDER,
      kind: input.kind,
      title: input.title,
      taskId: context.taskId,
      taint,
      ...(input.versionOf && { versionOf: input.versionOf.id }),
    });
    const url = deps.pageUrl(saved);
    const pages = made.pages !== undefined ? `, ${made.pages} page${made.pages === 1 ? "" : "s"}` : "";
    return {
      ok: true,
      content: `Kept ${saved.kind} “${saved.title}” as ${saved.seriesId}, version ${saved.version} (${size(saved.size)}${pages}; file ${saved.path}).${url ? ` Its page: ${url}.` : ""} Send it with artifact_send.`,
      data: { id: saved.seriesId, version: saved.version, versionId: saved.id },
    };
  } catch (error) {
    return fail(error);
  }
}

/** The artifact tools (see the module comment). */
export function artifactTools(deps: ArtifactToolsDeps): ToolDefinition[] {
  const offered = deps.offered ? { offered: deps.offered } : {};
  const create = defineTool({
    name: "artifact_create",
    description:
      "Keep something for the person as an artifact they can open, download and get in chat: a document (markdown), a pdf (printed from HTML or markdown, or a PDF file), a page (an HTML page with its own script and style — a small app; it runs with no network at all, so everything it needs must be inside it), a data file, or an image. From a workspace file (path) or from content. Relative images, styles and scripts of a page are put inside it.",
    parameters: z.object({
      kind: z.enum(ARTIFACT_KINDS),
      title: z.string().trim().min(1).max(120),
      from,
      name: z.string().trim().min(1).max(120).optional().describe("file name, e.g. expenses.csv (its extension tells a data file's type)"),
    }),
    sideEffect: true,
    capability: "artifacts.write",
    execute: (args, context) => keep(deps, context, { kind: args.kind, title: args.title, from: args.from, ...(args.name && { name: args.name }) }),
  });
  const update = defineTool({
    name: "artifact_update",
    ...offered,
    description: "Make a new version of an artifact (same kind; the older versions stay until deleted), from a workspace file or content.",
    parameters: z.object({ id: artifactId, from, title: z.string().trim().min(1).max(120).optional() }),
    sideEffect: true,
    capability: "artifacts.write",
    async execute(args, context) {
      const latest = await deps.shelf.version(context.personId, asId("artifact", args.id));
      if (latest === null) return { ok: false, code: "not_found", error: `There is no artifact ${args.id}; nothing was changed. Use artifact_list.` };
      return keep(deps, context, { kind: latest.kind, title: args.title ?? latest.title, from: args.from, versionOf: latest });
    },
  });
  const list = defineTool({
    name: "artifact_list",
    ...offered,
    description: "List the person's artifacts (what Familiar made, screenshots, downloads), newest first, with ids, kinds and versions.",
    parameters: z.object({ limit: z.number().int().min(1).max(50).optional() }),
    sideEffect: false,
    capability: "artifacts.read",
    async execute(args, context) {
      const page = await deps.shelf.list(context.personId, args.limit ?? 20);
      if (page.length === 0) return { ok: true, content: "(no artifacts yet)" };
      return { ok: true, content: page.map((a) => describeArtifact(a, deps.pageUrl(a))).join("\n") };
    },
  });
  const send = defineTool({
    name: "artifact_send",
    ...offered,
    description: "Send an artifact to the person in their current chat as a real file (PDF, HTML file, image, …), with a link to its page when the web app is reachable from their devices. The latest version unless a version is given.",
    parameters: z.object({ id: artifactId, version: z.number().int().min(1).optional(), text: z.string().max(1000).optional() }),
    sideEffect: true,
    capability: "artifacts.send",
    async execute(args, context) {
      const artifact = await deps.shelf.version(context.personId, asId("artifact", args.id), args.version);
      if (artifact === null) return { ok: false, code: "not_found", error: `There is no artifact ${args.id}${args.version ? ` with a version ${args.version}` : ""}; nothing was sent. Use artifact_list.` };
      const url = deps.pageUrl(artifact);
      const text = [args.text?.trim(), url ? `Open it: ${url}` : ""].filter(Boolean).join("\n\n");
      await deps.outbound.queue({ personId: context.personId, deliveryKey: `artifact:${context.idempotencyKey}`, text, attachments: [artifact.id] });
      return { ok: true, content: `Sending “${artifact.title}” (version ${artifact.version}, ${artifact.name}) to the person${url ? ` with a link to ${url}` : ""}.` };
    },
  });
  return [create, update, list, send];
}
