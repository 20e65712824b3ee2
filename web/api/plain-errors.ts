import type { z } from "zod";

/**
 * A validation failure as sentences for the person reading the page. Schemas facing people give
 * each rule its own sentence (ending in `.`, `?` or `!`), which is used as is; any other issue (a
 * library default such as "Too small: expected string …", or a malformed request the page never
 * sends) reads as "Something in the request was not valid (field)." — never a library's wording.
 */
export function plainErrors(error: z.ZodError): string {
  const sentences = error.issues.map((issue) => {
    if (/[.?!]$/.test(issue.message.trim())) return issue.message.trim();
    const field = issue.path.map(String).join(".");
    return `Something in the request was not valid${field ? ` (${field})` : ""}.`;
  });
  return [...new Set(sentences)].join(" ");
}
