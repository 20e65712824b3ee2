/**
 * Memory: what Familiar learned about a person (facts, preferences, relationships, decisions), each
 * with where it came from, how sure Familiar is and whether untrusted content tainted it. The room
 * holds the records; the memory tools and context assembly use them through the store. It must not
 * decide what to remember: the model does, through the tools.
 */
export { type MemoryItem, type MemoryKind, type MemoryPatch, type NewMemoryItem } from "./records.js";
