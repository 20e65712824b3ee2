/**
 * Makes an HTML page self-contained: its workspace images become `data:` URLs, its stylesheets and
 * scripts become inline `<style>` and `<script>`. An artifact keeps the page as it was when made
 * (later changes to the workspace do not change a version), and a page artifact runs under a
 * policy that allows no request at all — inline content and `data:` images are all it can use.
 *
 * References are resolved against the page's folder in the workspace and read through the jail
 * (the caller's reader), never by a host path; absolute URLs (`https:`, `//host`), fragments and
 * anything not found are left as they are (the policy then blocks them). Each inlined file is at
 * most 5 MiB and the page at most 20 MiB.
 *
 * Parsing is htmlparser2's (tag and attribute positions); the rewrite replaces those spans only.
 */
import { posix } from "node:path";
import { Parser } from "htmlparser2";
import { mimeTypeOf } from "./kinds.js";

/** Reads a workspace file by its workspace-relative path; null when missing or refused. */
export type WorkspaceReader = (path: string) => Promise<Buffer | null>;

const MAX_INLINED_BYTES = 5 * 1024 * 1024;
const MAX_PAGE_BYTES = 20 * 1024 * 1024;

interface Edit {
  start: number;
  end: number;
  /** Workspace path to read, and how to turn its bytes into the replacement. */
  path: string;
  replace: (bytes: Buffer, mimeType: string) => string;
}

/** A relative reference's workspace path (null for absolute URLs, fragments, or a path that climbs out). */
export function resolveReference(baseDir: string, reference: string): string | null {
  const ref = reference.trim();
  if (ref === "" || ref.startsWith("#") || ref.startsWith("//") || /^[a-z][a-z0-9+.-]*:/i.test(ref)) return null;
  const clean = ref.split(/[?#]/)[0] ?? "";
  let decoded: string;
  try {
    decoded = decodeURIComponent(clean);
  } catch {
    return null;
  }
  const joined = posix.normalize(posix.join("/", baseDir, decoded));
  if (!joined.startsWith("/") || joined === "/") return null;
  return joined.slice(1);
}

const escapeAttr = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
/** Text inside `<script>`/`<style>` cannot hold its own end tag. */
const escapeRaw = (text: string, tag: string) => text.replace(new RegExp(`</(${tag})`, "gi"), "<\\/$1");

function findEdits(html: string, baseDir: string): Edit[] {
  const edits: Edit[] = [];
  let open: { name: string; attrs: Record<string, string>; start: number; end: number } | null = null;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        open = { name, attrs, start: parser.startIndex, end: parser.endIndex + 1 };
        const src = attrs.src;
        if ((name === "img" || name === "source" || name === "input") && src !== undefined) {
          const path = resolveReference(baseDir, src);
          if (path !== null) {
            edits.push({ start: parser.startIndex, end: parser.endIndex + 1, path, replace: (bytes, type) => `<${name}${rewriteAttrs(attrs, { src: `data:${type};base64,${bytes.toString("base64")}` })}>` });
          }
        }
        if (name === "link" && /\bstylesheet\b/i.test(attrs.rel ?? "") && attrs.href !== undefined) {
          const path = resolveReference(baseDir, attrs.href);
          if (path !== null) edits.push({ start: parser.startIndex, end: parser.endIndex + 1, path, replace: (bytes) => `<style>${escapeRaw(bytes.toString("utf8"), "style")}</style>` });
        }
      },
      onclosetag(name) {
        const tag = open as { name: string; attrs: Record<string, string>; start: number } | null;
        if (name === "script" && tag?.name === "script" && tag.attrs.src !== undefined) {
          const path = resolveReference(baseDir, tag.attrs.src);
          const { src: _src, ...rest } = tag.attrs;
          if (path !== null) edits.push({ start: tag.start, end: parser.endIndex + 1, path, replace: (bytes) => `<script${rewriteAttrs(rest, {})}>${escapeRaw(bytes.toString("utf8"), "script")}</script>` });
        }
        open = null;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return edits;
}

function rewriteAttrs(attrs: Record<string, string>, changes: Record<string, string>): string {
  const all = { ...attrs, ...changes };
  return Object.entries(all)
    .map(([key, value]) => (value === "" ? ` ${key}` : ` ${key}="${escapeAttr(value)}"`))
    .join("");
}

/**
 * Inlines the page's workspace images, stylesheets and scripts. `baseDir` is the page's folder
 * (workspace-relative, `""` for the root). Returns the new HTML and the paths inlined.
 */
export async function bundleHtml(html: string, baseDir: string, read: WorkspaceReader): Promise<{ html: string; inlined: string[] }> {
  const edits = findEdits(html, baseDir);
  let out = "";
  let last = 0;
  let size = html.length;
  const inlined: string[] = [];
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    if (edit.start < last) continue;
    const bytes = await read(edit.path);
    if (bytes === null || bytes.length > MAX_INLINED_BYTES || size + bytes.length * 1.4 > MAX_PAGE_BYTES) continue;
    const replacement = edit.replace(bytes, mimeTypeOf(edit.path));
    out += html.slice(last, edit.start) + replacement;
    last = edit.end;
    size += replacement.length;
    inlined.push(edit.path);
  }
  return { html: out + html.slice(last), inlined };
}
