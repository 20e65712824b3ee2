import { posix } from "node:path";
import type { ContextMedia } from "../../core/context/index.js";
import type { PersonId } from "../../core/ids.js";
import type { ReceivedFiles } from "../../core/inbound/index.js";
import type { ModelCapabilities } from "../../core/model/index.js";
import { KeyedQueue } from "../../core/scheduling/index.js";
import type { MessageAttachment } from "../../core/conversation/index.js";
import { Workspace, type WorkspaceOptions } from "./tools.js";

/** Largest photo sent to the model inline, bytes (a `data:` URL is a third larger again). */
export const MAX_IMAGE_PART_BYTES = 5 * 1024 * 1024;
/** Names tried after `name.ext` is taken: `name-2.ext` … `name-99.ext`. */
const MAX_NAME_TRIES = 99;

/** Saves per person, one at a time, so the free-name check and the write cannot interleave. */
const saving = new KeyedQueue();

/**
 * Received files in the person's workspace (`DATA_DIR/persons/<id>/workspace/`), through the
 * workspace's public API and so its jail and quota: `save` writes a new file and never replaces one
 * (`photo-2.jpg` when `photo.jpg` holds other bytes — the same bytes, as after a redelivery, are kept
 * once); `read` reads one back within a byte limit. `maxBytes` caps any one file. Errors are the
 * workspace's `JailError`s (`quota_exceeded` when the workspace is full).
 */
export function workspaceReceivedFiles(dataDir: string, maxBytes: number, options: WorkspaceOptions = {}): ReceivedFiles {
  return {
    save(personId: PersonId, folder: string, fileName: string, bytes: Buffer): Promise<string> {
      return saving.run(personId, async () => {
        const workspace = Workspace.of(dataDir, personId, options);
        // Listing the folder creates it and checks it is inside the jail (a linked folder is refused).
        const taken = new Set((await workspace.list(folder)).map((entry) => entry.replace(/\/$/, "")));
        const ext = posix.extname(fileName);
        const stem = fileName.slice(0, fileName.length - ext.length) || "file";
        for (let n = 1; n <= MAX_NAME_TRIES; n++) {
          const name = n === 1 ? `${stem}${ext}` : `${stem}-${n}${ext}`;
          const path = posix.join(folder, name);
          if (taken.has(name)) {
            if (await sameBytes(workspace, path, bytes)) return path;
            continue;
          }
          await workspace.write(path, bytes, { maxBytes });
          return path;
        }
        throw new Error(`${folder}/${fileName}: ${MAX_NAME_TRIES} files of that name exist already`);
      });
    },
    read(personId: PersonId, path: string, limit: number): Promise<Buffer> {
      return Workspace.of(dataDir, personId, options).readBytes(path, Math.min(limit, maxBytes));
    },
  };
}

/** Whether the regular file at `path` holds exactly `bytes` (anything else in the way: false). */
async function sameBytes(workspace: Workspace, path: string, bytes: Buffer): Promise<boolean> {
  try {
    // At most as many bytes as the new file has: a larger file is refused as too large, so not the same.
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
