/**
 * Artifacts: files Familiar makes or downloads for a person (screenshots, PDFs, itineraries,
 * reports), stored in the person's workspace through the jail and recorded with an id and metadata
 * (name, type, size, source) in the store, so they can be listed in the API and sent in chat as real
 * attachments.
 */
import { z } from "zod";
import type { AttachmentSource, OutboundAttachment } from "../../core/channels/index.js";
import { asId, type ArtifactId, type PersonId } from "../../core/ids.js";
import type { Outbound } from "../../core/outbox/index.js";
import type { ArtifactRepository, Artifact } from "../../core/storage/index.js";
import { defineTool, type ToolDefinition } from "../../core/tools/index.js";
import type { Clock } from "../../core/clock.js";
import { Workspace, type WorkspaceOptions } from "./tools.js";

/** A file to keep as an artifact. */
export interface ArtifactInput {
  personId: PersonId;
  /** Suggested file name (made safe; the stored name is unique). */
  name: string;
  mimeType: string;
  bytes: Uint8Array;
  /** Where it came from, in words (no secrets: callers scrub URLs). */
  source: string;
  /** Workspace folder: `artifacts` for what Familiar made, `downloads` for downloads. */
  folder: "artifacts" | "downloads";
}

/** Saves artifacts. */
export interface ArtifactSink {
  save(input: ArtifactInput): Promise<Artifact>;
}

/** Where an artifact's bytes are read back for sending. */
export interface ArtifactSource {
  /** The artifact and its bytes, or null when it does not exist or is not the person's. */
  load(personId: PersonId, id: ArtifactId): Promise<{ artifact: Artifact; bytes: Buffer } | null>;
}

/** Artifacts in the person's workspace, recorded in the store. */
export class WorkspaceArtifacts implements ArtifactSink, ArtifactSource, AttachmentSource {
  /** Whether a person has artifacts, as last learnt (for offering the artifact tools). */
  private readonly known = new Map<PersonId, boolean>();

  constructor(
    private readonly deps: { dataDir: string; repository: ArtifactRepository; clock: Clock; workspace?: WorkspaceOptions },
  ) {}

  /**
   * Whether the person has artifacts, from memory; the first question for a person starts a look-up
   * in the store and answers false meanwhile (the next model request knows).
   */
  hasArtifacts(personId: PersonId): boolean {
    const known = this.known.get(personId);
    if (known !== undefined) return known;
    this.known.set(personId, false);
    void this.deps.repository.listArtifacts(personId, { limit: 1 }).then(
      (page) => {
        if (page.items.length > 0) this.known.set(personId, true);
      },
      () => this.known.delete(personId),
    );
    return false;
  }

  async save(input: ArtifactInput): Promise<Artifact> {
    const ws = Workspace.of(this.deps.dataDir, input.personId, this.deps.workspace);
    const base = safeFileName(input.name) || "file";
    const now = this.deps.clock.now();
    const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    const path = `${input.folder}/${stamp}-${base}`;
    await ws.write(path, input.bytes, { maxBytes: ws.quotaBytes });
    this.known.set(input.personId, true);
    return this.deps.repository.recordArtifact({
      personId: input.personId,
      name: base,
      mimeType: input.mimeType,
      size: input.bytes.byteLength,
      path,
      source: input.source.slice(0, 500),
      createdAt: now,
    });
  }

  async load(personId: PersonId, id: ArtifactId): Promise<{ artifact: Artifact; bytes: Buffer } | null> {
    const artifact = await this.deps.repository.getArtifact(id);
    if (artifact === null || artifact.personId !== personId) return null;
    const bytes = await Workspace.of(this.deps.dataDir, personId, this.deps.workspace).readBytes(artifact.path);
    return { artifact, bytes };
  }

  async loadAttachment(personId: PersonId, id: ArtifactId): Promise<OutboundAttachment | null> {
    const loaded = await this.load(personId, id).catch(() => null);
    return loaded ? { id, name: loaded.artifact.name, mimeType: loaded.artifact.mimeType, bytes: loaded.bytes } : null;
  }
}

/**
 * Artifact tools: `artifacts_list` (the person's files Familiar made or downloaded) and
 * `send_artifact` (sends one or more to the person in chat as real attachments, through the outbox:
 * once, even across crashes — the delivery key comes from the call's idempotency key). Both act
 * only for the person the activation belongs to; an artifact of someone else is "not found".
 */
export function artifactTools(deps: {
  store: { artifacts: ArtifactRepository };
  /** Where the message with the attachments is queued (the one outbound door). */
  outbound: Pick<Outbound, "queue">;
  /** When the tools are offered (default always); see ToolDefinition.offered. */
  offered?: (personId: PersonId) => boolean;
}): ToolDefinition[] {
  const list = defineTool({
    name: "artifacts_list",
    ...(deps.offered && { offered: deps.offered }),
    description: "List the person's artifacts (screenshots, downloads), newest first, with ids.",
    parameters: z.object({ limit: z.number().int().min(1).max(50).optional() }),
    sideEffect: false,
    capability: "artifacts.read",
    async execute(args, context) {
      const page = await deps.store.artifacts.listArtifacts(context.personId, { limit: args.limit ?? 20 });
      if (page.items.length === 0) return { ok: true, content: "(no artifacts yet)" };
      return { ok: true, content: page.items.map((a) => `${a.id} — ${a.name} (${a.mimeType}, ${a.size} bytes, ${a.source}, ${a.createdAt.toISOString()})`).join("\n") };
    },
  });
  const send = defineTool({
    name: "send_artifact",
    ...(deps.offered && { offered: deps.offered }),
    description: "Send artifacts by id to the person as attachments, with an optional message.",
    parameters: z.object({
      artifact_ids: z.array(z.string().regex(/^art_[0-9a-f]{28}$/)).min(1).max(10),
      text: z.string().max(1000).optional(),
    }),
    sideEffect: true,
    capability: "artifacts.send",
    async execute(args, context) {
      const found = [];
      for (const raw of args.artifact_ids) {
        const artifact = await deps.store.artifacts.getArtifact(asId("artifact", raw));
        if (artifact === null || artifact.personId !== context.personId) return { ok: false, code: "not_found", error: `There is no artifact ${raw}; nothing was sent. Use artifacts_list.` };
        found.push(artifact);
      }
      await deps.outbound.queue({ personId: context.personId, deliveryKey: `artifact:${context.idempotencyKey}`, text: args.text ?? "", attachments: found.map((a) => a.id) });
      return { ok: true, content: `Sending ${found.map((a) => a.name).join(", ")} to the person.` };
    },
  });
  return [list, send];
}

/** A file name safe in the workspace and in messengers: no separators, controls or leading dots; ≤ 120 characters. */
export function safeFileName(name: string): string {
  return name
    .replace(/[\\/\0-\x1f\x7f]+/g, "_")
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 120);
}
