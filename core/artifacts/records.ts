/**
 * Artifacts, the files a person keeps (issue 23), in versions: files Familiar made (documents, PDFs,
 * web pages, data, images) or downloaded for the person; the bytes live in the person's workspace
 * (sandbox/artifacts keeps them).
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door.
 */
import type { ArtifactId, GoalId, PersonId, TaskId } from "../ids.js";
import type { Taint } from "../policy/records.js";

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
