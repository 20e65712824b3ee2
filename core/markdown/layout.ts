import { inlineText, type Block, type Inline, type ListItem } from "./ir.js";

/**
 * IR → laid-out text: one string of what the reader sees, cut into runs that each carry the formats
 * around them. Messengers have no block elements besides code blocks and quotes, so lists, headings,
 * rules and tables become lines of text here (bullets, numbers, indentation), following the
 * platform's `LayoutRules`. Keeping text and formats apart is what lets the splitter cut anywhere
 * and every emitter close and reopen formats on its own.
 */

/**
 * One format. `heading` marks a line as a heading (Discord's `#`); `pre` is a code block with its
 * language; `quote` a block quote (never nested: messengers show one level).
 */
export type Format =
  | { kind: "strong" | "emphasis" | "strike" | "code" | "quote" }
  | { kind: "link"; href: string }
  | { kind: "pre"; language: string | null }
  | { kind: "heading"; level: number };

/**
 * Text shown with `formats` applied (outermost first). `syntax` marks characters the layout added
 * (bullets, numbering, indentation, rules): shown, but never escaped as if the model had typed them.
 */
export interface Run {
  text: string;
  formats: readonly Format[];
  syntax?: boolean;
}

/** The laid-out message: its runs, their text joined, and where the blank lines between blocks start. */
export interface Laid {
  runs: Run[];
  text: string;
  /** Offsets in `text` of the `\n\n` separating two blocks (the preferred places to cut). Ascending. */
  blockBreaks: number[];
}

/** How a platform shows what it has no native element for. */
export interface LayoutRules {
  /** Marker of an unordered list item ("•", "-"). */
  bullet: string;
  /** Indentation per list nesting level. */
  indent: string;
  /** The format of a heading of `level` (1–6): bold, or a heading line. */
  heading(level: number): Format;
  /** Tables: `lines` = one line per row, cells joined by " | ", header bold; `pre` = an aligned code block, `rule` adds a `---|---` line. */
  table: { kind: "lines" } | { kind: "pre"; rule: boolean };
  /** Whether `href` can be a clickable link; when not, the label is followed by " (href)" so the address stays visible. */
  linkable(href: string): boolean;
}

/** What a horizontal rule becomes. */
export const HORIZONTAL_RULE = "──────────";

/**
 * Script URL schemes: a link to one is shown as its label only. Not a clickable target on any
 * messenger, and showing it as text would invite pasting it into a browser.
 */
const SCRIPT_SCHEME = /^\s*(javascript|vbscript|data):/i;

export function sameFormat(a: Format, b: Format): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "link" && b.kind === "link") return a.href === b.href;
  if (a.kind === "pre" && b.kind === "pre") return a.language === b.language;
  if (a.kind === "heading" && b.kind === "heading") return a.level === b.level;
  return true;
}

const has = (formats: readonly Format[], kind: Format["kind"]): boolean => formats.some((f) => f.kind === kind);
/** `formats` with `format` inside; a kind already open is not opened twice (bold in a bold heading). */
const within = (formats: readonly Format[], format: Format): readonly Format[] => (has(formats, format.kind) ? formats : [...formats, format]);

/** Appends runs, merging neighbours with identical formats; tracks block breaks. */
class Writer {
  readonly runs: Run[] = [];
  readonly blockBreaks: number[] = [];
  length = 0;

  push(text: string, formats: readonly Format[], syntax = false): void {
    if (text === "") return;
    const last = this.runs.at(-1);
    if (last && Boolean(last.syntax) === syntax && last.formats.length === formats.length && last.formats.every((f, i) => sameFormat(f, formats[i]!))) {
      last.text += text;
    } else {
      this.runs.push(syntax ? { text, formats, syntax } : { text, formats });
    }
    this.length += text.length;
  }

  append(other: Writer): void {
    for (const at of other.blockBreaks) this.blockBreaks.push(this.length + at);
    for (const run of other.runs) this.push(run.text, run.formats, Boolean(run.syntax));
  }
}

/** Lays out `blocks` by `rules`. Blocks are separated by one blank line; a block that shows nothing adds none. */
export function layout(blocks: readonly Block[], rules: LayoutRules): Laid {
  const w = new Writer();
  new Layouter(rules).blocks(w, blocks, [], "");
  return { runs: w.runs, text: w.runs.map((r) => r.text).join(""), blockBreaks: w.blockBreaks };
}

class Layouter {
  constructor(private readonly rules: LayoutRules) {}

  blocks(w: Writer, blocks: readonly Block[], formats: readonly Format[], indent: string): void {
    for (const block of blocks) {
      const one = new Writer();
      this.block(one, block, formats, indent);
      if (one.length === 0) continue;
      if (w.length > 0) {
        w.blockBreaks.push(w.length);
        w.push("\n\n", formats);
      }
      w.append(one);
    }
  }

