/**
 * The local web chat's channel adapter: the mailbox both the old local page and the web app read,
 * typing indicators, and approval cards as buttons. Its HTTP API is in web/local.
 */
export { LocalChannel, LocalChannelNotStartedError } from "./channel.js";
