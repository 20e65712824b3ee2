import { posix } from "node:path";
import type { ContextMedia } from "../core/context/attachments.js";
import type { PersonId } from "../core/ids.js";
import type { ReceivedFiles } from "../core/inbound/media.js";
import type { ModelCapabilities } from "../core/model/capabilities.js";
import type { MessageAttachment } from "../core/storage/types.js";
import { Workspace } from "./workspace.js";

/** Largest photo sent to the model inline, bytes (a `data:` URL is a third larger again). */
export const MAX_IMAGE_PART_BYTES = 5 * 1024 * 1024;
/** Names tried after `name.ext` is taken: `name-2.ext` … `name-99.ext`. */
const MAX_NAME_TRIES = 99;

/**
 * Received files in the person's workspace (`DATA_DIR/persons/<id>/workspace/`), through the
 * workspace's path jail: `save` creates a new file (never overwriting; `photo-2.jpg` when
 * `photo.jpg` holds other bytes — the same bytes, as after a redelivery, are kept once), `read`
 * reads one back within a byte limit. `maxBytes` caps any one file.
 */
export function workspaceReceivedFiles(dataDir: string, maxBytes: number): ReceivedFiles {
  return {
    async save(personId: PersonId, folder: string, fileName: string, bytes: Buffer): Promise<string> {
      const workspace = Workspace.of(dataDir, personId);
      const ext = posix.extname(fileName);
      const stem = fileName.slice(0, fileName.length - ext.length) || "file";
      for (let n = 1; n <= MAX_NAME_TRIES; n++) {
        const path = posix.join(folder, n === 1 ? `${stem}${ext}` : `${stem}-${n}${ext}`);
        try {
          await workspace.create(path, bytes, maxBytes);
          return path;
        } catch (err) {
          if (!(err instanceof Error) || !("code" in err) || err.code !== "EEXIST") throw err;
          // The same bytes under this name already (a redelivered message after a crash): keep one copy.
          if (await sameBytes(workspace, path, bytes)) return path;
        }
      }
      throw new Error(`${folder}/${fileName}: ${MAX_NAME_TRIES} files of that name exist already`);
    },
    read(personId: PersonId, path: string, limit: number): Promise<Buffer> {
      return Workspace.of(dataDir, personId).readBytes(path, Math.min(limit, maxBytes));
    },
  };
}

/** Whether the file at `path` holds exactly `bytes`. */
async function sameBytes(workspace: Workspace, path: string, bytes: Buffer): Promise<boolean> {
  try {
    return (await workspace.readBytes(path, bytes.byteLength)).equals(bytes);
  } catch {
    return false;
  }
}

/**
 * The context's view of received photos: shown while the model is not known to refuse images
 * (`ModelCapabilities.vision` is not `no`), read from the workspace as `data:` URLs of at most
 * {@link MAX_IMAGE_PART_BYTES}. A photo that is gone or too large is simply not shown (the
 * model still reads its description).
 */
export function workspaceContextMedia(files: ReceivedFiles, capabilities: ModelCapabilities): ContextMedia {
  return {
    canShowImages: () => capabilities.vision !== "no",
    async imageUrl(personId: PersonId, attachment: MessageAttachment): Promise<string | null> {
      if (!attachment.path || !attachment.mimeType) return null;
      try {
        const bytes = await files.read(personId, attachment.path, MAX_IMAGE_PART_BYTES);
        return `data:${attachment.mimeType};base64,${bytes.toString("base64")}`;
      } catch {
        return null;
      }
    },
  };
}
