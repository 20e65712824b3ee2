/**
 * Artifacts, the files a person keeps (issue 23): their record, in versions, and the repository
 * port both stores implement. Files Familiar made (documents, PDFs, web pages, data, images) or
 * downloaded for the person; the bytes live in the person's workspace.
 */
import type { ArtifactId, GoalId, PersonId, TaskId } from "../ids.js";
import type { Page, PageRequest, Taint } from "./types.js";


/**
 * The kinds of artifact (issue 23): `document` (markdown), `pdf`, `page` (HTML with its own script
 * and style: a small web app), `data` (CSV, JSON, text …), `image`.
 */
export type ArtifactKind = "document" | "pdf" | "page" | "data" | "image";

/** The kind a file of this MIME type is kept as when no kind is given (screenshots, downloads, older rows). */
export function artifactKindOf(mimeType: string): ArtifactKind {
  if (mimeType === "text/markdown") return "document";
  if (mimeType === "application/pdf") return "pdf";
  if (mimeType === "text/html") return "page";
  if (/^image\/(png|jpeg|gif|webp|svg\+xml)$/.test(mimeType)) return "image";
  return "data";
}

/**
 * One version of a file the person keeps: a screenshot, a download, or something Familiar made (a
 * document, a PDF, a small web page, a data file, an image). An artifact is the series of its
 * versions: an update adds a version, older ones stay until deleted; lists show the latest. The
 * bytes live in the workspace at `path`; the record holds what a list or a message needs.
 */
export interface Artifact {
  /** This version's id (what a message attaches). */
  id: ArtifactId;
  personId: PersonId;
  /** The artifact this is a version of: its first version's id (equal to `id` for a first version). */
  seriesId: ArtifactId;
  /** 1 for the first version, then 2, 3, … */
  version: number;
  /** Whether this is the artifact's newest version. */
  latest: boolean;
  kind: ArtifactKind;
  /** What the person sees, e.g. `Expenses — March`. */
  title: string;
  /** File name shown to the person, e.g. `screenshot-shop.example.png`. */
  name: string;
  /** MIME type, e.g. `image/png`, `application/pdf`. */
  mimeType: string;
  /** Size in bytes. */
  size: number;
  /** Workspace-relative path of the file, e.g. `artifacts/art_…-screenshot.png`. */
  path: string;
  /** Where it came from, in words: `screenshot of https://…`, `download from https://…`, `made by Familiar`. */
  source: string;
  /** The task and goal it was made for (null in a plain conversation turn). */
  taskId: TaskId | null;
  goalId: GoalId | null;
  /** Made from untrusted content (a tainted activation, a tainted file, a page): its source; null when not. */
  taint: Taint | null;
  createdAt: Date;
}

/**
 * A version to record: the first of a new artifact, or — with `versionOf` (any version's id) — the
 * next version of that artifact (same person; its series, kind default and goal carry over).
 */
export type NewArtifact = Pick<Artifact, "personId" | "name" | "mimeType" | "size" | "path" | "source" | "createdAt"> &
  Partial<Pick<Artifact, "kind" | "title" | "taskId" | "goalId" | "taint">> & { versionOf?: ArtifactId };

/** Files a person keeps, in versions (their bytes live in the person's workspace). */
export interface ArtifactRepository {
  /**
   * Records a version: a new artifact, or with `versionOf` the next version of that artifact (it
   * becomes the latest). @throws NotFoundError when `versionOf` is not an artifact of that person
   */
  recordArtifact(input: NewArtifact): Promise<Artifact>;
  /** Any version by its id. */
  getArtifact(id: ArtifactId): Promise<Artifact | null>;
  /** The person's artifacts (each one's latest version), newest first. */
  listArtifacts(personId: PersonId, page?: PageRequest): Promise<Page<Artifact>>;
  /** Every version of the artifact `seriesId` belongs to, oldest first (empty when there is none). */
  listArtifactVersions(seriesId: ArtifactId): Promise<Artifact[]>;
  /**
   * Deletes one version (`scope: "version"`; the one before becomes the latest) or the whole
   * artifact. Returns the versions deleted (their files are the caller's to remove); empty when
   * `id` is not an artifact of that person.
   */
  deleteArtifact(personId: PersonId, id: ArtifactId, scope: "version" | "artifact"): Promise<Artifact[]>;
}
