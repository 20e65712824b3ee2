/** The limits the mail worker applies while parsing (the pool adds its own, see parse-pool.ts). */
export interface ParseLimits {
  /** Most MIME parts in one message (mailparser `maxChildNodes`). */
  maxParts: number;
  /** Largest header block of one part, bytes (mailparser `maxHeadSize`). */
  maxHeaderBytes: number;
  /** Longest HTML converted to text, characters. */
  maxHtmlToText: number;
  /** Longest text and HTML posted back, characters (the rest is cut and marked). */
  maxTextChars: number;
  maxHtmlChars: number;
  /** Most attachments listed. */
  maxAttachments: number;
}

