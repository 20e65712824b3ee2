import { DeliveryError, filePart, type ChannelAdapter, type OutboundAttachment, type OutboundPart, type RenderOptions } from "../channels/index.js";
import type { ArtifactId, PersonId } from "../ids.js";
import type { DeliveryProgress } from "./records.js";

/**
 * The forms a file part is sent in, tried in order after the platform refuses it: as the platform
 * shows it (a photo for an image), as a plain document, then as a line with a link to the file.
 */
export const fileForms = ["native", "document", "link"] as const;

/** How many refusals of a file part in one form before the next form is tried (a payload refusal moves on at once). */
export const REFUSALS_PER_FORM = 2;

/** Builds a link a person can open to download one of their files (null: no such link can be made here). */
export type FileLinker = (personId: PersonId, artifactId: ArtifactId) => string | null;

/**
 * The parts one attachment is sent as in form `level` (index into {@link fileForms}): the file
 * itself, the file as a document, or the adapter's rendering of a line with a link to it.
 */
export function filePartsAt(level: number, file: OutboundAttachment, adapter: ChannelAdapter, personId: PersonId, linker: FileLinker | undefined, rich: RenderOptions): OutboundPart[] {
  if (level <= 0) return [filePart(file)];
  if (level === 1) return [filePart(file, { asDocument: true })];
  const url = linker?.(personId, file.id) ?? null;
  const text = url
    ? `📎 ${file.name} could not be attached here; here is a link to it: ${url}`
    : `📎 ${file.name} could not be attached here; it is kept with your files in Familiar's web app.`;
  return adapter.render({ text, buttons: [] }, rich);
}

/**
 * After a file part in form `level` failed with `err`: whether to try the next form (saved in
 * `progress.fallback`). A refused payload moves on at once; a transient failure after
 * {@link REFUSALS_PER_FORM} in a row (counted in `progress.refusals`); a rate limit never (it is
 * not the file's fault). Mutates `progress`.
 */
export function stepDownFile(progress: DeliveryProgress, index: number, level: number, err: DeliveryError): boolean {
  if (level >= fileForms.length - 1 || err.outcome === "rate_limited" || err.outcome === "recipient_gone") return false;
  const key = String(index);
  const refusals = { ...(progress.refusals ?? {}) };
  refusals[key] = (refusals[key] ?? 0) + 1;
  const next = err.outcome === "payload_rejected" || refusals[key] >= REFUSALS_PER_FORM;
  if (next) {
    delete refusals[key];
    progress.fallback[key] = level + 1;
  }
  progress.refusals = refusals;
  return next;
}
