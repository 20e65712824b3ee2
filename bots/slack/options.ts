/** The Slack channel's settings, the path it answers on, and Bolt's logger on top of ours. */
import { LogLevel, type Logger as BoltLogger } from "@slack/bolt";
import type { Router } from "express";
import type { Logger } from "../../core/log/index.js";
import type { RefusalSink } from "../../web/http/index.js";
import type { SlackLayoutLimits } from "./layout.js";

/** Path of the Events API and interactivity request URL on our HTTP server. */
export const SLACK_EVENTS_PATH = "/slack/events";

/** Whatever mounts an express router on the process's one HTTP server (`HttpServer` in web/http). */
export interface RouterHost {
  mount(router: Router, path?: string): void;
}

/** What `createSlackChannel` needs, straight from settings. */
export interface SlackChannelOptions {
  /** SLACK_BOT_TOKEN (`xoxb-…`): every Web API call. */
  botToken: string;
  /** SLACK_SIGNING_SECRET: verifies HTTP requests on `/slack/events` (HTTP mode). */
  signingSecret?: string;
  /** SLACK_APP_TOKEN (`xapp-…`): Socket Mode. When set, Socket Mode is used and nothing is mounted. */
  appToken?: string;
  /** SLACK_API_URL: Web API base ending in `/api/` (default Slack's own). */
  apiUrl?: string;
  /** Channel ids (C…/G…) from ALLOW_GROUPS whose @-mentions Familiar reads; DMs always pass. */
  allowGroups?: readonly string[];
  /** The HTTP server to mount `/slack/events` on (required in HTTP mode). */
  http?: RouterHost;
  /** Told about refused HTTP requests (bad signature, stale, too large or too deep) for the audit log. */
  onRefused?: RefusalSink;
  logger: Logger;
  /** Message layout limits (tests); defaults to `SLACK_LIMITS`. */
  limits?: Partial<SlackLayoutLimits>;
  /** Web API request timeout in ms (default 30,000). */
  requestTimeoutMs?: number;
}

/** Bolt's logger interface on top of our pino logger (Bolt logs strings; levels map one to one). */
export function boltLogger(logger: Logger): BoltLogger {
  let level: LogLevel = LogLevel.INFO;
  const text = (msg: unknown[]) => msg.map((m) => (typeof m === "string" ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(" ");
  return {
    debug: (...msg: unknown[]) => logger.debug(text(msg)),
    info: (...msg: unknown[]) => logger.info(text(msg)),
    warn: (...msg: unknown[]) => logger.warn(text(msg)),
    error: (...msg: unknown[]) => logger.error(text(msg)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
