import type { OutboundContent } from "../../core/channels/index.js";
import type { Button } from "../../core/channels/index.js";
import { renderSlackSections } from "./render.js";

/**
 * Lays rendered mrkdwn out as Slack messages of Block Kit section blocks.
 *
 * Slack limits (Block Kit reference): a section's text is at most 3,000 characters; a message has at
 * most 50 blocks; an actions block holds at most 25 elements; a button's `action_id` is at most 255
 * characters, its `value` at most 2,000 and its plain-text label at most 75. Slack also rejects long
 * block messages with `msg_blocks_too_long` well below those totals, so the per-message budget here
 * is deliberately conservative (12,000 characters of section text, 45 blocks).
 */
export interface SlackLayoutLimits {
  /** Characters of mrkdwn per section block (Slack: 3,000). */
  sectionChars: number;
  /** Characters of section text per message (conservative; Slack rejects long block messages). */
  messageChars: number;
  /** Section blocks per message (Slack: 50 blocks in all; the rest is left for actions blocks). */
  messageSections: number;
  /** Characters of a plain-text message (after a rejection); also the plain_text section carrying buttons, so ≤ 3,000. */
  plainChars: number;
}

/** The limits `render` uses unless told otherwise. */
export const SLACK_LIMITS: SlackLayoutLimits = { sectionChars: 3_000, messageChars: 12_000, messageSections: 45, plainChars: 3_000 };

/** Slack: at most 25 elements per actions block. */
const ACTIONS_PER_BLOCK = 25;
/** Slack: a button's plain-text label is at most 75 characters. */
const BUTTON_LABEL_CHARS = 75;
/** Our buttons' `action_id`s start with this, so presses on anything else are not ours. */
export const ACTION_ID_PREFIX = "familiar:";
/** Notification fallback (`text`) length; the blocks carry the full content. */
const FALLBACK_CHARS = 150;

export interface SectionBlock {
  type: "section";
  text: { type: "mrkdwn"; text: string };
}
export interface ActionsBlock {
  type: "actions";
  elements: { type: "button"; action_id: string; value: string; text: { type: "plain_text"; text: string; emoji: boolean } }[];
}
export type SlackBlock = SectionBlock | ActionsBlock;

/** One `chat.postMessage` payload: blocks plus the plain `text` Slack shows in notifications. */
export interface SlackMessagePart {
  text: string;
  blocks: SlackBlock[];
  /** The sections' mrkdwn. */
  sections: string[];
  /** The message as plain text (links with their address), for a plain-text re-send. */
  plain: string;
}

/**
 * Renders `content` and packs its sections into messages in order; buttons go on the last message
 * only. Returns `[]` for content with neither text nor buttons (nothing to send).
 */
export function layoutMessage(content: OutboundContent, limits: SlackLayoutLimits = SLACK_LIMITS): SlackMessagePart[] {
  const sections = renderSlackSections(content.text, limits.sectionChars);
  const messages: (typeof sections)[] = [];
  let current: typeof sections = [];
  let size = 0;
  for (const section of sections) {
    if (current.length > 0 && (size + section.body.length > limits.messageChars || current.length >= limits.messageSections)) {
      messages.push(current);
      current = [];
      size = 0;
    }
    current.push(section);
    size += section.body.length;
  }
  if (current.length > 0 || content.buttons.length > 0) messages.push(current);
  return messages.map((secs, i) => {
    const blocks: SlackBlock[] = secs.map((s) => ({ type: "section", text: { type: "mrkdwn", text: s.body } }));
    const last = i === messages.length - 1;
    if (last) blocks.push(...actionsBlocks(content.buttons));
    const plain = secs.map((s) => s.plain).join("\n\n");
    const fallback = (messages.length > 1 ? `(${i + 1}/${messages.length}) ` : "") + plain.replace(/\s+/g, " ").trim();
    return { text: truncate(plain ? fallback : content.buttons.map((b) => b.label).join(" · "), FALLBACK_CHARS), blocks, sections: secs.map((s) => s.body), plain };
  });
}

/** Buttons as actions blocks of ≤ 25 buttons; `value` is the opaque Button id (≤ 32 chars). */
export function actionsBlocks(buttons: Button[]): ActionsBlock[] {
  const blocks: ActionsBlock[] = [];
  buttons.forEach((button, i) => {
    if (i % ACTIONS_PER_BLOCK === 0) blocks.push({ type: "actions", elements: [] });
    blocks.at(-1)!.elements.push({
      type: "button",
      action_id: `${ACTION_ID_PREFIX}${i}`,
      value: button.id,
      text: { type: "plain_text", text: truncate(button.label.trim() || button.id, BUTTON_LABEL_CHARS), emoji: true },
    });
  });
  return blocks;
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}
