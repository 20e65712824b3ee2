/**
 * Artifacts: the files a person keeps (documents, PDFs, small web pages, data, images), in versions.
 * The room holds the records and the kind a MIME type is kept as; the bytes and the artifact tools
 * live in sandbox/artifacts, the repository port in core/storage. It must not touch the file system.
 */
export { artifactKindOf, type Artifact, type ArtifactKind, type NewArtifact } from "./records.js";
