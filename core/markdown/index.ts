/**
 * Markdown: the model's markdown parsed once into a small typed intermediate representation, laid
 * out by a platform's rules, written in a markup dialect and split into parts that fit the
 * platform's limits. Shared by the messengers and the web app. A leaf: it imports nothing else of
 * Familiar.
 */
export { boundedAutolink } from "./autolink.js";
export type { Format, LayoutRules, Run } from "./layout.js";
export { writeMarkup, type MarkupDialect } from "./markup.js";
export { PLAIN, renderMarkdown, renderPlain, type Emitter, type RenderedPart } from "./render.js";
