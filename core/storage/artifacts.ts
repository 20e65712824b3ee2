/** The artifact repository port both stores implement (the records are in core/artifacts). */
import type { ArtifactId, PersonId } from "../ids.js";
import type { Artifact, NewArtifact } from "../artifacts/records.js";
import type { Page, PageRequest } from "./page.js";

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
