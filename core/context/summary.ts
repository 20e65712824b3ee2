import type { Logger } from "../log/index.js";
import type { ModelClient } from "../model/index.js";
import type { Store } from "../storage/index.js";
import type { ConversationMessage } from "../conversation/records.js";
import type { Person } from "../persons/records.js";
import { messageText } from "./attachments.js";
import type { TokenCounter } from "./tokens.js";

/** Summarize once this many messages sit between the summary and the verbatim window. */
const MIN_BATCH = 12;
/** Tokens of conversation folded into the summary per model call. */
const CHUNK_TOKENS = 3_000;
/** Most chunks folded in one run (a backlog is caught up over several turns). */
const MAX_CHUNKS_PER_RUN = 4;
/** Length the summary is asked to stay within. */
const SUMMARY_WORDS = 350;

/**
 * Updates the person's rolling summary incrementally: only the messages after the stored summary
 * and before `keepFromSeq` (the turns still shown verbatim) are folded into it, a bounded chunk per
 * model call. The summary is never recomputed from the whole history. The save is a
 * compare-and-set on the covered seq, so two summarizers cannot overwrite each other.
 *
 * Returns the seq now covered (unchanged when there was too little to fold or the model failed).
 */
export async function updateRollingSummary(input: {
  store: Store;
  model: ModelClient;
  tokens: TokenCounter;
  person: Person;
  keepFromSeq: number;
}): Promise<number> {
  const { store, model, tokens, person, keepFromSeq } = input;
  const existing = await store.conversation.getSummary(person.id);
  let upToSeq = existing?.upToSeq ?? 0;
  let text = existing?.text ?? "";
  if (keepFromSeq - 1 - upToSeq < MIN_BATCH) return upToSeq;

  for (let chunk = 0; chunk < MAX_CHUNKS_PER_RUN && keepFromSeq - 1 > upToSeq; chunk++) {
    const candidates = await store.conversation.listMessagesAfter(person.id, upToSeq, 200);
    const batch: ConversationMessage[] = [];
    let used = 0;
    for (const m of candidates) {
      if (m.seq >= keepFromSeq) break;
      const n = await tokens.countCached(m.id, messageText(m));
      if (batch.length > 0 && used + n > CHUNK_TOKENS) break;
      batch.push(m);
      used += n;
    }
    if (batch.length === 0) break;
    const transcript = batch
      .map((m) => `${m.role === "user" ? person.displayName : "Familiar"}: ${clip(messageText(m), 4_000)}`)
      .join("\n");
    const response = await model.complete({
      messages: [
        {
          role: "system",
          content:
            `You maintain a running summary of a long conversation between ${person.displayName} and their assistant Familiar. ` +
            `Fold the new messages into the summary. Keep durable facts, open requests, decisions and commitments; drop small talk. ` +
            `Write plain prose or short bullets, at most ${SUMMARY_WORDS} words. Answer with the updated summary only.`,
        },
        { role: "user", content: `Summary so far:\n${text || "(none yet)"}\n\nNew messages:\n${transcript}` },
      ],
      temperature: 0,
      maxTokens: 800,
    });
    const next = response.content?.trim();
    if (!next) break;
    const newUpTo = batch.at(-1)!.seq;
    const saved = await store.conversation.saveSummary({ personId: person.id, upToSeq: newUpTo, text: next }, existing || chunk > 0 ? upToSeq : null);
    if (!saved) break;
    upToSeq = newUpTo;
    text = next;
  }
  return upToSeq;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} […]`;
}

/** What `RollingSummaries` needs. */
export interface RollingSummariesDeps {
  store: Store;
  /** Counts the summary's calls against the person's daily model budget (a refused call only leaves the summary as it was). */
  meter?: (person: Person, model: ModelClient) => ModelClient;
  /** The model in use now, or null while none is configured. */
  model: () => ModelClient | null;
  tokens: TokenCounter;
  logger: Logger;
}

/** The rolling summary kept up to date after turns, best effort: without a model nothing happens, a failure only logs. */
export class RollingSummaries {
  constructor(private readonly deps: RollingSummariesDeps) {}

  /** Folds `person`'s older turns (before `keepFromSeq`) into the rolling summary (see `updateRollingSummary`). */
  summarize = async (person: Person, keepFromSeq: number): Promise<void> => {
    const model = this.deps.model();
    if (!model) return;
    try {
      await updateRollingSummary({ store: this.deps.store, model: this.deps.meter ? this.deps.meter(person, model) : model, tokens: this.deps.tokens, person, keepFromSeq });
    } catch (err) {
      this.deps.logger.warn({ err, personId: person.id }, "rolling summary not updated");
    }
  };
}
