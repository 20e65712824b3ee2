/**
 * Splitting rendered text into platform messages, shared by the renderers that build their text from
 * markdown tokens (Discord, WhatsApp). A renderer turns markdown into blocks of pieces; these helpers
 * pack blocks into parts within a character limit, breaking between blocks first, then between
 * pieces (words, formatted runs), never inside a piece unless it alone is longer than the limit.
 */

/** A piece of rendered text that must stay whole; `fallback` are smaller pieces used if it cannot fit. */
export interface Piece {
  text: string;
  fallback?: Piece[];
}

/** Plain text → one piece per word, each keeping its trailing whitespace (break points between them). */
export function words(text: string): Piece[] {
  return (text.match(/\S+\s*|\s+/g) ?? []).map((w) => ({ text: w }));
}

/** A formatted run (`*bold*`): whole when it fits, else its inner pieces. */
export function wrapPieces(marker: string, inner: Piece[]): Piece {
  return { text: `${marker}${inner.map((p) => p.text).join("")}${marker}`, fallback: inner };
}

/** Splits pieces into chunks of at most `limit` characters (trimmed), breaking between pieces. */
export function splitPieces(pieces: Piece[], limit: number): string[] {
  const chunks: string[] = [];
  let current = "";
  const add = (piece: Piece): void => {
    if ((current + piece.text).trimEnd().length <= limit) {
      current += piece.text;
    } else if (piece.text.trim().length > limit) {
      // Too long to keep whole even in a part of its own: use its smaller pieces, or cut plain text.
      if (piece.fallback?.length) for (const p of piece.fallback) add(p);
      else for (let i = 0; i < piece.text.length; i += limit) add({ text: piece.text.slice(i, i + limit) });
    } else {
      if (current.trim()) chunks.push(current.trim());
      current = piece.text.trimStart();
    }
  };
  for (const piece of pieces) add(piece);
  if (current.trim()) chunks.push(current.trim());
  return chunks;
}

/**
 * Packs blocks into parts of at most `limit` characters, in order: whole blocks joined by a blank
 * line while they fit; a block longer than the limit is split with `split` (which must return
 * chunks within the limit).
 */
export function packBlocks<B>(blocks: readonly B[], limit: number, render: { text(block: B): string; split(block: B, limit: number): string[] }): string[] {
  const parts: string[] = [];
  let current = "";
  for (const block of blocks) {
    const text = render.text(block).trim();
    if (!text) continue;
    const joined = current ? `${current}\n\n${text}` : text;
    if (joined.length <= limit) {
      current = joined;
      continue;
    }
    if (current.trim()) parts.push(current.trim());
    current = "";
    if (text.length <= limit) {
      current = text;
      continue;
    }
    const chunks = render.split(block, limit);
    parts.push(...chunks.slice(0, -1));
    current = chunks.at(-1) ?? "";
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** Plain text split into chunks of at most `limit` characters, between words where possible. */
export function splitPlain(text: string, limit: number): string[] {
  return splitPieces(words(text), Math.max(1, Math.floor(limit)));
}
