/**
 * The artifacts a person keeps: each version's bytes in the person's workspace (`artifacts/` for
 * what Familiar made — read-only inside the sandbox, so a version never changes once kept —
 * `downloads/` for downloads), recorded in the store with kind, title, version, task, goal and
 * taint, listed in the dashboard and sent in chat as real attachments.
 */
import { randomBytes } from "node:crypto";
import type { AttachmentSource, OutboundAttachment } from "../../core/channels/index.js";
import type { Clock } from "../../core/clock.js";
import type { ArtifactId, GoalId, PersonId, TaskId } from "../../core/ids.js";
import type { Artifact, ArtifactKind } from "../../core/artifacts/index.js";
import type { ArtifactRepository } from "../../core/storage/index.js";
import type { Taint } from "../../core/policy/index.js";
import { Workspace, type WorkspaceOptions } from "../workspace/index.js";

/** The workspace folder (relative) whose files are artifact versions; the sandbox sees it read-only. */
export const ARTIFACTS_FOLDER = "artifacts";

/** A file to keep as an artifact (a new one, or with `versionOf` a new version of one). */
export interface ArtifactInput {
  personId: PersonId;
  /** Suggested file name (made safe; the stored path is unique). */
  name: string;
  mimeType: string;
  bytes: Uint8Array;
  /** Where it came from, in words (no secrets: callers scrub URLs). */
  source: string;
  /** Workspace folder: `artifacts` for what Familiar made, `downloads` for downloads. */
  folder: "artifacts" | "downloads";
  kind?: ArtifactKind;
  title?: string;
  taskId?: TaskId | null;
  goalId?: GoalId | null;
  taint?: Taint | null;
  /** Any version's id of the artifact this is a new version of. */
  versionOf?: ArtifactId;
}

/** Saves artifacts. */
export interface ArtifactSink {
  save(input: ArtifactInput): Promise<Artifact>;
}

/** Where an artifact's bytes are read back for sending or showing. */
export interface ArtifactSource {
  /** The version and its bytes, or null when it does not exist or is not the person's. */
  load(personId: PersonId, id: ArtifactId): Promise<{ artifact: Artifact; bytes: Buffer } | null>;
}

/** A file name safe in the workspace and in messengers: no separators, controls or leading dots; ≤ 120 characters. */
export function safeFileName(name: string): string {
  return name
    .replace(/[\\/\0-\x1f\x7f]+/g, "_")
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 120);
}

/** Artifacts in the person's workspace, recorded in the store. */
export class ArtifactShelf implements ArtifactSink, ArtifactSource, AttachmentSource {
  /** Whether a person has artifacts, as last learnt (for offering the artifact tools). */
  private readonly known = new Map<PersonId, boolean>();

  constructor(
    private readonly deps: {
      dataDir: string;
      repository: ArtifactRepository;
      clock: Clock;
      workspace?: WorkspaceOptions;
      /** The goal a task belongs to (an artifact made for a task records its goal too). */
      goalOf?: (taskId: TaskId) => Promise<GoalId | null>;
    },
  ) {}

  /** The person's workspace. */
  workspace(personId: PersonId): Workspace {
    return Workspace.of(this.deps.dataDir, personId, this.deps.workspace);
  }

  /**
   * Whether the person has artifacts, from memory; the first question for a person starts a look-up
   * in the store and answers false meanwhile (the next model request knows).
   */
  hasArtifacts(personId: PersonId): boolean {
    const known = this.known.get(personId);
    if (known !== undefined) return known;
    this.known.set(personId, false);
    this.deps.repository.listArtifacts(personId, { limit: 1 }).then(
      (page) => {
        if (page.items.length > 0) this.known.set(personId, true);
      },
      () => this.known.delete(personId),
    );
    return false;
  }

  /** Writes the bytes into the workspace and records the version. @throws JailError (quota, …), NotFoundError (versionOf) */
  async save(input: ArtifactInput): Promise<Artifact> {
    const ws = this.workspace(input.personId);
    const base = safeFileName(input.name) || "file";
    const now = this.deps.clock.now();
    const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    const path = `${input.folder}/${stamp}-${randomBytes(3).toString("hex")}-${base}`;
    const goalId = input.goalId !== undefined ? input.goalId : input.taskId && this.deps.goalOf ? await this.deps.goalOf(input.taskId).catch(() => null) : undefined;
    await ws.write(path, input.bytes, { maxBytes: ws.quotaBytes });
    try {
      const artifact = await this.deps.repository.recordArtifact({
        personId: input.personId,
        name: base,
        mimeType: input.mimeType,
        size: input.bytes.byteLength,
        path,
        source: input.source.slice(0, 500),
        createdAt: now,
        ...(input.kind && { kind: input.kind }),
        ...(input.title && { title: input.title.slice(0, 200) }),
        ...(input.taskId !== undefined && { taskId: input.taskId }),
        ...(goalId !== undefined && { goalId }),
        ...(input.taint && { taint: { source: input.taint.source.slice(0, 500) } }),
        ...(input.versionOf && { versionOf: input.versionOf }),
      });
      this.known.set(input.personId, true);
      return artifact;
    } catch (error) {
      await ws.remove(path).catch(() => undefined);
      throw error;
    }
  }

  async load(personId: PersonId, id: ArtifactId): Promise<{ artifact: Artifact; bytes: Buffer } | null> {
    const artifact = await this.deps.repository.getArtifact(id);
    if (artifact === null || artifact.personId !== personId) return null;
    const bytes = await this.workspace(personId).readBytes(artifact.path);
    return { artifact, bytes };
  }

  /** The person's artifacts (each one's latest version), newest first. */
  async list(personId: PersonId, limit: number): Promise<Artifact[]> {
    return (await this.deps.repository.listArtifacts(personId, { limit })).items;
  }

  /** A page of the person's artifacts (each one's latest version), newest first. */
  listPage(personId: PersonId, page: { limit: number; after?: string | undefined }): Promise<{ items: Artifact[]; next?: string }> {
    return this.deps.repository.listArtifacts(personId, { limit: page.limit, ...(page.after !== undefined && { after: page.after }) });
  }

  /** Every version of the artifact `id` belongs to, oldest first; empty when it is not the person's. */
  async versions(personId: PersonId, id: ArtifactId): Promise<Artifact[]> {
    const versions = await this.deps.repository.listArtifactVersions(id);
    return versions[0]?.personId === personId ? versions : [];
  }

  /** The artifact's latest version (or its version `version`) by any version's id; null when not the person's. */
  async version(personId: PersonId, id: ArtifactId, version?: number): Promise<Artifact | null> {
    const versions = await this.versions(personId, id);
    return (version === undefined ? versions.at(-1) : versions.find((v) => v.version === version)) ?? null;
  }

  async loadAttachment(personId: PersonId, id: ArtifactId): Promise<OutboundAttachment | null> {
    const loaded = await this.load(personId, id).catch(() => null);
    return loaded ? { id, name: loaded.artifact.name, mimeType: loaded.artifact.mimeType, bytes: loaded.bytes } : null;
  }

  /** Deletes a version or the whole artifact, with its files. Returns what was deleted (empty: nothing of the person's). */
  async delete(personId: PersonId, id: ArtifactId, scope: "version" | "artifact"): Promise<Artifact[]> {
    const deleted = await this.deps.repository.deleteArtifact(personId, id, scope);
    const ws = this.workspace(personId);
    for (const version of deleted) if (version.path.startsWith(`${ARTIFACTS_FOLDER}/`)) await ws.remove(version.path).catch(() => undefined);
    if (deleted.length > 0) this.known.delete(personId);
    return deleted;
  }
}
