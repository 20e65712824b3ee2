/**
 * Discord DMs (discord.js 14): gateway events in, Discord markdown and buttons out,
 * nonce-idempotent sends. Loaded only when DISCORD_BOT_TOKEN is set.
 */
export { createDiscordChannel } from "./channel.js";
