/**
 * Silence tokens: what a model writes when it means "say nothing" — `[SILENT]`, `<silent>`, `{NO_REPLY}`,
 * `(Silence)`, `**[[silent]]**`, `HEARTBEAT_OK`, a bare `SILENT` — in any bracket and any casing
 * (issue 18: a silence token was sent as a message). Recognised by their shape, not from a list of
 * spellings: one identifier-like token (words joined by `_`, `-`, `.` or spaces), alone or at the
 * edge of a text, in brackets of any kind or written as a machine token. Such a token never becomes
 * (part of) a message.
 */

const opening = "[({<«‹【「『〔⟦⟨〈";
const closing = "])}>»›】」』〕⟧⟩〉";

/** Words a silence token is made of ("no reply", "stay silent", "heartbeat ok", "nothing to report"). */
const tokenWords = new Set(
  "silent silence silently quiet quietly mute muted noop nop skip skipped pass none null nil empty idle no not nothing nada nichts rien niente dont don't do reply replies response respond output message send sent speak say said news update updates report reporting to new needed required stay keep remain be ok okay heartbeat ack done end".split(" "),
);
/** A token says "be silent" only with one of these (so `[REPORT]` or `[UPDATE]` alone is a tag, not silence). */
const silenceWords = new Set("silent silence silently quiet quietly mute muted noop nop skip skipped pass none null nil empty idle no not nothing nada nichts rien niente dont don't".split(" "));

/** An identifier-like token: 1–6 words of letters/digits joined by `_ - . :` or single spaces, at most 48 characters. */
const identifier = /^[\p{L}][\p{L}\p{N}']*(?:(?:[_\-.:]+| )[\p{L}\p{N}']+){0,5}$/u;

const decoration = /^[\s*_~`>#|]+|[\s*_~`|]+$/g;
const edgePunctuation = /^[\s.,;:!?¡¿…\-–—]+|[\s.,;:!?¡¿…\-–—]+$/g;

/** Removes markdown decoration and edge punctuation, then any number of matching bracket pairs; says whether it was bracketed. */
function unwrap(text: string): { body: string; bracketed: boolean } {
  let body = text.normalize("NFKC");
  let bracketed = false;
  for (let i = 0; i < 8; i++) {
    const before = body;
    body = body.replace(decoration, "").replace(edgePunctuation, "").replace(decoration, "");
    const o = opening.indexOf(body[0] ?? "");
    if (o >= 0 && body.endsWith(closing[o]!) && body.length >= 2) {
      body = body.slice(1, -1).trim();
      bracketed = true;
    }
    if (body === before) break;
  }
  return { body, bracketed };
}

const wordsOf = (body: string) => body.toLowerCase().split(/[_\-.:\s]+/).filter(Boolean);
const machineToken = (body: string) => /[_]/.test(body) && !/\s/.test(body);
const saysSilence = (body: string) => {
  const words = wordsOf(body);
  return words.length > 0 && words.every((w) => tokenWords.has(w)) && words.some((w) => silenceWords.has(w));
};

/**
 * True when the whole text is one control token: a bracketed identifier (`[SILENT]`, `(Silent)`,
 * `<NO_REPLY>`, `[[silent]]`), a machine token (`NO_REPLY`, `stay_silent`), or bare words that only
 * say "be silent" (`SILENT`, `silence`, `none`). Whitespace, punctuation and markdown around it do
 * not matter.
 */
export function isSilenceToken(text: string): boolean {
  const { body, bracketed } = unwrap(text);
  if (body === "" || body.length > 48 || !identifier.test(body)) return false;
  return bracketed || machineToken(body) || saysSilence(body);
}

/** A bracketed or machine token at the very start or end of a text (with decoration and a separator). */
const edgeToken = new RegExp(
  String.raw`^[\s*_~\x60]*(?:[${escape(opening)}]+\s*([^${escape(closing)}\n]{1,48}?)\s*[${escape(closing)}]+|([\p{L}][\p{L}\p{N}]*(?:_[\p{L}\p{N}]+)+))[\s*_~\x60]*[:.\-–—]?\s*`,
  "u",
);
const edgeTokenEnd = new RegExp(
  String.raw`[\s*_~\x60]*(?:[${escape(opening)}]+\s*([^${escape(opening)}\n]{1,48}?)\s*[${escape(closing)}]+|([\p{L}][\p{L}\p{N}]*(?:_[\p{L}\p{N}]+)+))[\s*_~\x60.!]*$`,
  "u",
);

function escape(chars: string): string {
  return chars.replace(/[\]\[\\^-]/g, "\\$&");
}

/**
 * The text without silence tokens: the whole text when it is one (→ ""), else a token saying "be
 * silent" at its start or end (`[SILENT] nothing new`, `All good. NO_REPLY`) is removed. Tags that do
 * not say silence (`[URGENT] water leak`) stay. Returns the text unchanged when there is none.
 */
export function withoutSilenceTokens(text: string): string {
  if (isSilenceToken(text)) return "";
  let out = text;
  for (let i = 0; i < 4; i++) {
    const start = edgeToken.exec(out);
    const end = edgeTokenEnd.exec(out);
    const startBody = start ? (start[1] ?? start[2] ?? "") : "";
    const endBody = end ? (end[1] ?? end[2] ?? "") : "";
    if (start && identifier.test(startBody.trim()) && saysSilence(startBody)) out = out.slice(start[0].length);
    else if (end && identifier.test(endBody.trim()) && saysSilence(endBody)) out = out.slice(0, end.index);
    else break;
  }
  return out === text ? text : out.trim();
}
