/**
 * Artifacts: files Familiar makes or downloads for a person (screenshots, PDFs, itineraries,
 * reports), stored in the person's workspace through the jail and recorded with an id and metadata
 * (name, type, size, source) in the store, so they can be listed in the API and sent in chat as real
 * attachments.
 */
import type { ArtifactId, PersonId } from "../core/ids.js";
import type { ArtifactRepository } from "../core/storage/ports.js";
import type { Artifact } from "../core/storage/types.js";
import type { Clock } from "../core/clock.js";
import { Workspace, type WorkspaceOptions } from "./workspace.js";

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
export class WorkspaceArtifacts implements ArtifactSink, ArtifactSource {
  constructor(
    private readonly deps: { dataDir: string; repository: ArtifactRepository; clock: Clock; workspace?: WorkspaceOptions },
  ) {}

  async save(input: ArtifactInput): Promise<Artifact> {
    const ws = Workspace.of(this.deps.dataDir, input.personId, this.deps.workspace);
    const base = safeFileName(input.name) || "file";
    const now = this.deps.clock.now();
    const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    const path = `${input.folder}/${stamp}-${base}`;
    await ws.write(path, input.bytes, { maxBytes: ws.quotaBytes });
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
}

/** A file name safe in the workspace and in messengers: no separators, controls or leading dots; ≤ 120 characters. */
export function safeFileName(name: string): string {
  return name
    .replace(/[\\/\0-\x1f\x7f]+/g, "_")
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 120);
}