  private block(w: Writer, block: Block, formats: readonly Format[], indent: string): void {
    switch (block.type) {
      case "paragraph":
        w.push(indent, formats, true);
        this.inlines(w, block.content, formats);
        return;
      case "heading":
        w.push(indent, formats, true);
        this.inlines(w, block.content, within(formats, this.rules.heading(block.level)));
        return;
      case "rule":
        w.push(indent + HORIZONTAL_RULE, formats, true);
        return;
      case "code":
        w.push(block.text, [...formats, { kind: "pre", language: block.language }]);
        return;
      case "quote":
        this.blocks(w, block.blocks, within(formats, { kind: "quote" }), indent);
        return;
      case "list":
        this.list(w, block, formats, indent);
        return;
      case "table":
        this.table(w, block, formats, indent);
        return;
    }
  }

  private list(w: Writer, list: Extract<Block, { type: "list" }>, formats: readonly Format[], indent: string): void {
    const gap = list.loose ? "\n\n" : "\n";
    list.items.forEach((item: ListItem, index) => {
      if (index > 0) {
        if (list.loose) w.blockBreaks.push(w.length);
        w.push(gap, formats);
      }
      const marker = list.ordered ? `${list.start + index}.` : this.rules.bullet;
      const check = item.checked === null ? "" : item.checked ? "☑ " : "☐ ";
      w.push(`${indent}${marker} ${check}`, formats, true);
      const inner = indent + this.rules.indent;
      item.blocks.forEach((block, i) => {
        if (block.type === "list") {
          w.push("\n", formats);
          this.list(w, block, formats, inner);
          return;
        }
        if (i > 0) w.push(gap, formats);
        // The first block continues the marker's line; later ones start an indented line (code keeps its own indentation).
        this.block(w, block, formats, i === 0 || block.type === "code" ? "" : inner);
      });
    });
  }

  private table(w: Writer, table: Extract<Block, { type: "table" }>, formats: readonly Format[], indent: string): void {
    if (this.rules.table.kind === "lines") {
      const row = (cells: Inline[][], cellFormats: readonly Format[]): void => {
        w.push(indent, formats, true);
        cells.forEach((cell, i) => {
          if (i > 0) w.push(" | ", formats, true);
          this.inlines(w, cell, cellFormats);
        });
      };
      row(table.header, within(formats, { kind: "strong" }));
      for (const cells of table.rows) {
        w.push("\n", formats);
        row(cells, formats);
      }
      return;
    }
    const rows = [table.header, ...table.rows].map((cells) => cells.map((cell) => this.plain(cell).replace(/\s*\n\s*/g, " ")));
    const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? "").length)));
    const line = (cells: string[]): string => cells.map((cell, col) => cell.padEnd(widths[col] ?? 0)).join(" | ").trimEnd();
    const lines = rows.map(line);
    if (this.rules.table.rule) lines.splice(1, 0, widths.map((width) => "-".repeat(Math.max(width, 1))).join("-|-"));
    w.push(lines.join("\n"), [...formats, { kind: "pre", language: null }]);
  }

  /** Inline content as plain characters, links that cannot be clickable here followed by their address. */
  private plain(content: readonly Inline[]): string {
    const w = new Writer();
    this.inlines(w, content, [{ kind: "link", href: "" }]); // inside a link: no nested link formats, addresses shown
    return w.runs.map((r) => r.text).join("");
  }

  private inlines(w: Writer, content: readonly Inline[], formats: readonly Format[]): void {
    for (const node of content) {
      switch (node.type) {
        case "text":
          w.push(node.text, formats);
          break;
        case "break":
          w.push("\n", formats);
          break;
        case "code":
          w.push(node.text, within(formats, { kind: "code" }));
          break;
        case "strong":
        case "emphasis":
        case "strike":
          this.inlines(w, node.children, within(formats, { kind: node.type }));
          break;
        case "link":
          this.link(w, node, formats);
          break;
      }
    }
  }

  private link(w: Writer, node: Extract<Inline, { type: "link" }>, formats: readonly Format[]): void {
    const label = inlineText(node.children).trim();
    const children: Inline[] = label ? node.children : [{ type: "text", text: node.href }];
    if (SCRIPT_SCHEME.test(node.href)) {
      this.inlines(w, label ? node.children : [], formats);
      return;
    }
    if (!has(formats, "link") && this.rules.linkable(node.href)) {
      this.inlines(w, children, [...formats, { kind: "link", href: node.href }]);
      return;
    }
    this.inlines(w, children, formats);
    if (label && label !== node.href && `mailto:${label}` !== node.href) w.push(` (${node.href})`, formats);
  }
}
