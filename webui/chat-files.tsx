import { apiForm } from "./api.js";

/** A file in a chat message, as /api/web/chat gives it (web/api/chat-files.ts serves `url`). */
export interface ChatAttachment {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  url: string;
  /** The artifact's own page. */
  page: string;
}

const INLINE_IMAGE = /^image\/(png|jpeg|gif|webp)$/;

/** A paperclip drawn inline (no emoji font needed). */
function Clip() {
  return (
    <svg class="clip" aria-hidden="true" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
      <path d="M21 11.5l-8.6 8.6a5.5 5.5 0 0 1-7.8-7.8l8.6-8.6a3.7 3.7 0 0 1 5.2 5.2l-8.6 8.6a1.8 1.8 0 0 1-2.6-2.6l7.9-7.9" />
    </svg>
  );
}

/** "48.2 MB", "512 KB", "300 bytes" (as the server words them). */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / (1024 * 1024);
  return `${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
}

/** A message's files: images inline (opening full size), every other file as a download link and a link to its page. */
export function Attachments({ files }: { files: ChatAttachment[] }) {
  return (
    <div class="attachments">
      {files.map((f) =>
        INLINE_IMAGE.test(f.mimeType) ? (
          <a key={f.id} href={f.url} target="_blank" rel="noopener" class="inline-image">
            <img src={f.url} alt={f.name} loading="lazy" />
          </a>
        ) : (
          <span key={f.id} class="file">
            <Clip /> <span class="name">{f.name}</span> <span class="size">({sizeText(f.size)})</span>{" "}
            <a href={`${f.url}?download=1`} download={f.name} aria-label={`Download ${f.name}`}>
              Download
            </a>{" "}
            <a href={f.page} target="_blank" rel="noopener" class="open" aria-label={`Open ${f.name}`}>
              Open
            </a>
          </span>
        ),
      )}
    </div>
  );
}

/** Files chosen for the next message, each removable before sending. */
export function ChosenFiles({ files, onRemove }: { files: File[]; onRemove: (index: number) => void }) {
  if (files.length === 0) return null;
  return (
    <ul class="chosen-files" aria-label="Files to send">
      {files.map((f, i) => (
        <li key={`${f.name}-${i}`}>
          <Clip /> {f.name} <span class="size">({sizeText(f.size)})</span>
          <button type="button" class="link" aria-label={`Remove ${f.name}`} onClick={() => onRemove(i)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The attach button: opens the file picker (several files at once). */
export function AttachButton({ onFiles }: { onFiles: (files: File[]) => void }) {
  return (
    <label class="attach" title="Attach files">
      <span class="visually-hidden">Attach files</span>
      <input
        type="file"
        multiple
        class="visually-hidden"
        onChange={(e) => {
          onFiles([...(e.currentTarget.files ?? [])]);
          e.currentTarget.value = "";
        }}
      />
      <Clip />
    </label>
  );
}

/**
 * Says a message with files: the files up to `maxBytes` are uploaded, the others only named (the
 * server answers for them as for a messenger's file over the limit).
 */
export function sendWithFiles(text: string, clientId: string, files: File[], maxBytes: number | null): Promise<{ notice: string | null }> {
  const form = new FormData();
  form.append("clientMessageId", clientId);
  form.append("text", text);
  const over = files.filter((f) => maxBytes !== null && f.size > maxBytes);
  for (const f of files) if (!over.includes(f)) form.append("file", f, f.name);
  if (over.length > 0) form.append("skipped", JSON.stringify(over.map((f) => ({ name: f.name, type: f.type, size: f.size }))));
  return apiForm<{ notice: string | null }>("/api/web/chat/files", form);
}

/** Whether a logged message of the person is the one this page sent (the log writes a line per file, then the text). */
export function isLoggedAs(logged: string, text: string, files: File[]): boolean {
  if (files.length === 0) return logged === text;
  return files.every((f) => logged.includes(f.name)) && (text === "" || logged.endsWith(text));
}
