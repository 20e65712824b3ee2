import fc from "fast-check";

/**
 * Random model-like markdown for the renderers' property tests: paragraphs with bold, italic,
 * strike, code, links (clickable, relative, mail, script), long words and URLs; headings; nested,
 * numbered and task lists; code blocks with languages; quotes; rules; tables. `extra` adds
 * characters to the words (markdown's own punctuation on platforms that can escape it).
 */
export function markdownArbitrary(extra: readonly string[] = []): fc.Arbitrary<string> {
  const plainWord = fc.oneof(
    { weight: 8, arbitrary: fc.stringMatching(/^[a-zA-Z0-9]{1,9}$/) },
    { weight: 3, arbitrary: fc.constantFrom("<NAME>", "&", "a&b", "<3", "x<y>z", "&amp;", "😀", "👍🏽", "🇫🇷", "é", "(mon-fri).", "#42!", "1 < 2", ...extra) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("a", "b", "7", "😀", "&", "<", "é"), minLength: 40, maxLength: 260 }) },
  );
  const words = (max: number) => fc.array(plainWord, { minLength: 1, maxLength: max }).map((ws) => ws.join(" "));
  const href = fc.oneof(
    fc.stringMatching(/^[a-z0-9]{0,12}$/).map((path) => `https://example.com/${path}?a=1&b=2`),
    fc.constantFrom("/docs/page", "mailto:ada@example.com", "javascript:alert(1)", "tg://user?id=1"),
  );
  const span = fc.oneof(
    { weight: 6, arbitrary: words(6) },
    { weight: 2, arbitrary: words(5).map((w) => `**${w}**`) },
    { weight: 2, arbitrary: words(5).map((w) => `_${w}_`) },
    { weight: 1, arbitrary: words(4).map((w) => `~~${w}~~`) },
    { weight: 1, arbitrary: fc.tuple(words(2), words(2)).map(([a, b]) => `**${a} _${b}_**`) },
    { weight: 2, arbitrary: words(3).map((w) => `\`${w.replace(/`/g, "'")}\``) },
    { weight: 2, arbitrary: fc.tuple(words(4), href).map(([label, url]) => `[${label.replace(/[[\]]/g, "")}](${url})`) },
    { weight: 1, arbitrary: href.filter((u) => u.startsWith("https://")).map((u) => `<${u}>`) },
  );
  const inline = (max: number) => fc.array(span, { minLength: 1, maxLength: max }).map((spans) => spans.join(" "));
  const paragraph = fc.array(inline(8), { minLength: 1, maxLength: 3 }).map((lines) => lines.join("\n"));
  const heading = fc.tuple(fc.integer({ min: 1, max: 6 }), inline(4)).map(([level, text]) => `${"#".repeat(level)} ${text}`);
  const item = fc.tuple(fc.constantFrom("", "[ ] ", "[x] "), inline(5));
  const list = fc
    .tuple(fc.boolean(), fc.array(fc.tuple(item, fc.array(inline(4), { maxLength: 2 })), { minLength: 1, maxLength: 6 }))
    .map(([ordered, items]) =>
      items
        .map(([[task, text], nested], i) => {
          const marker = ordered ? `${i + 1}.` : "-";
          const pad = " ".repeat(marker.length + 1);
          return [`${marker} ${task}${text}`, ...nested.map((n) => `${pad}- ${n}`)].join("\n");
        })
        .join("\n"),
    );
  const codeLine = fc.oneof(fc.stringMatching(/^ {0,4}[a-z(){};=<>&*_]{0,70}$/), fc.constant("```"), fc.constant(""));
  const code = fc
    .tuple(fc.constantFrom("", "ts", "python", "c++"), fc.array(codeLine, { minLength: 1, maxLength: 25 }))
    .map(([lang, lines]) => `~~~${lang}\n${lines.join("\n")}\n~~~`);
  const quote = fc.array(inline(6), { minLength: 1, maxLength: 4 }).map((lines) => lines.map((l) => `> ${l}`).join("\n"));
  const table = fc
    .tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 5 }))
    .chain(([cols, rows]) => fc.array(fc.array(inline(2).map((c) => c.replace(/\|/g, "/")), { minLength: cols, maxLength: cols }), { minLength: rows + 1, maxLength: rows + 1 }))
    .map((rows) => [rows[0]!, rows[0]!.map(() => "---"), ...rows.slice(1)].map((r) => `| ${r.join(" | ")} |`).join("\n"));
  const block = fc.oneof(
    { weight: 6, arbitrary: paragraph },
    { weight: 2, arbitrary: heading },
    { weight: 3, arbitrary: list },
    { weight: 2, arbitrary: code },
    { weight: 2, arbitrary: quote },
    { weight: 1, arbitrary: fc.constant("---") },
    { weight: 1, arbitrary: table },
  );
  return fc.array(block, { minLength: 1, maxLength: 14 }).map((blocks) => blocks.join("\n\n"));
}
