/** Why an attachment's bytes could not be had. */
export type AttachmentFailure = "too_large" | "unavailable" | "download_failed";

/**
 * Thrown by `InboundAttachment.fetch`. `too_large` carries the limit and, when known, the size in
 * bytes. Messages never contain a URL (Telegram's file URLs carry the bot token).
 */
export class AttachmentError extends Error {
  readonly code = "CHANNEL_ERROR" as const;
  constructor(
    readonly reason: AttachmentFailure,
    message: string,
    readonly details: { size?: number; limit?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AttachmentError";
  }
}

/** "48.2 MB", "512 KB", "300 bytes" (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / (1024 * 1024);
  return `${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
}
