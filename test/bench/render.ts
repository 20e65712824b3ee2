/**
 * Render benchmark: the one markdown → IR → platform renderer on a 14,000-character model answer
 * (paragraphs with bold, italic, code and links; bullet and numbered lists; code blocks; a quote; a
 * table), per platform at its own limit, as the adapters call it. Called by test/bench/run.ts.
 *
 * Emits one line per platform, `render.<platform>`: the answer's length in characters, the parts it
 * makes, and p50/p99/max of one whole render (parse, lay out, split, emit) in ms over `iterations`
 * runs after `warmup` runs.
 */
import { performance } from "node:perf_hooks";
import { renderDiscord, DISCORD_MESSAGE_LIMIT } from "../../bots/discord/render.js";
import { layoutMessage, SLACK_LIMITS } from "../../bots/slack/layout.js";
import { renderSlackPlain } from "../../bots/slack/render.js";
import { renderTelegram, renderTelegramPlain, TELEGRAM_TEXT_LIMIT } from "../../bots/telegram/render.js";
import { renderWhatsApp, WHATSAPP_MESSAGE_LIMIT } from "../../bots/whatsapp/render.js";
import { spread } from "./measure.js";

const warmup = 20;
const iterations = 200;
const answerChars = 14_000;

/** A model-like answer of exactly `chars` characters. */
export function longAnswer(chars = answerChars): string {
  const blocks: string[] = [];
  for (let i = 0; blocks.join("\n\n").length < chars; i++) {
    blocks.push(`## Step ${i}: check the <logs> & notes`);
    blocks.push(`Paragraph ${i} has **bold words**, _a little emphasis_, \`code ${i}\` and a [link](https://example.com/docs/${i}?a=1&b=2). ${"It goes on for a while, as answers do. ".repeat(4)}`);
    blocks.push(Array.from({ length: 4 }, (_, k) => `- point ${i}.${k} with ~~old~~ **new** value <${k}>`).join("\n") + `\n  - nested under ${i}`);
    if (i % 3 === 0) blocks.push("```ts\n" + Array.from({ length: 8 }, (_, k) => `const v${k} = a < b && c > d; // line ${k}`).join("\n") + "\n```");
    if (i % 4 === 0) blocks.push(`> Quoted note ${i}: keep *this* in mind & move on.`);
    if (i % 5 === 0) blocks.push(`| item | value |\n|---|---|\n| a${i} | ${i} |\n| b${i} | ${i * 2} |`);
    blocks.push(`1. first ${i}\n2. second ${i}\n3. third ${i}`);
  }
  const text = blocks.join("\n\n");
  return text.length >= chars ? text.slice(0, chars) : text.padEnd(chars, ".");
}

function time(render: () => number): { parts: number } & Record<string, number> {
  let parts = 0;
  for (let i = 0; i < warmup; i++) render();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    parts = render();
    samples.push(performance.now() - t0);
  }
  return { parts, ...spread(samples, "_ms") };
}

export async function bench(emit: (line: Record<string, unknown>) => void): Promise<void> {
  const text = longAnswer();
  const platforms: [string, () => number][] = [
    ["telegram", () => renderTelegram(text, TELEGRAM_TEXT_LIMIT).length],
    ["discord", () => renderDiscord(text, DISCORD_MESSAGE_LIMIT).length],
    ["whatsapp", () => renderWhatsApp(text, WHATSAPP_MESSAGE_LIMIT).length],
    ["slack", () => layoutMessage({ text, buttons: [] }, SLACK_LIMITS).length],
    ["telegram_plain", () => renderTelegramPlain(text, TELEGRAM_TEXT_LIMIT).length],
    ["slack_plain", () => renderSlackPlain(text, SLACK_LIMITS.plainChars).length],
  ];
  for (const [name, render] of platforms) emit({ bench: `render.${name}`, chars: text.length, iterations, ...time(render) });
}
